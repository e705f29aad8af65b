// IEEE 754 arithmetic as SSE performs it: NaN propagation, the default NaN,
// MXCSR rounding control, DAZ/FTZ and the six sticky exception flags.
//
// Values come in and go out as bit patterns in SCRATCH (sse-common.ts), so
// NaN payloads never pass through JS numbers (whose NaN bits are not
// guaranteed). Arithmetic is done with JS doubles, which are exact IEEE
// binary64 with round-to-nearest-even; single precision is the double result
// rounded by Math.fround (correct: binary64 has more than 2*24+2 bits, so the
// double rounding of +, -, *, /, sqrt is innocuous).
//
// Rounding modes other than nearest and the inexact (PE) / underflow (UE)
// flags need to know on which side of the rounded result the exact result
// lies. That sign comes from error-free transformations (TwoSum, Dekker's
// TwoProduct; for / and sqrt the exact remainder) where they are exact, and
// from BigInt arithmetic at the extremes of the exponent range. A directed
// result is then the round-to-nearest one or its neighbour.
//
// Exceptions always behave as masked (MXCSR's mask bits are not consulted;
// #XM is never raised): the masked response is produced and the flag set.
// Flag rules (SDM vol. 1 11.5.2 and each instruction's exception list):
//   IE  SNaN operand; QNaN operand of a signalling compare (comis, cmp lt/le/nlt/nle)
//       or of min/max; inf-inf, 0*inf, 0/0, inf/inf, sqrt(<0); float->int
//       conversion of a NaN or out-of-range value.
//   DE  a denormal operand of an arithmetic/compare/convert-between-floats
//       operation, unless a NaN operand or an invalid/divide-by-zero takes
//       precedence (and never with DAZ, which reads denormals as signed zeros).
//   ZE  finite nonzero / 0.
//   OE  the rounded result overflows (set with PE).
//   UE  the result is tiny (below the smallest normal after rounding) and inexact;
//       with FTZ any tiny result is flushed to a signed zero and UE, PE are set.
//   PE  the result is inexact.
// Overflow and tininess are judged after rounding (with an unbounded
// exponent), in the current rounding mode, as x86 does.

import { F32, F64, I32 } from './sse-common.js'

// MXCSR bits.
const IE = 0x01
const DE = 0x02
const ZE = 0x04
const OE = 0x08
const UE = 0x10
const PE = 0x20
const DAZ = 0x40
const FTZ = 0x8000

// Operations.
export const ADD = 0
export const SUB = 1
export const MUL = 2
export const DIV = 3
export const SQRT = 4
export const MIN = 5
export const MAX = 6

// Rounding control (MXCSR bits 13-14).
const RN = 0
const RD = 1
const RU = 2
const RZ = 3

// ---------------------------------------------------------------- per-instruction state

/** Flags raised by the instruction in progress (see fpFlags). */
let fx = 0
/** Rounding control, DAZ and FTZ of the instruction in progress. */
let rc = RN
let daz = false
let ftz = false
/** MXCSR.UM clear: underflow is signalled on tininess alone (and FTZ does not apply). */
let ueUnmasked = false
/**
 * Round to nearest with PE already set and masked: whether a result is
 * inexact cannot change anything, so a normal, finite result of finite
 * operands is the JS result as it is (see finishD). Programs set PE with
 * their first inexact operation and keep it, so this is the common case.
 */
let inexactMoot = false

/** Start a floating-point instruction: latch MXCSR's controls. */
export function fpBegin(mxcsr: number): void {
  fx = 0
  rc = (mxcsr >> 13) & 3
  daz = (mxcsr & DAZ) !== 0
  ftz = (mxcsr & FTZ) !== 0
  ueUnmasked = (mxcsr & (UE << 7)) === 0
  inexactMoot = rc === RN && (mxcsr & PE) !== 0 && (mxcsr & (PE << 7)) !== 0
}

/** The flags the instruction raised (the caller ORs them into MXCSR). */
export function fpFlags(): number {
  return fx
}

// ---------------------------------------------------------------- bit helpers

const NB = new ArrayBuffer(8)
const NF64 = new Float64Array(NB)
const NF32 = new Float32Array(NB)
const NI = new Int32Array(NB)

const MAX_D = Number.MAX_VALUE
const MIN_NORMAL_D = 2 ** -1022
const MAX_F = 3.4028234663852886e38
const MIN_NORMAL_F = 2 ** -126
const MIN_SUB_F = 2 ** -149

/** The default NaN ("real indefinite"): single 0xffc00000, double 0xfff8000000000000. */
export const INDEFINITE_F = 0xffc00000 | 0
const INDEFINITE_D_HI = 0xfff80000 | 0

export function isNaNF(b: number): boolean {
  return (b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0
}
function isSNaNF(b: number): boolean {
  return isNaNF(b) && (b & 0x400000) === 0
}
export function isDenormalF(b: number): boolean {
  return (b & 0x7f800000) === 0 && (b & 0x7fffff) !== 0
}
export function isNaND(lo: number, hi: number): boolean {
  return (hi & 0x7ff00000) === 0x7ff00000 && ((hi & 0xfffff) | lo) !== 0
}
function isSNaND(lo: number, hi: number): boolean {
  return isNaND(lo, hi) && (hi & 0x80000) === 0
}
export function isDenormalD(lo: number, hi: number): boolean {
  return (hi & 0x7ff00000) === 0 && ((hi & 0xfffff) | lo) !== 0
}

/** The bits of a single (x must not be NaN). */
function bitsF(x: number): number {
  NF32[0] = x
  return NI[0]
}

function nextUpD(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return x
  if (x === 0) return Number.MIN_VALUE
  NF64[0] = x
  if (x > 0) {
    NI[0] = (NI[0] + 1) | 0
    if (NI[0] === 0) NI[1] = (NI[1] + 1) | 0
  } else {
    if (NI[0] === 0) NI[1] = (NI[1] - 1) | 0
    NI[0] = (NI[0] - 1) | 0
  }
  return NF64[0]
}
function nextDownD(x: number): number {
  return -nextUpD(-x)
}
function nextUpF(x: number): number {
  if (x === Number.POSITIVE_INFINITY) return x
  if (x === 0) return MIN_SUB_F
  NF32[0] = x
  NI[0] = x > 0 ? NI[0] + 1 : NI[0] - 1
  return NF32[0]
}
function nextDownF(x: number): number {
  return -nextUpF(-x)
}

function sign(v: number): number {
  return v > 0 ? 1 : v < 0 ? -1 : 0
}

/**
 * Apply the rounding control to a round-to-nearest result `r` whose exact value
 * lies on side `e` of it (sign of exact - r). `single` selects the float grid.
 */
function directed(r: number, e: number, single: boolean): number {
  if (e === 0 || rc === RN) return r
  if (rc === RD) return e < 0 ? (single ? nextDownF(r) : nextDownD(r)) : r
  if (rc === RU) return e > 0 ? (single ? nextUpF(r) : nextUpD(r)) : r
  // RZ: step towards zero when the exact value is smaller in magnitude.
  if (e < 0 && r > 0) return single ? nextDownF(r) : nextDownD(r)
  if (e > 0 && r < 0) return single ? nextUpF(r) : nextUpD(r)
  return r
}

// ---------------------------------------------------------------- exact error signs

const SPLIT = 134217729 // 2^27 + 1

/** Dekker's TwoProduct: the exact a*b - p, for operands and products in safe ranges. */
function twoProductErr(a: number, b: number, p: number): number {
  let t = SPLIT * a
  const ah = t - (t - a)
  const al = a - ah
  t = SPLIT * b
  const bh = t - (t - b)
  const bl = b - bh
  return ah * bh - p + ah * bl + al * bh + al * bl
}

const LO_SAFE = 2 ** -900
const HI_SAFE = 2 ** 995
function safe(x: number): boolean {
  const m = Math.abs(x)
  return m >= LO_SAFE && m <= HI_SAFE
}

/** x = m * 2^e exactly (m a signed BigInt); x finite. */
function decompose(x: number): [bigint, number] {
  NF64[0] = x
  const lo = NI[0] >>> 0
  const hi = NI[1]
  const exp = (hi >>> 20) & 0x7ff
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo)
  let e = -1074
  if (exp !== 0) {
    m |= 1n << 52n
    e = exp - 1075
  }
  return [hi < 0 ? -m : m, e]
}

/** sign(m1 * 2^e1 - m2 * 2^e2) */
function cmpScaled(m1: bigint, e1: number, m2: bigint, e2: number): number {
  const e = Math.min(e1, e2)
  const v = (m1 << BigInt(e1 - e)) - (m2 << BigInt(e2 - e))
  return v > 0n ? 1 : v < 0n ? -1 : 0
}

/** sign(exact(a op b) - r) by BigInt arithmetic (any finite operands and finite r). */
function errSignExact(op: number, a: number, b: number, r: number): number {
  const [ma, ea] = decompose(a)
  const [mr, er] = decompose(r)
  if (op === SQRT) return cmpScaled(ma, ea, mr * mr, 2 * er)
  const [mb, eb] = decompose(b)
  switch (op) {
    case ADD:
    case SUB: {
      const e = Math.min(ea, eb)
      const s = (ma << BigInt(ea - e)) + (op === ADD ? 1n : -1n) * (mb << BigInt(eb - e))
      return cmpScaled(s, e, mr, er)
    }
    case MUL:
      return cmpScaled(ma * mb, ea + eb, mr, er)
    default:
      // a/b - r has the sign of (a - r*b) * sign(b).
      return cmpScaled(ma, ea, mr * mb, er + eb) * (b < 0 ? -1 : 1)
  }
}

/**
 * sign(exact(a op b) - r) for finite non-NaN operands whose round-to-nearest
 * double result r is finite (sqrt: a is the operand, b unused).
 */
function errSignD(op: number, a: number, b: number, r: number): number {
  switch (op) {
    case ADD:
    case SUB: {
      const bb = op === ADD ? b : -b
      if (Math.abs(a) > 2 ** 1020 || Math.abs(bb) > 2 ** 1020) return errSignExact(op, a, b, r)
      const bp = r - a
      const ap = r - bp
      return sign(a - ap + (bb - bp))
    }
    case MUL:
      if (a === 0 || b === 0) return 0
      if (r === 0) return a < 0 !== b < 0 ? -1 : 1
      if (safe(a) && safe(b) && Math.abs(r) >= 2 ** -960 && Math.abs(r) <= 2 ** 1020)
        return sign(twoProductErr(a, b, a * b))
      return errSignExact(op, a, b, r)
    case DIV: {
      if (a === 0) return 0
      if (r === 0) return a < 0 !== b < 0 ? -1 : 1
      if (safe(r) && safe(b) && Math.abs(a) >= 2 ** -960 && Math.abs(a) <= 2 ** 1020) {
        const p = r * b
        const rem = a - p - twoProductErr(r, b, p)
        return b < 0 ? -sign(rem) : sign(rem)
      }
      return errSignExact(op, a, b, r)
    }
    default: {
      // SQRT
      if (a === 0) return 0
      if (a >= 2 ** -960 && a <= 2 ** 1020) {
        const p = r * r
        return sign(a - p - twoProductErr(r, r, p))
      }
      return errSignExact(op, a, b, r)
    }
  }
}

/** Round-to-nearest JS computation of a op b. */
function compute(op: number, a: number, b: number): number {
  switch (op) {
    case ADD:
      return a + b
    case SUB:
      return a - b
    case MUL:
      return a * b
    case DIV:
      return a / b
    default:
      return Math.sqrt(a)
  }
}

/** An exact zero sum/difference is -0 when rounding down, unless both addends are -0 (or +0 - +0 style). */
function exactZeroSign(op: number, a: number, b: number, r: number): number {
  if (rc !== RD || r !== 0 || (op !== ADD && op !== SUB)) return r
  const bNeg = op === ADD ? Object.is(b, -0) : Object.is(b, 0)
  // Both effective addends +0 -> +0; otherwise (x + -x, or -0 + -0) -> -0.
  return Object.is(a, 0) && !bNeg && b === 0 ? 0 : -0
}

// ---------------------------------------------------------------- double precision

/**
 * One binary64 lane: I32 lanes ri..ri+1 = (a op b), a at I32[ai], b at I32[bi]
 * (dword indices, even). For SQRT the operand is b. Handles NaNs, DAZ, FTZ,
 * rounding control and flags; MIN/MAX return the second operand on NaN or
 * equality.
 */
export function laneD(op: number, ai: number, bi: number, ri: number): void {
  const unary = op === SQRT
  const alo = I32[ai]
  const ahi = I32[ai + 1]
  const blo = I32[bi]
  const bhi = I32[bi + 1]
  const aN = !unary && isNaND(alo, ahi)
  const bN = isNaND(blo, bhi)
  if (aN || bN) {
    if (op === MIN || op === MAX) {
      // The second operand as read (a denormal is a zero under DAZ).
      fx |= IE
      const z = daz && isDenormalD(blo, bhi)
      I32[ri] = z ? 0 : blo
      I32[ri + 1] = z ? bhi & 0x80000000 : bhi
      return
    }
    if ((aN && (ahi & 0x80000) === 0) || (bN && (bhi & 0x80000) === 0)) fx |= IE
    if (aN) {
      I32[ri] = alo
      I32[ri + 1] = ahi | 0x80000
    } else {
      I32[ri] = blo
      I32[ri + 1] = bhi | 0x80000
    }
    return
  }
  let a = unary ? 0 : F64[ai >> 1]
  let b = F64[bi >> 1]
  let denormal = false
  if (!unary && isDenormalD(alo, ahi)) {
    if (daz) a = ahi < 0 ? -0 : 0
    else denormal = true
  }
  if (isDenormalD(blo, bhi)) {
    if (daz) b = bhi < 0 ? -0 : 0
    else denormal = true
  }
  if (op === MIN || op === MAX) {
    if (denormal) fx |= DE
    const takeA = op === MIN ? a < b : a > b
    F64[ri >> 1] = takeA ? a : b
    if (!daz) {
      // Keep the exact bits (a -0/+0 pair returns the second operand as is).
      I32[ri] = takeA ? alo : blo
      I32[ri + 1] = takeA ? ahi : bhi
    }
    return
  }
  if (unary) a = b
  finishD(op, a, unary ? 0 : b, denormal, ri)
}

function finishD(op: number, a: number, b: number, denormal: boolean, ri: number): void {
  let r = compute(op, a, b)
  // Fast path: no NaN, infinity, division by zero, denormal operand or tiny
  // result, rounding to nearest and PE moot: no flag to raise, r is the result.
  if (
    inexactMoot &&
    !denormal &&
    Math.abs(r) > MIN_NORMAL_D &&
    Math.abs(r) <= MAX_D &&
    Math.abs(a) <= MAX_D &&
    Math.abs(b) <= MAX_D
  ) {
    F64[ri >> 1] = r
    return
  }
  if (Number.isNaN(r)) {
    fx |= IE
    I32[ri] = 0
    I32[ri + 1] = INDEFINITE_D_HI
    return
  }
  if (op === DIV && b === 0 && Number.isFinite(a)) {
    // a is nonzero here (0/0 is invalid).
    fx |= ZE
    F64[ri >> 1] = r
    return
  }
  if (denormal) fx |= DE
  if (!Number.isFinite(a) || !Number.isFinite(b)) {
    F64[ri >> 1] = r
    return
  }
  if (!Number.isFinite(r)) {
    F64[ri >> 1] = overflow(r, false, exceedsD(op, a, b))
    return
  }
  let e = errSignD(op, a, b, r)
  if (e === 0) r = exactZeroSign(op, a, b, r)
  else {
    const rn = r
    r = directed(r, e, false)
    if (r !== rn) e = -e // the exact value is now on the other side
  }
  if (!Number.isFinite(r)) {
    // Rounding away from zero past the largest finite value.
    fx |= OE | PE
    F64[ri >> 1] = r
    return
  }
  edgeOp = op
  edgeA = a
  edgeB = b
  F64[ri >> 1] = underflow(r, e, MIN_NORMAL_D, edgeD)
}

/**
 * The masked overflow response for a round-to-nearest result r = ±Inf: the
 * rounding control decides between the infinity and the largest finite
 * value; OE is set when the result rounded with an unbounded exponent exceeds
 * the largest finite value, which for the directions towards zero means an
 * exact magnitude of at least 2^emax+1 (`exceeds`).
 */
function overflow(r: number, single: boolean, exceeds: boolean): number {
  const pos = r > 0
  fx |= PE
  if (!(rc === RZ || (rc === RD && pos) || (rc === RU && !pos))) {
    fx |= OE
    return r
  }
  if (exceeds) fx |= OE
  const max = single ? MAX_F : MAX_D
  return pos ? max : -max
}

/** |exact(a op b)| >= 2^1024, for finite operands whose round-to-nearest result overflowed. */
function exceedsD(op: number, a: number, b: number): boolean {
  if (rc === RN) return true
  // Halve the exact result (exactly, via a normal operand) and compare with 2^1023.
  const a2 = a / 2
  const b2 = (op === ADD || op === SUB) && Math.abs(b) >= 2 ** -1020 ? b / 2 : b
  const r2 = compute(op, a2, b2)
  const m = Math.abs(r2)
  if (m !== 2 ** 1023) return m > 2 ** 1023
  const e = errSignD(op, a2, b2, r2)
  return r2 > 0 ? e >= 0 : e <= 0
}

/** |exact(a op b)| >= 2^128 for single operands, given rd = the round-to-nearest double result. */
function exceedsF(op: number, a: number, b: number, rd: number): boolean {
  const m = Math.abs(rd)
  if (m !== 2 ** 128) return m > 2 ** 128
  const e = errSignD(op, a, b, rd)
  return rd > 0 ? e >= 0 : e <= 0
}

/**
 * Underflow handling for a finite rounded result r (e: sign of exact - r).
 * Tininess is judged after rounding, as x86 does: the exact result rounded
 * to the destination precision with an unbounded exponent is below the
 * smallest normal. That differs from |r| < smallest normal only when r is
 * exactly the smallest normal and the exact value lies below it (`edge`
 * decides then). Masked response: UE when tiny and inexact; with FTZ every
 * tiny result becomes a signed zero with UE and PE.
 */
function underflow(r: number, e: number, minNormal: number, edge: () => boolean): number {
  const inexact = e !== 0
  const m = Math.abs(r)
  let tiny = m < minNormal && (r !== 0 || inexact)
  if (!tiny && m === minNormal && (r > 0 ? e < 0 : e > 0)) tiny = edge()
  if (tiny && ueUnmasked) {
    // The unmasked response (#XM) writes no result; PE is judged on the result
    // rounded with an unbounded exponent (no denormalization loss), as on the host.
    fx |= UE
    if (edge === edgeD ? scaledInexactD() : scaledInexactF()) fx |= PE
    return r
  }
  if (inexact) fx |= PE
  if (!tiny) return r
  if (ftz) {
    fx |= UE | PE
    return r < 0 || Object.is(r, -0) ? -0 : 0
  }
  if (inexact) fx |= UE
  return r
}

// The operands of the result being checked by the `edge` callbacks (saves closures).
let edgeOp = 0
let edgeA = 0
let edgeB = 0
let edgeRd = 0

/** binary64 edge: redo the operation scaled by 2^100 (exactly) and round it there. */
function edgeD(): boolean {
  const S = 2 ** 100
  let a = edgeA
  let b = edgeB
  if (edgeOp === MUL) {
    if (Math.abs(a) <= 2 ** 900) a *= S
    else b *= S
  } else if (edgeOp === DIV) {
    if (Math.abs(a) <= 2 ** 900) a *= S
    else b /= S
  } else return false // sums and square roots are never tiny and inexact
  const r = compute(edgeOp, a, b)
  return Math.abs(directed(r, errSignD(edgeOp, a, b, r), false)) < MIN_NORMAL_D * S
}

/** Is the exact binary64 result of edgeOp inexact at 53 bits with an unbounded exponent? */
function scaledInexactD(): boolean {
  // Tiny sums are exact; square roots are never tiny. Scale a product or quotient into the normal range.
  if (edgeOp !== MUL && edgeOp !== DIV) return false
  const S = 2 ** 100
  let a = edgeA
  let b = edgeB
  if (Math.abs(a) <= 2 ** 900) a *= S
  else if (edgeOp === MUL) b *= S
  else b /= S
  return errSignD(edgeOp, a, b, compute(edgeOp, a, b)) !== 0
}

/** The same for a binary32 result: edgeRd (the nearest double) must be exact and fit in 24 bits. */
function scaledInexactF(): boolean {
  const rd = edgeRd
  if (edgeOp >= 0 && errSignD(edgeOp, edgeA, edgeB, rd) !== 0) return true
  const scaled = rd * 2 ** 150
  return Math.fround(scaled) !== scaled
}

/**
 * binary32 edge, from the round-to-nearest double result edgeRd of the exact
 * value (edgeOp < 0: edgeRd is exact): the distance below 2^-126 decides
 * against half an ulp (nearest) or one ulp (away from zero) of the binade below.
 */
function edgeF(): boolean {
  const rd = edgeRd
  const d = MIN_NORMAL_F - Math.abs(rd)
  const t = rc === RN ? 2 ** -151 : 2 ** -150
  if (d !== t) return rc === RN ? d > t : d >= t
  const e = edgeOp < 0 ? 0 : errSignD(edgeOp, edgeA, edgeB, rd)
  // The true distance is d + (|rd| - |exact|).
  const below = rd > 0 ? e < 0 : e > 0
  return rc === RN ? below : e === 0 || below
}

// ---------------------------------------------------------------- single precision

/** One binary32 lane: I32[ri] = I32[ai] op I32[bi] (for SQRT the operand is I32[bi]). */
export function laneF(op: number, ai: number, bi: number, ri: number): void {
  const unary = op === SQRT
  const ab = I32[ai]
  const bb = I32[bi]
  const aN = !unary && isNaNF(ab)
  const bN = isNaNF(bb)
  if (aN || bN) {
    if (op === MIN || op === MAX) {
      fx |= IE
      I32[ri] = daz && isDenormalF(bb) ? bb & 0x80000000 : bb
      return
    }
    if ((aN && (ab & 0x400000) === 0) || (bN && (bb & 0x400000) === 0)) fx |= IE
    I32[ri] = aN ? ab | 0x400000 : bb | 0x400000
    return
  }
  let a = unary ? 0 : F32[ai]
  let b = F32[bi]
  let denormal = false
  if (!unary && isDenormalF(ab)) {
    if (daz) a = ab < 0 ? -0 : 0
    else denormal = true
  }
  if (isDenormalF(bb)) {
    if (daz) b = bb < 0 ? -0 : 0
    else denormal = true
  }
  if (op === MIN || op === MAX) {
    if (denormal) fx |= DE
    const takeA = op === MIN ? a < b : a > b
    I32[ri] = daz ? bitsF(takeA ? a : b) : takeA ? ab : bb
    return
  }
  if (unary) a = b
  finishF(op, a, unary ? 0 : b, denormal, ri)
}

function finishF(op: number, a: number, b: number, denormal: boolean, ri: number): void {
  const rd = compute(op, a, b)
  if (inexactMoot && !denormal && Math.abs(a) <= MAX_D && Math.abs(b) <= MAX_D) {
    // As finishD's fast path, on the single grid (fround of the double result is the correctly rounded single).
    const rf = Math.fround(rd)
    if (Math.abs(rf) > MIN_NORMAL_F && Math.abs(rf) <= MAX_F) {
      F32[ri] = rf
      return
    }
  }
  if (Number.isNaN(rd)) {
    fx |= IE
    I32[ri] = INDEFINITE_F
    return
  }
  if (op === DIV && b === 0 && Number.isFinite(a)) {
    fx |= ZE
    F32[ri] = rd
    return
  }
  if (denormal) fx |= DE
  let r = Math.fround(rd)
  if (!Number.isFinite(a) || !Number.isFinite(b)) {
    F32[ri] = r
    return
  }
  if (!Number.isFinite(r)) {
    F32[ri] = overflow(r, true, exceedsF(op, a, b, rd))
    return
  }
  let e = rd !== r ? sign(rd - r) : errSignD(op, a, b, rd)
  if (e === 0) r = exactZeroSign(op, a, b, r)
  else {
    const rn = r
    r = directed(r, e, true)
    if (r !== rn) e = -e
  }
  if (!Number.isFinite(r)) {
    fx |= OE | PE
    F32[ri] = r
    return
  }
  edgeOp = op
  edgeA = a
  edgeB = b
  edgeRd = rd
  F32[ri] = underflow(r, e, MIN_NORMAL_F, edgeF)
}

// ---------------------------------------------------------------- compares

/**
 * Compare predicate (cmpps & co., imm8 bits 2:0) on two values given as
 * "unordered" plus numbers; returns true when the predicate holds.
 */
function predicate(p: number, unordered: boolean, a: number, b: number): boolean {
  switch (p) {
    case 0:
      return !unordered && a === b
    case 1:
      return !unordered && a < b
    case 2:
      return !unordered && a <= b
    case 3:
      return unordered
    case 4:
      return unordered || a !== b
    case 5:
      return unordered || !(a < b)
    case 6:
      return unordered || !(a <= b)
    default:
      return !unordered
  }
}

/** Predicates 1, 2, 5, 6 signal on QNaN operands. */
function signalling(p: number): boolean {
  return (p & 3) === 1 || (p & 3) === 2
}

/** Single compare lane: I32[ri] = all ones when predicate p holds for I32[ai] vs I32[bi]. */
export function cmpLaneF(p: number, ai: number, bi: number, ri: number): void {
  const ab = I32[ai]
  const bb = I32[bi]
  const un = isNaNF(ab) || isNaNF(bb)
  let a = 0
  let b = 0
  if (un) {
    if (isSNaNF(ab) || isSNaNF(bb) || signalling(p)) fx |= IE
  } else {
    a = F32[ai]
    b = F32[bi]
    if (isDenormalF(ab) || isDenormalF(bb)) {
      if (daz) {
        if (isDenormalF(ab)) a = 0
        if (isDenormalF(bb)) b = 0
      } else fx |= DE
    }
  }
  I32[ri] = predicate(p, un, a, b) ? -1 : 0
}

/** Double compare lane (dword indices, even). */
export function cmpLaneD(p: number, ai: number, bi: number, ri: number): void {
  const alo = I32[ai]
  const ahi = I32[ai + 1]
  const blo = I32[bi]
  const bhi = I32[bi + 1]
  const un = isNaND(alo, ahi) || isNaND(blo, bhi)
  let a = 0
  let b = 0
  if (un) {
    if (isSNaND(alo, ahi) || isSNaND(blo, bhi) || signalling(p)) fx |= IE
  } else {
    a = F64[ai >> 1]
    b = F64[bi >> 1]
    const da = isDenormalD(alo, ahi)
    const db = isDenormalD(blo, bhi)
    if (da || db) {
      if (daz) {
        if (da) a = 0
        if (db) b = 0
      } else fx |= DE
    }
  }
  const t = predicate(p, un, a, b) ? -1 : 0
  I32[ri] = t
  I32[ri + 1] = t
}

/**
 * comis/ucomis: returns -2 unordered, -1 less, 0 equal, 1 greater for the
 * values at I32[ai] and I32[bi] (single or double); raises IE/DE.
 */
export function compareOrdered(double: boolean, signalling: boolean, ai: number, bi: number): number {
  let aN: boolean
  let bN: boolean
  let aS: boolean
  let bS: boolean
  let aD: boolean
  let bD: boolean
  if (double) {
    const alo = I32[ai]
    const ahi = I32[ai + 1]
    const blo = I32[bi]
    const bhi = I32[bi + 1]
    aN = isNaND(alo, ahi)
    bN = isNaND(blo, bhi)
    aS = isSNaND(alo, ahi)
    bS = isSNaND(blo, bhi)
    aD = isDenormalD(alo, ahi)
    bD = isDenormalD(blo, bhi)
  } else {
    aN = isNaNF(I32[ai])
    bN = isNaNF(I32[bi])
    aS = isSNaNF(I32[ai])
    bS = isSNaNF(I32[bi])
    aD = isDenormalF(I32[ai])
    bD = isDenormalF(I32[bi])
  }
  if (aN || bN) {
    if (signalling || aS || bS) fx |= IE
    return -2
  }
  let a = double ? F64[ai >> 1] : F32[ai]
  let b = double ? F64[bi >> 1] : F32[bi]
  if (aD || bD) {
    if (daz) {
      if (aD) a = 0
      if (bD) b = 0
    } else fx |= DE
  }
  return a < b ? -1 : a > b ? 1 : 0
}

// ---------------------------------------------------------------- conversions between formats

/** cvtss2sd lane: single at I32[si] -> double at I32[ri..ri+1]. Exact except NaN quieting. */
export function cvtF2D(si: number, ri: number): void {
  const b = I32[si]
  if (isNaNF(b)) {
    if ((b & 0x400000) === 0) fx |= IE
    const m = b & 0x7fffff
    I32[ri] = (m & 7) << 29
    I32[ri + 1] = (b & 0x80000000) | 0x7ff80000 | (m >>> 3)
    return
  }
  let v = F32[si]
  if (isDenormalF(b)) {
    if (daz) v = b < 0 ? -0 : 0
    else fx |= DE
  }
  F64[ri >> 1] = v
}

/** cvtsd2ss lane: double at I32[si..si+1] -> single at I32[ri], rounded per RC. */
export function cvtD2F(si: number, ri: number): void {
  const lo = I32[si]
  const hi = I32[si + 1]
  if (isNaND(lo, hi)) {
    if ((hi & 0x80000) === 0) fx |= IE
    I32[ri] = (hi & 0x80000000) | 0x7fc00000 | ((hi & 0x7ffff) << 3) | (lo >>> 29)
    return
  }
  let x = F64[si >> 1]
  if (isDenormalD(lo, hi)) {
    if (daz) x = hi < 0 ? -0 : 0
    else fx |= DE
  }
  let r = Math.fround(x)
  if (!Number.isFinite(x)) {
    F32[ri] = r
    return
  }
  if (!Number.isFinite(r)) {
    F32[ri] = overflow(r, true, Math.abs(x) >= 2 ** 128)
    return
  }
  let e = sign(x - r)
  const rn = r
  r = directed(r, e, true)
  if (r !== rn) e = -e
  if (!Number.isFinite(r)) {
    fx |= OE | PE
    F32[ri] = r
    return
  }
  edgeOp = -1
  edgeRd = x
  F32[ri] = underflow(r, e, MIN_NORMAL_F, edgeF)
}

// ---------------------------------------------------------------- integer <-> float

/** Round a double to an integer-valued double per the rounding control (or truncate). */
function roundToInt(x: number, truncate: boolean): number {
  if (truncate) return Math.trunc(x)
  switch (rc) {
    case RN: {
      const f = Math.floor(x)
      const d = x - f
      if (d < 0.5) return f
      if (d > 0.5) return f + 1
      return f % 2 === 0 ? f : f + 1
    }
    case RD:
      return Math.floor(x)
    case RU:
      return Math.ceil(x)
    default:
      return Math.trunc(x)
  }
}

const TWO_31 = 2 ** 31
const TWO_32 = 2 ** 32
const TWO_63 = 2 ** 63

/** High half of the last 64-bit conversion result. */
export let cvtHi = 0

/**
 * Float value x (already a JS number; NaN allowed) to a signed integer of 32
 * or 64 bits: returns the low dword, the high one in cvtHi. Out of range or
 * NaN gives the integer indefinite (0x80000000 / 0x8000000000000000) and IE.
 * `denormal` says the source was a denormal (DAZ reads it as zero).
 */
export function floatToInt(x: number, wide: boolean, truncate: boolean, denormal: boolean): number {
  if (denormal && daz) x = 0
  if (Number.isNaN(x)) return indefiniteInt(wide)
  const r = roundToInt(x, truncate)
  if (wide ? !(r >= -TWO_63 && r < TWO_63) : !(r >= -TWO_31 && r < TWO_31)) return indefiniteInt(wide)
  if (r !== x) fx |= PE
  if (!wide) {
    cvtHi = 0
    return r | 0
  }
  const hi = Math.floor(r / TWO_32)
  cvtHi = hi | 0
  return (r - hi * TWO_32) | 0
}

function indefiniteInt(wide: boolean): number {
  fx |= IE
  if (wide) {
    cvtHi = 0x80000000 | 0
    return 0
  }
  cvtHi = 0
  return 0x80000000 | 0
}

/** int32 -> single, rounded per RC (PE when inexact). */
export function int32ToF(v: number): number {
  const r = Math.fround(v)
  const e = sign(v - r)
  if (e !== 0) fx |= PE
  return directed(r, e, true)
}

/**
 * Signed 64-bit integer (halves) -> double (single when `single`), rounded
 * per RC, PE when inexact.
 */
export function int64ToFloat(lo: number, hi: number, single: boolean): number {
  if (hi >= -0x200000 && hi < 0x200000) {
    // |v| < 2^53: exact as a double.
    const v = hi * TWO_32 + (lo >>> 0)
    if (!single) return v
    const r = Math.fround(v)
    const e = sign(v - r)
    if (e !== 0) fx |= PE
    return directed(r, e, true)
  }
  const v = (BigInt(hi) << 32n) | BigInt(lo >>> 0)
  const mag = v < 0n ? -v : v
  const bits = mag.toString(2).length
  const prec = single ? 24 : 53
  const shift = bits - prec
  if (shift <= 0) return Number(v)
  const q = mag >> BigInt(shift)
  const rem = mag - (q << BigInt(shift))
  if (rem === 0n) return Number(v)
  fx |= PE
  // Round the magnitude down (q) or up (q + 1) per RC and the sign.
  const half = 1n << BigInt(shift - 1)
  let up: boolean
  const neg = v < 0n
  switch (rc) {
    case RN:
      up = rem > half || (rem === half && (q & 1n) === 1n)
      break
    case RD:
      up = neg
      break
    case RU:
      up = !neg
      break
    default:
      up = false
  }
  const m = Number((up ? q + 1n : q) << BigInt(shift))
  return neg ? -m : m
}
