// Lazy arithmetic flags.
//
// Most flag results are overwritten before anything reads them, so ALU
// instructions only record what they computed (kind, size, operands,
// result) and CF/PF/AF/ZF/SF/OF are derived on demand. Instructions whose
// flags are irregular (shifts, multiplies, bit scans) set them eagerly.

import type { Cpu } from './cpu.js'
import { AF, ARITH_FLAGS, CF, OF, PF, SF, ZF } from './registers.js'

// Size codes, the low two bits of Cpu.fop.
export const S8 = 0
export const S16 = 1
export const S32 = 2
export const S64 = 3

// Kinds, in the bits above the size code.
export const FK_EAGER = 0 // arithmetic flags are in Cpu.eflags
export const FK_ADD = 1 << 2
export const FK_ADC = 2 << 2 // add with carry-in 1
export const FK_SUB = 3 << 2 // also cmp and neg (0 - x)
export const FK_SBB = 4 << 2 // subtract with borrow-in 1
export const FK_LOGIC = 5 << 2 // and/or/xor/test: CF=OF=0
export const FK_INC = 6 << 2 // like add 1, CF preserved in Cpu.fcf
export const FK_DEC = 7 << 2 // like sub 1, CF preserved in Cpu.fcf
export const FK_IMUL = 8 << 2 // 64-bit imul of fa:fah by fb:fbh: CF=OF when the product does not fit, AF=0
const KIND_MASK = ~3

export const SIZE_MASKS = [0xff, 0xffff, -1, -1]
const SIGN_SHIFT = [7, 15, 31, 31]

const PARITY = new Uint8Array(256)
for (let i = 0; i < 256; i++) {
  let b = i
  b ^= b >> 4
  b ^= b >> 2
  b ^= b >> 1
  PARITY[i] = (b & 1) === 0 ? PF : 0
}
/** PF for a result's low byte. */
export function parityFlag(v: number): number {
  return PARITY[v & 0xff]
}

/** Whether the signed 64x64 product of the last imul does not fit in 64 bits (flags after imul are rarely read). */
function imulOverflow(c: Cpu): boolean {
  const big = (lo: number, hi: number) => (BigInt(hi) << 32n) | BigInt(lo >>> 0)
  const p = big(c.fa, c.fah) * big(c.fb, c.fbh)
  return BigInt.asIntN(64, p) !== p
}

function lessUnsigned64(alo: number, ahi: number, blo: number, bhi: number): boolean {
  return ahi >>> 0 < bhi >>> 0 || (ahi === bhi && alo >>> 0 < blo >>> 0)
}

export function getCF(c: Cpu): boolean {
  const op = c.fop
  const kind = op & KIND_MASK
  const s = op & 3
  switch (kind) {
    case FK_EAGER:
      return (c.eflags & CF) !== 0
    case FK_ADD:
      return s === S64 ? lessUnsigned64(c.fr, c.frh, c.fa, c.fah) : c.fr >>> 0 < c.fa >>> 0
    case FK_ADC:
      return s === S64 ? !lessUnsigned64(c.fa, c.fah, c.fr, c.frh) : c.fr >>> 0 <= c.fa >>> 0
    case FK_SUB:
      return s === S64 ? lessUnsigned64(c.fa, c.fah, c.fb, c.fbh) : c.fa >>> 0 < c.fb >>> 0
    case FK_SBB:
      return s === S64 ? !lessUnsigned64(c.fb, c.fbh, c.fa, c.fah) : c.fa >>> 0 <= c.fb >>> 0
    case FK_LOGIC:
      return false
    case FK_IMUL:
      return imulOverflow(c)
    default:
      return c.fcf !== 0
  }
}

export function getZF(c: Cpu): boolean {
  if ((c.fop & KIND_MASK) === FK_EAGER) return (c.eflags & ZF) !== 0
  return (c.fop & 3) === S64 ? (c.fr | c.frh) === 0 : c.fr === 0
}

export function getSF(c: Cpu): boolean {
  const op = c.fop
  if ((op & KIND_MASK) === FK_EAGER) return (c.eflags & SF) !== 0
  const s = op & 3
  return s === S64 ? c.frh < 0 : ((c.fr >>> SIGN_SHIFT[s]) & 1) !== 0
}

export function getOF(c: Cpu): boolean {
  const op = c.fop
  const kind = op & KIND_MASK
  if (kind === FK_EAGER) return (c.eflags & OF) !== 0
  if (kind === FK_LOGIC) return false
  if (kind === FK_IMUL) return imulOverflow(c)
  const s = op & 3
  let x: number
  if (s === S64) {
    x =
      kind === FK_ADD || kind === FK_ADC || kind === FK_INC
        ? (c.fah ^ c.frh) & (c.fbh ^ c.frh)
        : (c.fah ^ c.fbh) & (c.fah ^ c.frh)
    return x < 0
  }
  x =
    kind === FK_ADD || kind === FK_ADC || kind === FK_INC
      ? (c.fa ^ c.fr) & (c.fb ^ c.fr)
      : (c.fa ^ c.fb) & (c.fa ^ c.fr)
  return ((x >>> SIGN_SHIFT[s]) & 1) !== 0
}

export function getPF(c: Cpu): boolean {
  if ((c.fop & KIND_MASK) === FK_EAGER) return (c.eflags & PF) !== 0
  return PARITY[c.fr & 0xff] !== 0
}

export function getAF(c: Cpu): boolean {
  const kind = c.fop & KIND_MASK
  if (kind === FK_EAGER) return (c.eflags & AF) !== 0
  if (kind === FK_LOGIC || kind === FK_IMUL) return false
  return ((c.fa ^ c.fb ^ c.fr) & 0x10) !== 0
}

/** The six arithmetic flags as RFLAGS bits. */
export function arithFlags(c: Cpu): number {
  if ((c.fop & KIND_MASK) === FK_EAGER) return c.eflags & ARITH_FLAGS
  return (
    (getCF(c) ? CF : 0) |
    (getPF(c) ? PF : 0) |
    (getAF(c) ? AF : 0) |
    (getZF(c) ? ZF : 0) |
    (getSF(c) ? SF : 0) |
    (getOF(c) ? OF : 0)
  )
}

/** Fold lazy flags into Cpu.eflags (before an instruction changes only some of them). */
export function materializeFlags(c: Cpu): void {
  if ((c.fop & KIND_MASK) === FK_EAGER) return
  c.eflags = (c.eflags & ~ARITH_FLAGS) | arithFlags(c)
  c.fop = FK_EAGER
}

/** Set the arithmetic flags eagerly: bits in `mask` take their values from `bits`, the rest keep theirs. */
export function setFlags(c: Cpu, mask: number, bits: number): void {
  materializeFlags(c)
  c.eflags = (c.eflags & ~mask) | (bits & mask)
}

/** Record a lazy result for sizes 8..32 (values already masked to the size; 32-bit values as int32). */
export function lazy(c: Cpu, fop: number, a: number, b: number, r: number): void {
  c.fop = fop
  c.fa = a
  c.fb = b
  c.fr = r
}

/** Record a lazy 64-bit result. */
export function lazy64(
  c: Cpu,
  fop: number,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
  rlo: number,
  rhi: number,
): void {
  c.fop = fop
  c.fa = alo
  c.fah = ahi
  c.fb = blo
  c.fbh = bhi
  c.fr = rlo
  c.frh = rhi
}

/** Flags SF/ZF/PF of a result, for eager setters. */
export function szp(r: number, s: number): number {
  const m = SIZE_MASKS[s]
  const v = r & m
  return (v === 0 ? ZF : 0) | (((v >>> SIGN_SHIFT[s]) & 1) !== 0 ? SF : 0) | PARITY[v & 0xff]
}

export function szp64(lo: number, hi: number): number {
  return ((lo | hi) === 0 ? ZF : 0) | (hi < 0 ? SF : 0) | PARITY[lo & 0xff]
}

/** Evaluate condition code cc (0..15, the low nibble of jcc/setcc/cmovcc). */
export function condition(c: Cpu, cc: number): boolean {
  const op = c.fop
  // Fast path: after cmp/sub the relations come straight from the operands.
  if ((op & KIND_MASK) === FK_SUB && cc >= 2) {
    const s = op & 3
    if (s === S32) {
      const a = c.fa
      const b = c.fb
      switch (cc) {
        case 2:
          return a >>> 0 < b >>> 0
        case 3:
          return a >>> 0 >= b >>> 0
        case 4:
          return a === b
        case 5:
          return a !== b
        case 6:
          return a >>> 0 <= b >>> 0
        case 7:
          return a >>> 0 > b >>> 0
        case 12:
          return a < b
        case 13:
          return a >= b
        case 14:
          return a <= b
        case 15:
          return a > b
      }
    } else if (s === S64) {
      const ah = c.fah
      const bh = c.fbh
      const al = c.fa >>> 0
      const bl = c.fb >>> 0
      switch (cc) {
        case 2:
          return ah >>> 0 < bh >>> 0 || (ah === bh && al < bl)
        case 3:
          return ah >>> 0 > bh >>> 0 || (ah === bh && al >= bl)
        case 4:
          return ah === bh && al === bl
        case 5:
          return ah !== bh || al !== bl
        case 6:
          return ah >>> 0 < bh >>> 0 || (ah === bh && al <= bl)
        case 7:
          return ah >>> 0 > bh >>> 0 || (ah === bh && al > bl)
        case 12:
          return ah < bh || (ah === bh && al < bl)
        case 13:
          return ah > bh || (ah === bh && al >= bl)
        case 14:
          return ah < bh || (ah === bh && al <= bl)
        case 15:
          return ah > bh || (ah === bh && al > bl)
      }
    }
  }
  let r: boolean
  switch (cc >> 1) {
    case 0:
      r = getOF(c)
      break
    case 1:
      r = getCF(c)
      break
    case 2:
      r = getZF(c)
      break
    case 3:
      r = getCF(c) || getZF(c)
      break
    case 4:
      r = getSF(c)
      break
    case 5:
      r = getPF(c)
      break
    case 6:
      r = getSF(c) !== getOF(c)
      break
    default:
      r = getZF(c) || getSF(c) !== getOF(c)
      break
  }
  return (cc & 1) !== 0 ? !r : r
}
