// Atomic read-modify-write instructions: cmpxchg (0F B0/B1), xadd (0F C0/C1),
// cmpxchg8b/cmpxchg16b (0F C7 /1).
//
// vCPUs interleave only at instruction boundaries, so the lock prefix needs
// nothing extra. Memory destinations are read with write permission checked
// and always written back (the old value when a compare fails), as the SDM
// describes; a register destination is left completely alone when the
// compare fails (no zero-extension), like hardware.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { materializeFlags } from '../cpu/flags.js'
import { ZF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { ALU_ADD, ALU_BY_SIZE, ALU_SUB, ALU64 } from './alu.js'
import type { Op } from './op.js'
import {
  compileEa,
  isHigh8,
  memReadAt,
  memWriteAt,
  readGpr,
  readReg,
  writeGpr,
  writeReg,
} from './operands.js'

/** 0F B0/B1 cmpxchg r/m, reg: flags as cmp acc, r/m; equal: r/m = reg; else acc = r/m. */
export function compileCmpxchg(insn: Instruction): Op {
  const size = insn.opcode === 0xb0 ? 1 : insn.operandSize
  const src = readGpr(insn, size)
  const acc = readReg(0, size)
  const setAcc = writeReg(0, size)
  const mem = insn.mod !== 3
  const ea = mem ? compileEa(insn) : null
  const rdm = memReadAt(size, true)
  const wrm = memWriteAt(size)
  const high = !mem && isHigh8(insn, insn.rm, size)
  const rdr = readReg(insn.rm, size, high)
  const wrr = writeReg(insn.rm, size, high)
  if (size === 8) {
    const cmp = ALU64[ALU_SUB]
    return (c) => {
      const a = ea ? ea(c) : 0
      const dlo = ea ? rdm(c, a) : rdr(c)
      const dhi = c.th
      const slo = src(c)
      const shi = c.th
      const alo = acc(c)
      const ahi = c.th
      cmp(c, alo, ahi, dlo, dhi)
      const equal = alo === dlo && ahi === dhi
      if (ea) wrm(c, a, equal ? slo : dlo, equal ? shi : dhi)
      else if (equal) wrr(c, slo, shi)
      if (!equal) setAcc(c, dlo, dhi)
    }
  }
  const cmp = ALU_BY_SIZE[size][ALU_SUB]
  return (c) => {
    const a = ea ? ea(c) : 0
    const d = ea ? rdm(c, a) : rdr(c)
    const s = src(c)
    const v = acc(c)
    cmp(c, v, d)
    const equal = v === d
    if (ea) wrm(c, a, equal ? s : d, 0)
    else if (equal) wrr(c, s, 0)
    if (!equal) setAcc(c, d, 0)
  }
}

/** 0F C0/C1 xadd r/m, reg: reg = old r/m, r/m = sum (written last, so xadd r, r leaves the sum). */
export function compileXadd(insn: Instruction): Op {
  const size = insn.opcode === 0xc0 ? 1 : insn.operandSize
  const src = readGpr(insn, size)
  const setSrc = writeGpr(insn, size)
  const mem = insn.mod !== 3
  const ea = mem ? compileEa(insn) : null
  const rdm = memReadAt(size, true)
  const wrm = memWriteAt(size)
  const high = !mem && isHigh8(insn, insn.rm, size)
  const rdr = readReg(insn.rm, size, high)
  const wrr = writeReg(insn.rm, size, high)
  if (size === 8) {
    const add = ALU64[ALU_ADD]
    return (c) => {
      const a = ea ? ea(c) : 0
      const dlo = ea ? rdm(c, a) : rdr(c)
      const dhi = c.th
      const slo = src(c)
      const lo = add(c, dlo, dhi, slo, c.th)
      const hi = c.th
      if (ea) wrm(c, a, lo, hi)
      setSrc(c, dlo, dhi)
      if (!ea) wrr(c, lo, hi)
    }
  }
  const add = ALU_BY_SIZE[size][ALU_ADD]
  return (c) => {
    const a = ea ? ea(c) : 0
    const d = ea ? rdm(c, a) : rdr(c)
    const sum = add(c, d, src(c))
    if (ea) wrm(c, a, sum, 0)
    setSrc(c, d, 0)
    if (!ea) wrr(c, sum, 0)
  }
}

function setZF(c: Cpu, on: boolean): void {
  materializeFlags(c)
  c.eflags = on ? c.eflags | ZF : c.eflags & ~ZF
}

/** 0F C7 /1 cmpxchg8b m64 (compare EDX:EAX, store ECX:EBX) / REX.W cmpxchg16b m128 (RDX:RAX, RCX:RBX). */
export function compileCmpxchgWide(insn: Instruction): Op {
  const ea = compileEa(insn)
  if (!insn.rexW) {
    return (c) => {
      const a = ea(c)
      const lo = c.read64w(a)
      const hi = c.th
      const r = c.r
      const equal = lo === r[0] && hi === r[4]
      setZF(c, equal)
      if (equal) c.write64(a, r[6], r[2])
      else {
        c.write64(a, lo, hi)
        r[0] = lo
        r[1] = 0
        r[4] = hi
        r[5] = 0
      }
    }
  }
  return (c) => {
    const a = ea(c)
    if ((a & 15) !== 0) throw new CpuFault(Vector.GP, 0, 0, 'cmpxchg16b operand not 16-byte aligned')
    const l0 = c.read64w(a)
    const l1 = c.th
    const h0 = c.read64w(a + 8)
    const h1 = c.th
    const r = c.r
    const equal = l0 === r[0] && l1 === r[1] && h0 === r[4] && h1 === r[5]
    setZF(c, equal)
    if (equal) {
      c.write64(a, r[6], r[7])
      c.write64(a + 8, r[2], r[3])
    } else {
      c.write64(a, l0, l1)
      c.write64(a + 8, h0, h1)
      r[0] = l0
      r[1] = l1
      r[4] = h0
      r[5] = h1
    }
  }
}
