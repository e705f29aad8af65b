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
 * RIP must already be the address to return to.
 */
export function deliverThroughIdt(c: Cpu, vector: number, errorCode: number, software: boolean): void {
  const gate = readGate(c, vector)
  if (software && gate.dpl < c.cpl)
    throw new CpuFault(Vector.GP, vector * 8 + 2, 0, `int ${vector} denied by gate DPL`)
  if (!gate.present) throw new CpuFault(Vector.NP, vector * 8 + 2, 0, `vector ${vector} gate not present`)
  const oldCpl = c.cpl
  const oldSs = c.ss
  const oldRsp = c.r[9] * TWO_32 + (c.r[8] >>> 0)
  const flags = ((c.eflags & ~ARITH_FLAGS) | arithFlags(c) | RFLAGS_FIXED) >>> 0
  const newCpl = gate.selector & 3
  // Stack switch: an IST stack when the gate names one, RSP0 when privilege rises.
  c.setCpl(0)
  let sp: number
  try {
    if (gate.ist !== 0) sp = c.readLinear(c.trBase + 36 + (gate.ist - 1) * 8)
    else if (newCpl < oldCpl) sp = c.readLinear(c.trBase + 4)
    else sp = oldRsp
    sp = Math.floor(sp / 16) * 16 // the CPU aligns the new frame to 16 bytes
    const frame = [oldSs, oldRsp, flags, c.cs, c.rip]
    if (errorCode >= 0) frame.push(errorCode)
    // Write the whole frame before changing any register.
    let s = sp
    for (const v of frame) {
      s -= 8
      c.write64(s, v | 0, Math.floor(v / TWO_32) | 0)
    }
    sp = s
  } catch (e) {
    c.setCpl(oldCpl)
    throw e
  }
  c.setCpl(newCpl)
  c.r[8] = sp | 0
  c.r[9] = Math.floor(sp / TWO_32) | 0
  c.cs = gate.selector
  if (newCpl < oldCpl) c.ss = 0
  let ef = c.eflags & ~(TF | NT | RF | VM)
  if (gate.type === 0xe) ef &= ~IF
  c.eflags = ef
  c.rip = gate.offset
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
