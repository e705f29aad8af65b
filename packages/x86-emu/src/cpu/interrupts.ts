// Delivering an interrupt or exception through the guest's IDT, and iretq.
// 64-bit gates only: the frame is always SS, RSP, RFLAGS, CS, RIP
// [, error code], on a 16-byte aligned stack (RSP0 or an IST stack).

import type { Cpu } from './cpu.js'
import { CpuFault, Vector } from './exceptions.js'
import { arithFlags, FK_EAGER } from './flags.js'
import { AC, ARITH_FLAGS, IF, IOPL, NT, RF, RFLAGS_FIXED, TF, VM } from './registers.js'

const TWO_32 = 0x1_0000_0000

export interface Gate {
  offset: number
  selector: number
  ist: number
  /** 0xE interrupt gate (clears IF), 0xF trap gate. */
  type: number
  dpl: number
  present: boolean
}

/** Read IDT entry `vector` with supervisor rights. */
export function readGate(c: Cpu, vector: number): Gate {
  if (vector * 16 + 15 > c.idtLimit)
    throw new CpuFault(Vector.GP, vector * 8 + 2, 0, `vector ${vector} beyond the IDT limit`)
  const savedCpl = c.cpl
  c.setCpl(0)
  try {
    const a = c.idtBase + vector * 16
    const w0 = c.read32(a)
    const w1 = c.read32(a + 4)
    const w2 = c.read32(a + 8)
    const offset = (w2 | 0) * TWO_32 + (((w1 & 0xffff0000) | (w0 & 0xffff)) >>> 0)
    return {
      offset,
      selector: (w0 >>> 16) & 0xffff,
      ist: w1 & 7,
      type: (w1 >>> 8) & 0xf,
      dpl: (w1 >>> 13) & 3,
      present: (w1 & 0x8000) !== 0,
    }
  } finally {
    c.setCpl(savedCpl)
  }
}

/**
 * Deliver `vector` through the IDT. `errorCode` < 0 means none is pushed.
 * `software` marks int n / int3 / into, which check the gate's DPL.
 * RIP must already be the address to return to. Every exception and
 * interrupt comes here (two per kprobe hit), so nothing is allocated: the
 * gate is read into locals, the frame written word by word.
 */
export function deliverThroughIdt(c: Cpu, vector: number, errorCode: number, software: boolean): void {
  if (vector * 16 + 15 > c.idtLimit)
    throw new CpuFault(Vector.GP, vector * 8 + 2, 0, `vector ${vector} beyond the IDT limit`)
  const oldCpl = c.cpl
  // The gate, the TSS and the new stack are supervisor accesses; a fault puts CPL back.
  c.setCpl(0)
  let sp: number
  let offset: number
  let selector: number
  let w1: number
  try {
    const a = c.idtBase + vector * 16
    const w0 = c.read32(a)
    w1 = c.read32(a + 4)
    const w2 = c.read32(a + 8)
    offset = (w2 | 0) * TWO_32 + (((w1 & 0xffff0000) | (w0 & 0xffff)) >>> 0)
    selector = (w0 >>> 16) & 0xffff
    if (software && ((w1 >>> 13) & 3) < oldCpl)
      throw new CpuFault(Vector.GP, vector * 8 + 2, 0, `int ${vector} denied by gate DPL`)
    if ((w1 & 0x8000) === 0)
      throw new CpuFault(Vector.NP, vector * 8 + 2, 0, `vector ${vector} gate not present`)
    const ist = w1 & 7
    // Stack switch: an IST stack when the gate names one, RSP0 when privilege rises.
    if (ist !== 0) sp = c.readLinear(c.trBase + 36 + (ist - 1) * 8)
    else if ((selector & 3) < oldCpl) sp = c.readLinear(c.trBase + 4)
    else sp = c.r[9] * TWO_32 + (c.r[8] >>> 0)
    sp = Math.floor(sp / 16) * 16 // the CPU aligns the new frame to 16 bytes
    // Write the whole frame (SS, RSP, RFLAGS, CS, RIP [, error code]) before changing any register.
    const flags = ((c.eflags & ~ARITH_FLAGS) | arithFlags(c) | RFLAGS_FIXED) >>> 0
    const rip = c.rip
    c.write64(sp - 8, c.ss, 0)
    c.write64(sp - 16, c.r[8], c.r[9])
    c.write64(sp - 24, flags | 0, 0)
    c.write64(sp - 32, c.cs, 0)
    c.write64(sp - 40, rip | 0, Math.floor(rip / TWO_32) | 0)
    sp -= 40
    if (errorCode >= 0) {
      sp -= 8
      c.write64(sp, errorCode | 0, Math.floor(errorCode / TWO_32) | 0)
    }
  } catch (e) {
    c.setCpl(oldCpl)
    throw e
  }
  const newCpl = selector & 3
  c.setCpl(newCpl)
  c.r[8] = sp | 0
  c.r[9] = Math.floor(sp / TWO_32) | 0
  c.cs = selector
  if (newCpl < oldCpl) c.ss = 0
  let ef = c.eflags & ~(TF | NT | RF | VM)
  if (((w1 >>> 8) & 0xf) === 0xe) ef &= ~IF
  c.eflags = ef
  c.rip = offset
}

/** iretq: pop RIP, CS, RFLAGS, RSP, SS. */
export function iretq(c: Cpu): void {
  const sp = c.r[9] * TWO_32 + (c.r[8] >>> 0)
  const rip = c.readLinear(sp)
  const cs = c.read64(sp + 8) & 0xffff
  const flags = c.read64(sp + 16)
  const rsp = c.readLinear(sp + 24)
  const ss = c.read64(sp + 32) & 0xffff
  const newCpl = cs & 3
  if (newCpl < c.cpl) throw new CpuFault(Vector.GP, cs & 0xfffc, 0, 'iret to a more privileged level')
  if (!(rip >= -0x8000_0000_0000 && rip < 0x8000_0000_0000))
    throw new CpuFault(Vector.GP, 0, 0, 'iret to a non-canonical address')
  let writable = ARITH_FLAGS | TF | NT | RF | AC | (1 << 21) | (1 << 10) | IF | IOPL
  if (c.cpl !== 0) writable &= ~IOPL
  if (c.cpl > (c.eflags & IOPL) >>> 12) writable &= ~IF
  c.eflags = (c.eflags & ~writable) | (flags & writable) | RFLAGS_FIXED
  c.fop = FK_EAGER
  c.rip = rip
  c.cs = cs
  c.ss = ss
  c.setCpl(newCpl)
  c.r[8] = rsp | 0
  c.r[9] = Math.floor(rsp / TWO_32) | 0
}
