// Multiply and divide: F6/F7 /4 mul, /5 imul, /6 div, /7 idiv; 0F AF imul
// r, r/m; 69/6B imul r, r/m, imm.
//
// Products are exact without BigInt: 32x32 -> 64 from 16-bit limbs, 64x64 ->
// 128 from four of those. 128/64 division is exact in doubles when the
// dividend and divisor fit 53 bits (the common case), else by 32-bit digits
// or shift-subtract on int32 words: no BigInt, so no garbage per divide.
//
// Flags: mul/imul set CF = OF per the SDM. SF, ZF, AF and PF are undefined;
// like Intel (as Bochs models it) SF/ZF/PF come from the low half of the
// product (AL, AX, EAX, RAX or the imul destination) and AF is 0.
// div/idiv leave every flag unchanged (all undefined). #DE is raised before
// any register changes.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { FK_EAGER, FK_IMUL, S8, S16, S32, S64, szp, szp64 } from '../cpu/flags.js'
import { ARITH_FLAGS, CF, OF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { immValue, type Reader, readGpr, readRm, writeGpr } from './operands.js'

const TWO_32 = 0x1_0000_0000

/** High half of the last mulu32 (avoids allocating pairs). */
let mh = 0

/** Unsigned 32x32 -> 64: returns the low half as int32, the high half in mh. */
function mulu32(a: number, b: number): number {
  const a0 = a & 0xffff
  const a1 = a >>> 16
  const b0 = b & 0xffff
  const b1 = b >>> 16
  const p00 = a0 * b0
  const p01 = a0 * b1
  const p10 = a1 * b0
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff)
  mh = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) | 0
  return (mid << 16) | (p00 & 0xffff)
}

/** Signed 32x32 -> 64: low half returned, high half in mh. */
function muls32(a: number, b: number): number {
  const lo = mulu32(a, b)
  mh = (mh - (a < 0 ? b : 0) - (b < 0 ? a : 0)) | 0
  return lo
}

/** The 128-bit product of the last mul128, words w[0] (lowest) .. w[3], as int32. */
const w = new Int32Array(4)

/** 64x64 -> 128 into w; signed when `signed` (two's complement high half correction). */
function mul128(alo: number, ahi: number, blo: number, bhi: number, signed: boolean): void {
  const l00 = mulu32(alo, blo)
  const h00 = mh
  const l01 = mulu32(alo, bhi)
  const h01 = mh
  const l10 = mulu32(ahi, blo)
  const h10 = mh
  const l11 = mulu32(ahi, bhi)
  const h11 = mh
  const s1 = (h00 >>> 0) + (l01 >>> 0) + (l10 >>> 0)
  const c1 = Math.floor(s1 / TWO_32)
  const s2 = (h01 >>> 0) + (h10 >>> 0) + (l11 >>> 0) + c1
  const c2 = Math.floor(s2 / TWO_32)
  w[0] = l00
  w[1] = s1 | 0
  let w2 = s2 | 0
  let w3 = (h11 + c2) | 0
  if (signed) {
    // (a - 2^64[a<0]) * (b - 2^64[b<0]) = a*b - 2^64 * (b[a<0] + a[b<0]) mod 2^128.
    if (ahi < 0) {
      const borrow = w2 >>> 0 < blo >>> 0 ? 1 : 0
      w2 = (w2 - blo) | 0
      w3 = (w3 - bhi - borrow) | 0
    }
    if (bhi < 0) {
      const borrow = w2 >>> 0 < alo >>> 0 ? 1 : 0
      w2 = (w2 - alo) | 0
      w3 = (w3 - ahi - borrow) | 0
    }
  }
  w[2] = w2
  w[3] = w3
}

function mulFlags(c: Cpu, overflow: boolean, low: number): void {
  c.eflags = (c.eflags & ~ARITH_FLAGS) | low | (overflow ? CF | OF : 0)
  c.fop = FK_EAGER
}

function divideError(): never {
  throw new CpuFault(Vector.DE, 0, 0, 'divide error')
}

// ---------------------------------------------------------------- one-operand forms

/** F6/F7 /4 mul, /5 imul: rDX:rAX (AX for bytes) = rAX * r/m. */
function compileMulAcc(insn: Instruction, size: number, signed: boolean): Op {
  const src = readRm(insn, size)
  switch (size) {
    case 1:
      return (c) => {
        const r = c.r
        const b = src(c)
        const p = signed ? (((r[0] << 24) >> 24) * ((b << 24) >> 24)) & 0xffff : (r[0] & 0xff) * b
        r[0] = (r[0] & ~0xffff) | p
        const over = signed ? (p << 24) >> 24 !== (p << 16) >> 16 : p > 0xff
        mulFlags(c, over, szp(p, S8))
      }
    case 2:
      return (c) => {
        const r = c.r
        const b = src(c)
        const p = signed ? ((r[0] << 16) >> 16) * ((b << 16) >> 16) : (r[0] & 0xffff) * b
        const lo = p & 0xffff
        r[0] = (r[0] & ~0xffff) | lo
        r[4] = (r[4] & ~0xffff) | ((p >>> 16) & 0xffff)
        const over = signed ? p !== (lo << 16) >> 16 : p > 0xffff
        mulFlags(c, over, szp(lo, S16))
      }
    case 4:
      return (c) => {
        const r = c.r
        const b = src(c)
        const lo = signed ? muls32(r[0], b) : mulu32(r[0], b)
        r[0] = lo
        r[1] = 0
        r[4] = mh
        r[5] = 0
        mulFlags(c, signed ? mh !== lo >> 31 : mh !== 0, szp(lo, S32))
      }
    default:
      return (c) => {
        const r = c.r
        const blo = src(c)
        mul128(r[0], r[1], blo, c.th, signed)
        r[0] = w[0]
        r[1] = w[1]
        r[4] = w[2]
        r[5] = w[3]
        const sx = signed ? w[1] >> 31 : 0
        mulFlags(c, w[2] !== sx || w[3] !== sx, szp64(w[0], w[1]))
      }
  }
}

// ---------------------------------------------------------------- imul r, r/m[, imm]

/** 0F AF imul r, r/m; 69/6B imul r, r/m, imm: the low half of the signed product, CF=OF when it does not fit. */
export function compileImul(insn: Instruction): Op {
  const size = insn.operandSize
  let b: Reader
  let a: Reader
  if (insn.map === 1) {
    a = readGpr(insn, size)
    b = readRm(insn, size)
  } else {
    a = readRm(insn, size)
    const { lo, hi } = immValue(insn, size)
    b =
      size === 8
        ? (c) => {
            c.th = hi
            return lo
          }
        : () => lo
  }
  const d = 2 * insn.reg
  switch (size) {
    case 2: {
      const wr = writeGpr(insn, 2)
      return (c) => {
        // Read the memory operand first: a fault must leave the destination alone.
        const y = b(c)
        const p = ((a(c) << 16) >> 16) * ((y << 16) >> 16)
        const lo = p & 0xffff
        wr(c, lo, 0)
        mulFlags(c, p !== (lo << 16) >> 16, szp(lo, S16))
      }
    }
    case 4:
      return (c) => {
        const y = b(c)
        const lo = muls32(a(c), y)
        c.r[d] = lo
        c.r[d + 1] = 0
        mulFlags(c, mh !== lo >> 31, szp(lo, S32))
      }
    default:
      return (c) => {
        const ylo = b(c)
        const yhi = c.th
        const xlo = a(c)
        const lo = imul64(c, xlo, c.th, ylo, yhi)
        c.r[d] = lo
        c.r[d + 1] = c.th
      }
  }
}

/** The low 64 bits of a signed 64x64 product (high half in c.th), with imul's flags. */
export function imul64(c: Cpu, xlo: number, xhi: number, ylo: number, yhi: number): number {
  // The low 64 bits of the product are the same signed or unsigned; whether it overflowed is left
  // to the lazy flags (FK_IMUL), which work it out only if CF or OF is read.
  const lo = mulu32(xlo, ylo)
  const hi = (mh + Math.imul(xlo, yhi) + Math.imul(xhi, ylo)) | 0
  c.fop = FK_IMUL | S64
  c.fa = xlo
  c.fah = xhi
  c.fb = ylo
  c.fbh = yhi
  c.fr = lo
  c.frh = hi
  c.th = hi
  return lo
}

// ---------------------------------------------------------------- divide

/** Unsigned (hi:lo) / d for hi < d < 2^32, exact in doubles by 16-bit digits: quotient returned, remainder in mh. */
function divu64by32(hi: number, lo: number, d: number): number {
  const n1 = hi * 0x10000 + (lo >>> 16)
  const q1 = Math.floor(n1 / d)
  const n0 = (n1 - q1 * d) * 0x10000 + (lo & 0xffff)
  const q0 = Math.floor(n0 / d)
  mh = n0 - q0 * d
  return q1 * 0x10000 + q0
}

/** Quotient and remainder of the last divu128, words q0 (low), q1, r0, r1 as int32. */
const qr = new Int32Array(4)

/**
 * Unsigned 128/64 division (n3:n2:n1:n0) / (dhi:dlo), words as int32, for
 * (n3:n2) < (dhi:dlo) so the quotient fits 64 bits; result in qr. Exact and
 * allocation-free: by 32-bit digits when the divisor fits 32 bits, else by
 * restoring shift-subtract over the 64 low dividend bits.
 */
function divu128(n3: number, n2: number, n1: number, n0: number, dlo: number, dhi: number): void {
  if (dhi === 0) {
    // n3 is 0 and n2 < d here.
    const d = dlo >>> 0
    const q1 = divu64by32(n2 >>> 0, n1, d)
    const q0 = divu64by32(mh, n0, d)
    qr[0] = q0 | 0
    qr[1] = q1 | 0
    qr[2] = mh | 0
    qr[3] = 0
    return
  }
  const dh = dhi >>> 0
  const dl = dlo >>> 0
  let rh = n3 >>> 0
  let rl = n2 >>> 0
  let q1 = 0
  let q0 = 0
  for (let k = 63; k >= 0; k--) {
    const bit = k >= 32 ? (n1 >>> (k - 32)) & 1 : (n0 >>> k) & 1
    const carry = rh >>> 31
    rh = ((rh << 1) | (rl >>> 31)) >>> 0
    rl = ((rl << 1) | bit) >>> 0
    if (carry !== 0 || rh > dh || (rh === dh && rl >= dl)) {
      const borrow = rl < dl ? 1 : 0
      rl = (rl - dl) >>> 0
      rh = (rh - dh - borrow) >>> 0
      if (k >= 32) q1 |= 1 << (k - 32)
      else q0 |= 1 << k
    }
  }
  qr[0] = q0
  qr[1] = q1
  qr[2] = rl | 0
  qr[3] = rh | 0
}

/** (hi:lo) >= (bhi:blo), unsigned 64-bit. */
function geu64(lo: number, hi: number, blo: number, bhi: number): boolean {
  return hi >>> 0 > bhi >>> 0 || (hi === bhi && lo >>> 0 >= blo >>> 0)
}

function compileDiv(insn: Instruction, size: number, signed: boolean): Op {
  const src = readRm(insn, size)
  switch (size) {
    case 1:
      return (c) => {
        const r = c.r
        const b = src(c)
        let q: number
        let rem: number
        if (signed) {
          const n = (r[0] << 16) >> 16
          const d = (b << 24) >> 24
          if (d === 0) divideError()
          q = Math.trunc(n / d)
          if (q > 127 || q < -128) divideError()
          rem = n % d
        } else {
          const n = r[0] & 0xffff
          if (b === 0) divideError()
          q = Math.floor(n / b)
          if (q > 0xff) divideError()
          rem = n - q * b
        }
        r[0] = (r[0] & ~0xffff) | ((rem & 0xff) << 8) | (q & 0xff)
      }
    case 2:
      return (c) => {
        const r = c.r
        const b = src(c)
        let q: number
        let rem: number
        if (signed) {
          const n = ((r[4] & 0xffff) << 16) | (r[0] & 0xffff)
          const d = (b << 16) >> 16
          if (d === 0) divideError()
          q = Math.trunc(n / d)
          if (q > 0x7fff || q < -0x8000) divideError()
          rem = n % d
        } else {
          const n = (r[4] & 0xffff) * 0x10000 + (r[0] & 0xffff)
          if (b === 0) divideError()
          q = Math.floor(n / b)
          if (q > 0xffff) divideError()
          rem = n - q * b
        }
        r[0] = (r[0] & ~0xffff) | (q & 0xffff)
        r[4] = (r[4] & ~0xffff) | (rem & 0xffff)
      }
    case 4:
      return (c) => {
        const r = c.r
        const b = src(c)
        let q: number
        let rem: number
        if (signed) {
          if (b === 0) divideError()
          let hi = r[4]
          let lo = r[0]
          const neg = hi < 0
          if (neg) {
            // Magnitude of the 64-bit dividend.
            hi = (~hi + (lo === 0 ? 1 : 0)) | 0
            lo = -lo | 0
          }
          const d = Math.abs(b)
          if (hi >>> 0 >= d) divideError()
          q = divu64by32(hi >>> 0, lo, d)
          rem = mh
          if (neg !== b < 0) q = -q
          if (neg) rem = -rem
          if (q > 0x7fff_ffff || q < -0x8000_0000) divideError()
        } else {
          const d = b >>> 0
          if (d === 0) divideError()
          const hi = r[4] >>> 0
          if (hi >= d) divideError()
          q = divu64by32(hi, r[0], d)
          rem = mh
        }
        r[0] = q | 0
        r[1] = 0
        r[4] = rem | 0
        r[5] = 0
      }
    default:
      return (c) => {
        const r = c.r
        const dlo = src(c)
        const dhi = c.th
        let qlo: number
        let qhi: number
        let rlo: number
        let rhi: number
        if ((dlo | dhi) === 0) divideError()
        if (signed) {
          const sx = r[0] >> 31
          if (r[1] === sx && r[4] === sx && r[5] === sx && dhi === dlo >> 31) {
            // Both fit in 32 bits signed: exact in doubles, and no overflow is possible except
            // -2^31 / -1, whose quotient 2^31 still fits the 64-bit destination.
            const n = r[0]
            const d = dlo
            const q = Math.trunc(n / d)
            const m = n % d
            qlo = q | 0
            qhi = q < 0 ? -1 : 0
            rlo = m | 0
            rhi = m < 0 ? -1 : 0
          } else {
            // Magnitudes, an unsigned divide, then the signs: the quotient is negative when the
            // operands' signs differ, the remainder takes the dividend's sign.
            let n0 = r[0]
            let n1 = r[1]
            let n2 = r[4]
            let n3 = r[5]
            const nneg = n3 < 0
            if (nneg) {
              n0 = -n0 | 0
              let c = n0 === 0 ? 1 : 0
              n1 = (~n1 + c) | 0
              c = c && n1 === 0 ? 1 : 0
              n2 = (~n2 + c) | 0
              c = c && n2 === 0 ? 1 : 0
              n3 = (~n3 + c) | 0
            }
            let ml = dlo
            let mh64 = dhi
            const dneg = dhi < 0
            if (dneg) {
              ml = -dlo | 0
              mh64 = (~dhi + (ml === 0 ? 1 : 0)) | 0
            }
            // |n| / |d| must be below 2^64 before the quotient's range is checked.
            if (n3 < 0 || geu64(n2, n3, ml, mh64)) divideError()
            divu128(n3, n2, n1, n0, ml, mh64)
            qlo = qr[0]
            qhi = qr[1]
            rlo = qr[2]
            rhi = qr[3]
            if (nneg !== dneg) {
              // Negative quotient: its magnitude may be at most 2^63.
              if (qhi < 0 && (qhi !== -0x8000_0000 || qlo !== 0)) divideError()
              qlo = -qlo | 0
              qhi = (~qhi + (qlo === 0 ? 1 : 0)) | 0
            } else if (qhi < 0) divideError()
            if (nneg) {
              rlo = -rlo | 0
              rhi = (~rhi + (rlo === 0 ? 1 : 0)) | 0
            }
          }
        } else if ((r[4] | r[5]) === 0 && r[1] >>> 0 < 0x20_0000 && dhi >>> 0 < 0x20_0000) {
          // Dividend and divisor below 2^53: exact in doubles.
          const n = (r[1] >>> 0) * TWO_32 + (r[0] >>> 0)
          const d = (dhi >>> 0) * TWO_32 + (dlo >>> 0)
          const q = Math.floor(n / d)
          const m = n - q * d
          qlo = q | 0
          qhi = Math.floor(q / TWO_32) | 0
          rlo = m | 0
          rhi = Math.floor(m / TWO_32) | 0
        } else {
          if (geu64(r[4], r[5], dlo, dhi)) divideError()
          divu128(r[5], r[4], r[1], r[0], dlo, dhi)
          qlo = qr[0]
          qhi = qr[1]
          rlo = qr[2]
          rhi = qr[3]
        }
        r[0] = qlo
        r[1] = qhi
        r[4] = rlo
        r[5] = rhi
      }
  }
}

/** F6/F7 /4../7. */
export function compileMulDiv(insn: Instruction): Op {
  const size = insn.opcode === 0xf6 ? 1 : insn.operandSize
  const r = insn.reg & 7
  if (r === 4 || r === 5) return compileMulAcc(insn, size, r === 5)
  return compileDiv(insn, size, r === 7)
}
