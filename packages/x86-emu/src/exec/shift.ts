// Shifts and rotates: the C0/C1/D0-D3 groups (rol ror rcl rcr shl shr sal
// sar) and the double shifts shld/shrd (0F A4/A5/AC/AD).
//
// Flags are set eagerly. A masked count of 0 changes nothing (not even
// flags), although the operand is still accessed (with write permission
// checked) and a 32-bit register destination is still zero-extended, as
// on Intel hardware.
//
// SDM-undefined flags, chosen to match Intel (as modelled by Bochs):
// - OF for counts > 1 uses the count-1 formula on the final result: shl,
//   rol, rcl, shld: MSB(result) XOR CF; shr, ror, rcr, shrd: XOR of the two
//   top result bits; sar: 0.
// - AF after shl/shr/sar/shld/shrd with a nonzero count is 0.
// - CF after shl/shr by a count >= the width is the last bit shifted out as
//   the SDM's one-bit-at-a-time loop defines it (0 once the value is gone).
// - shld/shrd r/m16 with a count of 17..31 (undefined result): the operand
//   is treated as the 48-bit pattern dest:src:dest, Intel's observed result.

import type { Cpu } from '../cpu/cpu.js'
import { FK_EAGER, getCF, materializeFlags, S8, S16, S32, szp, szp64 } from '../cpu/flags.js'
import { ARITH_FLAGS, CF, OF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { compileEa, isHigh8, memReadAt, memWriteAt, readGpr, readReg, writeReg } from './operands.js'

export const ROL = 0
export const ROR = 1
export const RCL = 2
export const RCR = 3
export const SHL = 4
export const SHR = 5
export const SAL = 6
export const SAR = 7

/** A sized operation on a value (8/16-bit masked, 32-bit int32); may set flags. */
export type Unary = (c: Cpu, v: number) => number
/** The same for 64-bit values: lo and hi in, lo returned, hi left in Cpu.th. */
export type Unary64 = (c: Cpu, lo: number, hi: number) => number

type Shift = (c: Cpu, v: number, n: number) => number
type Shift64 = (c: Cpu, lo: number, hi: number, n: number) => number

/** Replace all six arithmetic flags. */
function setAll(c: Cpu, bits: number): void {
  c.eflags = (c.eflags & ~ARITH_FLAGS) | bits
  c.fop = FK_EAGER
}

/** Rotates change only CF and OF. */
function setCO(c: Cpu, cf: number, of: number): void {
  materializeFlags(c)
  c.eflags = (c.eflags & ~(CF | OF)) | cf | (of !== 0 ? OF : 0)
}

/**
 * A read-modify-write of the ModRM r/m operand. Memory is read with write
 * permission checked, so the write cannot fault after flags were changed.
 */
export function compileRmw(insn: Instruction, size: number, fn: Unary, fn64: Unary64): Op {
  if (insn.mod !== 3) {
    const ea = compileEa(insn)
    const rd = memReadAt(size, true)
    const wr = memWriteAt(size)
    if (size === 8) {
      return (c) => {
        const a = ea(c)
        const lo = rd(c, a)
        const r = fn64(c, lo, c.th)
        wr(c, a, r, c.th)
      }
    }
    return (c) => {
      const a = ea(c)
      wr(c, a, fn(c, rd(c, a)), 0)
    }
  }
  const i = 2 * insn.rm
  if (size === 8) {
    return (c) => {
      const r = c.r
      r[i] = fn64(c, r[i], r[i + 1])
      r[i + 1] = c.th
    }
  }
  if (size === 4) {
    return (c) => {
      const r = c.r
      r[i] = fn(c, r[i])
      r[i + 1] = 0
    }
  }
  const high = isHigh8(insn, insn.rm, size)
  const rd = readReg(insn.rm, size, high)
  const wr = writeReg(insn.rm, size, high)
  return (c) => wr(c, fn(c, rd(c)), 0)
}

// ---------------------------------------------------------------- 8/16/32-bit

function makeShift(kind: number, size: number): Shift {
  const bits = size * 8
  const top = bits - 1
  const mask = size === 4 ? -1 : (1 << bits) - 1
  const s = size === 1 ? S8 : size === 2 ? S16 : S32
  switch (kind) {
    case ROL:
      return (c, v, n) => {
        if (n === 0) return v
        const k = n & top
        const r = k === 0 ? v : ((v << k) | (v >>> (bits - k))) & mask
        const cf = r & 1
        setCO(c, cf, cf ^ ((r >>> top) & 1))
        return r
      }
    case ROR:
      return (c, v, n) => {
        if (n === 0) return v
        const k = n & top
        const r = k === 0 ? v : ((v >>> k) | (v << (bits - k))) & mask
        const msb = (r >>> top) & 1
        setCO(c, msb, msb ^ ((r >>> (top - 1)) & 1))
        return r
      }
    case RCL:
      return (c, v, n) => {
        // 8/16-bit rotate through CF over 9/17 bits.
        const k = size === 4 ? n : n % (bits + 1)
        if (k === 0) return v
        const cin = getCF(c) ? 1 : 0
        let r: number
        let cf: number
        if (size === 4) {
          if (k === 1) {
            r = (v << 1) | cin
            cf = v >>> 31
          } else {
            r = (v << k) | (cin << (k - 1)) | (v >>> (33 - k))
            cf = (v >>> (32 - k)) & 1
          }
        } else {
          const x = (cin << bits) | v
          const y = ((x << k) | (x >>> (bits + 1 - k))) & ((mask << 1) | 1)
          r = y & mask
          cf = y >>> bits
        }
        setCO(c, cf, cf ^ ((r >>> top) & 1))
        return r
      }
    case RCR:
      return (c, v, n) => {
        const k = size === 4 ? n : n % (bits + 1)
        if (k === 0) return v
        const cin = getCF(c) ? 1 : 0
        let r: number
        let cf: number
        if (size === 4) {
          if (k === 1) {
            r = (v >>> 1) | (cin << 31)
            cf = v & 1
          } else {
            r = (v >>> k) | (cin << (32 - k)) | (v << (33 - k))
            cf = (v >>> (k - 1)) & 1
          }
        } else {
          const x = (cin << bits) | v
          const y = ((x >>> k) | (x << (bits + 1 - k))) & ((mask << 1) | 1)
          r = y & mask
          cf = y >>> bits
        }
        const msb = (r >>> top) & 1
        setCO(c, cf, msb ^ ((r >>> (top - 1)) & 1))
        return r
      }
    case SHL:
    case SAL:
      return (c, v, n) => {
        if (n === 0) return v
        const r = (v << n) & mask
        const cf = n > bits ? 0 : (v >>> (bits - n)) & 1
        setAll(c, cf | szp(r, s) | (((r >>> top) & 1) !== cf ? OF : 0))
        return r
      }
    case SHR:
      return (c, v, n) => {
        if (n === 0) return v
        const r = (v >>> n) & mask
        const cf = (v >>> (n - 1)) & 1
        setAll(c, cf | szp(r, s) | (((r >>> top) ^ (r >>> (top - 1))) & 1 ? OF : 0))
        return r
      }
    default: {
      const ext = 32 - bits
      return (c, v, n) => {
        if (n === 0) return v
        const sv = (v << ext) >> ext
        const r = (sv >> n) & mask
        setAll(c, ((sv >> (n - 1)) & 1) | szp(r, s))
        return r
      }
    }
  }
}

// ---------------------------------------------------------------- 64-bit

function makeShift64(kind: number): Shift64 {
  switch (kind) {
    case ROL:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let a = lo
        let b = hi
        let k = n
        if (k >= 32) {
          a = hi
          b = lo
          k -= 32
        }
        let rlo = a
        let rhi = b
        if (k !== 0) {
          rhi = (b << k) | (a >>> (32 - k))
          rlo = (a << k) | (b >>> (32 - k))
        }
        const cf = rlo & 1
        setCO(c, cf, cf ^ (rhi >>> 31))
        c.th = rhi
        return rlo
      }
    case ROR:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let a = lo
        let b = hi
        let k = n
        if (k >= 32) {
          a = hi
          b = lo
          k -= 32
        }
        let rlo = a
        let rhi = b
        if (k !== 0) {
          rlo = (a >>> k) | (b << (32 - k))
          rhi = (b >>> k) | (a << (32 - k))
        }
        const msb = rhi >>> 31
        setCO(c, msb, msb ^ ((rhi >>> 30) & 1))
        c.th = rhi
        return rlo
      }
    case RCL:
      // Rare: one bit at a time through CF.
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let cf = getCF(c) ? 1 : 0
        for (let j = 0; j < n; j++) {
          const out = hi >>> 31
          hi = (hi << 1) | (lo >>> 31)
          lo = (lo << 1) | cf
          cf = out
        }
        setCO(c, cf, cf ^ (hi >>> 31))
        c.th = hi
        return lo
      }
    case RCR:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let cf = getCF(c) ? 1 : 0
        for (let j = 0; j < n; j++) {
          const out = lo & 1
          lo = (lo >>> 1) | (hi << 31)
          hi = (hi >>> 1) | (cf << 31)
          cf = out
        }
        setCO(c, cf, (hi >>> 31) ^ ((hi >>> 30) & 1))
        c.th = hi
        return lo
      }
    case SHL:
    case SAL:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let rlo: number
        let rhi: number
        let cf: number
        if (n < 32) {
          rhi = (hi << n) | (lo >>> (32 - n))
          rlo = lo << n
          cf = (hi >>> (32 - n)) & 1
        } else if (n === 32) {
          rhi = lo
          rlo = 0
          cf = hi & 1
        } else {
          rhi = lo << (n - 32)
          rlo = 0
          cf = (lo >>> (64 - n)) & 1
        }
        setAll(c, cf | szp64(rlo, rhi) | (rhi >>> 31 !== cf ? OF : 0))
        c.th = rhi
        return rlo
      }
    case SHR:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let rlo: number
        let rhi: number
        let cf: number
        if (n < 32) {
          rlo = (lo >>> n) | (hi << (32 - n))
          rhi = (hi >>> n) | 0
          cf = (lo >>> (n - 1)) & 1
        } else if (n === 32) {
          rlo = hi
          rhi = 0
          cf = lo >>> 31
        } else {
          rlo = (hi >>> (n - 32)) | 0
          rhi = 0
          cf = (hi >>> (n - 33)) & 1
        }
        setAll(c, cf | szp64(rlo, rhi) | (((rhi >>> 31) ^ (rhi >>> 30)) & 1 ? OF : 0))
        c.th = rhi
        return rlo
      }
    default:
      return (c, lo, hi, n) => {
        if (n === 0) {
          c.th = hi
          return lo
        }
        let rlo: number
        let rhi: number
        let cf: number
        if (n < 32) {
          rlo = (lo >>> n) | (hi << (32 - n))
          rhi = hi >> n
          cf = (lo >>> (n - 1)) & 1
        } else if (n === 32) {
          rlo = hi
          rhi = hi >> 31
          cf = lo >>> 31
        } else {
          rlo = hi >> (n - 32)
          rhi = hi >> 31
          cf = (hi >> (n - 33)) & 1
        }
        setAll(c, cf | szp64(rlo, rhi))
        c.th = rhi
        return rlo
      }
  }
}

// ---------------------------------------------------------------- compilers

/** C0/C1 (imm8), D0/D1 (by 1), D2/D3 (by CL), /0../7. */
export function compileShift(insn: Instruction): Op {
  const op = insn.opcode
  const size = (op & 1) === 0 ? 1 : insn.operandSize
  const kind = insn.reg & 7
  const cmask = size === 8 ? 63 : 31
  const byCl = op === 0xd2 || op === 0xd3
  const n = op === 0xd0 || op === 0xd1 ? 1 : insn.immediate & cmask
  if (size === 8) {
    const sh = makeShift64(kind)
    const fn64: Unary64 = byCl ? (c, lo, hi) => sh(c, lo, hi, c.r[2] & 63) : (c, lo, hi) => sh(c, lo, hi, n)
    return compileRmw(insn, 8, unused, fn64)
  }
  const sh = makeShift(kind, size)
  const fn: Unary = byCl ? (c, v) => sh(c, v, c.r[2] & 31) : (c, v) => sh(c, v, n)
  return compileRmw(insn, size, fn, unused64)
}

const unused: Unary = () => {
  throw new Error('unreachable: sized op used for 64-bit operand')
}
const unused64: Unary64 = () => {
  throw new Error('unreachable: 64-bit op used for sized operand')
}

/** shld/shrd on 16-bit operands: the 48-bit pattern dest:src:dest, which also covers counts 17..31. */
function double16(c: Cpu, d: number, s: number, n: number, left: boolean): number {
  const x = d * 2 ** 32 + s * 2 ** 16 + d
  let r: number
  let cf: number
  if (left) {
    r = Math.floor(x / 2 ** (32 - n)) % 0x10000
    cf = Math.floor(x / 2 ** (48 - n)) % 2
  } else {
    r = Math.floor(x / 2 ** n) % 0x10000
    cf = Math.floor(x / 2 ** (n - 1)) % 2
  }
  const of = left ? (r >>> 15) ^ cf : ((r >>> 15) ^ (r >>> 14)) & 1
  setAll(c, cf | szp(r, S16) | (of !== 0 ? OF : 0))
  return r
}

function double32(c: Cpu, d: number, s: number, n: number, left: boolean): number {
  let r: number
  let cf: number
  if (left) {
    r = (d << n) | (s >>> (32 - n))
    cf = (d >>> (32 - n)) & 1
  } else {
    r = (d >>> n) | (s << (32 - n))
    cf = (d >>> (n - 1)) & 1
  }
  const of = left ? (r >>> 31) ^ cf : ((r >>> 31) ^ (r >>> 30)) & 1
  setAll(c, cf | szp(r, S32) | (of !== 0 ? OF : 0))
  return r
}

function double64(
  c: Cpu,
  dlo: number,
  dhi: number,
  slo: number,
  shi: number,
  n: number,
  left: boolean,
): number {
  let rlo: number
  let rhi: number
  let cf: number
  if (left) {
    if (n < 32) {
      rhi = (dhi << n) | (dlo >>> (32 - n))
      rlo = (dlo << n) | (shi >>> (32 - n))
      cf = (dhi >>> (32 - n)) & 1
    } else if (n === 32) {
      rhi = dlo
      rlo = shi
      cf = dhi & 1
    } else {
      const k = n - 32
      rhi = (dlo << k) | (shi >>> (32 - k))
      rlo = (shi << k) | (slo >>> (32 - k))
      cf = (dlo >>> (32 - k)) & 1
    }
  } else if (n < 32) {
    rlo = (dlo >>> n) | (dhi << (32 - n))
    rhi = (dhi >>> n) | (slo << (32 - n))
    cf = (dlo >>> (n - 1)) & 1
  } else if (n === 32) {
    rlo = dhi
    rhi = slo
    cf = dlo >>> 31
  } else {
    const k = n - 32
    rlo = (dhi >>> k) | (slo << (32 - k))
    rhi = (slo >>> k) | (shi << (32 - k))
    cf = (dhi >>> (k - 1)) & 1
  }
  const of = left ? (rhi >>> 31) ^ cf : ((rhi >>> 31) ^ (rhi >>> 30)) & 1
  setAll(c, cf | szp64(rlo, rhi) | (of !== 0 ? OF : 0))
  c.th = rhi
  return rlo
}

/** 0F A4/A5 shld r/m, reg, imm8/CL; 0F AC/AD shrd. */
export function compileDoubleShift(insn: Instruction): Op {
  const op = insn.opcode
  const left = op === 0xa4 || op === 0xa5
  const byCl = op === 0xa5 || op === 0xad
  const size = insn.operandSize
  const cmask = size === 8 ? 63 : 31
  const imm = insn.immediate & cmask
  const count = byCl ? (c: Cpu) => c.r[2] & cmask : () => imm
  const src = readGpr(insn, size)
  if (size === 8) {
    return compileRmw(insn, 8, unused, (c, lo, hi) => {
      const n = count(c)
      if (n === 0) {
        c.th = hi
        return lo
      }
      const slo = src(c)
      return double64(c, lo, hi, slo, c.th, n, left)
    })
  }
  const dbl = size === 2 ? double16 : double32
  return compileRmw(
    insn,
    size,
    (c, v) => {
      const n = count(c)
      return n === 0 ? v : dbl(c, v, src(c), n, left)
    },
    unused64,
  )
}
