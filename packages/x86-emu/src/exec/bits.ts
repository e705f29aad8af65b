// Bit instructions: bt/bts/btr/btc (0F A3/AB/B3/BB and 0F BA /4../7), bsf
// and bsr (0F BC/BD, also with F3: tzcnt/lzcnt are not reported by cpuid,
// so they execute as bsf/bsr the way pre-BMI CPUs do), popcnt (#UD: cpuid
// reports no POPCNT).
//
// SDM-undefined choices (Intel as Bochs models it):
// - bt*: only CF changes; OF SF AF PF keep their values (ZF is defined as unaffected).
// - bsf/bsr with a nonzero source: CF OF SF AF = 0, PF from the result, ZF = 0.
//   With a zero source: ZF = 1, the other flags and the whole destination keep
//   their values (AMD documents this; Intel CPUs write the old value back, which
//   clears the upper half of a 32-bit destination: Linux copes with both).

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { FK_EAGER, materializeFlags, parityFlag } from '../cpu/flags.js'
import { ARITH_FLAGS, CF, ZF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { compileEa, memReadAt, memWriteAt, readReg, readRm, wrap64 } from './operands.js'

const TWO_32 = 0x1_0000_0000

const BT = 0
const BTS = 1
const BTR = 2 // 3 is btc

function setCF(c: Cpu, bit: number): void {
  materializeFlags(c)
  c.eflags = (c.eflags & ~CF) | bit
}

/** The new value of a word after bt* sets/clears/complements `m` (one bit). */
function modify(kind: number, v: number, m: number): number {
  return kind === BTS ? v | m : kind === BTR ? v & ~m : v ^ m
}

/** 0F A3/AB/B3/BB bt* r/m, reg and 0F BA /4../7 bt* r/m, imm8. */
export function compileBitTest(insn: Instruction): Op {
  const size = insn.operandSize
  const bits = size * 8
  const kind = insn.opcode === 0xba ? (insn.reg & 7) - 4 : (insn.opcode >> 3) & 3
  const byImm = insn.opcode === 0xba
  const imm = insn.immediate & (bits - 1)
  const off = byImm ? null : readReg(insn.reg, size)

  if (insn.mod === 3) {
    const i = 2 * insn.rm
    if (size === 8) {
      return (c) => {
        const n = off ? off(c) & 63 : imm
        const r = c.r
        const j = n < 32 ? i : i + 1
        const m = 1 << (n & 31)
        setCF(c, (r[j] & m) !== 0 ? 1 : 0)
        if (kind !== BT) r[j] = modify(kind, r[j], m)
      }
    }
    const mask = size === 4 ? -1 : 0xffff
    return (c) => {
      const n = off ? off(c) & (bits - 1) : imm
      const r = c.r
      const m = 1 << n
      setCF(c, (r[i] & m) !== 0 ? 1 : 0)
      if (kind === BT) return
      if (size === 4) {
        r[i] = modify(kind, r[i], m)
        r[i + 1] = 0
      } else r[i] = (r[i] & ~mask) | (modify(kind, r[i], m) & mask)
    }
  }

  // Memory: a register offset is signed and may select another word of the operand's size.
  const ea = compileEa(insn)
  const shift = size === 2 ? 4 : size === 4 ? 5 : 6
  let addrBit: (c: Cpu) => number
  let bitNo = 0
  if (byImm) {
    addrBit = (c) => {
      bitNo = imm
      return ea(c)
    }
  } else if (size === 8) {
    const g = off as (c: Cpu) => number
    addrBit = (c) => {
      const lo = g(c)
      const hi = c.th
      bitNo = lo & 63
      // Arithmetic shift of the 64-bit offset by 6, then 8 bytes per word.
      const qlo = (lo >>> 6) | (hi << 26)
      const qhi = hi >> 6
      return wrap64(ea(c) + (qhi * TWO_32 + (qlo >>> 0)) * 8)
    }
  } else {
    const g = off as (c: Cpu) => number
    const ext = 32 - bits
    addrBit = (c) => {
      const o = (g(c) << ext) >> ext
      bitNo = o & (bits - 1)
      return wrap64(ea(c) + (o >> shift) * size)
    }
  }
  const rd = memReadAt(size, kind !== BT)
  const wr = memWriteAt(size)
  if (size === 8) {
    return (c) => {
      const a = addrBit(c)
      let lo = rd(c, a)
      let hi = c.th
      const m = 1 << (bitNo & 31)
      const word = bitNo < 32 ? lo : hi
      setCF(c, (word & m) !== 0 ? 1 : 0)
      if (kind === BT) return
      if (bitNo < 32) lo = modify(kind, lo, m)
      else hi = modify(kind, hi, m)
      wr(c, a, lo, hi)
    }
  }
  return (c) => {
    const a = addrBit(c)
    const v = rd(c, a)
    const m = 1 << bitNo
    setCF(c, (v & m) !== 0 ? 1 : 0)
    if (kind !== BT) wr(c, a, modify(kind, v, m), 0)
  }
}

/** bsf/bsr flags for a nonzero source (see the header). */
function foundFlags(c: Cpu, index: number): void {
  c.eflags = (c.eflags & ~ARITH_FLAGS) | parityFlag(index)
  c.fop = FK_EAGER
}

function zeroSource(c: Cpu): void {
  materializeFlags(c)
  c.eflags |= ZF
}

function ctz32(v: number): number {
  return 31 - Math.clz32(v & -v)
}

/** 0F BC bsf, 0F BD bsr (with or without F3). */
export function compileBitScan(insn: Instruction): Op {
  const size = insn.operandSize
  const reverse = insn.opcode === 0xbd
  const src = readRm(insn, size)
  const d = 2 * insn.reg
  if (size === 8) {
    return (c) => {
      const lo = src(c)
      const hi = c.th
      if ((lo | hi) === 0) return zeroSource(c)
      let n: number
      if (reverse) n = hi !== 0 ? 63 - Math.clz32(hi) : 31 - Math.clz32(lo)
      else n = lo !== 0 ? ctz32(lo) : 32 + ctz32(hi)
      c.r[d] = n
      c.r[d + 1] = 0
      foundFlags(c, n)
    }
  }
  return (c) => {
    const v = src(c)
    const r = c.r
    if (v === 0) return zeroSource(c)
    const n = reverse ? 31 - Math.clz32(v) : ctz32(v)
    if (size === 4) {
      r[d] = n
      r[d + 1] = 0
    } else r[d] = (r[d] & ~0xffff) | n
    foundFlags(c, n)
  }
}

/** F3 0F B8 popcnt: not in the reported feature set, so #UD like a CPU without POPCNT. */
export const popcntUd: Op = () => {
  throw new CpuFault(Vector.UD, 0, 0, 'popcnt: cpuid reports no POPCNT')
}
