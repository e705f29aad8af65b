// The 80-bit extended format as exact soft-float (BigInt significands: x87
// code is not a hot path).
//
// A value is { se, sig }: se = sign << 15 | biased exponent (bias 16383),
// sig = the 64-bit significand with its explicit integer bit. Finite values
// are handled as exact (-1)^s * m * 2^e with m a non-negative BigInt; every
// result is produced from the exact value by one rounding (roundTo) under the
// rounding control and the precision/format in effect, so results are the
// correctly rounded ones the hardware produces.
//
// Exception bits raised by an operation accumulate in `exc` (FSW bit
// positions), `roundedUp` tells whether the last rounding increased the
// magnitude (FSW.C1). Call fBegin() first.

export interface F80 {
  se: number
  sig: bigint
}

// FSW exception bits.
export const IE = 1
export const DE = 2
export const ZE = 4
export const OE = 8
export const UE = 0x10
export const PE = 0x20
export const SF = 0x40

export enum Cls {
  Zero = 0,
  Normal = 1,
  Denormal = 2,
  Inf = 3,
  QNaN = 4,
  SNaN = 5,
  /** Unnormals, pseudo-NaNs, pseudo-infinities: invalid operands since the 387. */
  Unsupported = 6,
}

const B63 = 1n << 63n
const B62 = 1n << 62n
const M64 = (1n << 64n) - 1n

export const INDEFINITE: F80 = { se: 0xffff, sig: 0xc000000000000000n }
export const ONE: F80 = { se: 0x3fff, sig: B63 }
export const ZERO: F80 = { se: 0, sig: 0n }

export let exc = 0
export let roundedUp = false
/** Rounding control 0 nearest, 1 down, 2 up, 3 toward zero. */
let rc = 0

export function fBegin(fcw: number): void {
  exc = 0
  roundedUp = false
  rc = (fcw >> 10) & 3
}

export function raise(bits: number): void {
  exc |= bits
}

/** Withdraw exception bits raised so far (a memory operand's DE when the other operand is a NaN). */
export function withdraw(bits: number): void {
  exc &= ~bits
}

/** Precision (significand bits) selected by FCW.PC. */
export function pcBits(fcw: number): number {
  const pc = (fcw >> 8) & 3
  return pc === 0 ? 24 : pc === 2 ? 53 : 64
}

export function classify(v: F80): Cls {
  const e = v.se & 0x7fff
  const sig = v.sig
  if (e === 0) return sig === 0n ? Cls.Zero : Cls.Denormal
  if ((sig & B63) === 0n) return Cls.Unsupported
  if (e === 0x7fff) {
    if ((sig & (B63 - 1n)) === 0n) return Cls.Inf
    return (sig & B62) !== 0n ? Cls.QNaN : Cls.SNaN
  }
  return Cls.Normal
}

export const isNaN80 = (k: Cls): boolean => k === Cls.QNaN || k === Cls.SNaN
export const signOf = (v: F80): number => (v.se >> 15) & 1

/** Exponent of the significand's least significant bit for a finite value. */
function lsbExp(v: F80): number {
  const e = v.se & 0x7fff
  return (e === 0 ? 1 : e) - 16383 - 63
}

export function bitlen(x: bigint): number {
  // x > 0
  let n = 0
  while (x >= 1n << 256n) {
    x >>= 256n
    n += 256
  }
  while (x >= 1n << 32n) {
    x >>= 32n
    n += 32
  }
  return n + (32 - Math.clz32(Number(x)))
}

export function inf(s: number): F80 {
  return { se: (s << 15) | 0x7fff, sig: B63 }
}
export function zero(s: number): F80 {
  return { se: s << 15, sig: 0n }
}
export function negate(v: F80): F80 {
  return { se: v.se ^ 0x8000, sig: v.sig }
}
export function quiet(v: F80): F80 {
  return { se: v.se, sig: v.sig | B62 }
}

/** What fld m32/m64 pushes: an SNaN source raises IE and is quieted. */
export function loadQuiet(v: F80): F80 {
  if (classify(v) !== Cls.SNaN) return v
  exc |= IE
  return quiet(v)
}

/** A format to round to: significand bits kept, the format's full precision, normal exponent range. */
export interface Fmt {
  prec: number
  full: number
  emin: number
  emax: number
}
export const EXT64: Fmt = { prec: 64, full: 64, emin: -16382, emax: 16383 }
export const DBL: Fmt = { prec: 53, full: 53, emin: -1022, emax: 1023 }
export const SGL: Fmt = { prec: 24, full: 24, emin: -126, emax: 127 }
const extFmts: Fmt[] = [
  { prec: 24, full: 64, emin: -16382, emax: 16383 },
  EXT64,
  { prec: 53, full: 64, emin: -16382, emax: 16383 },
  EXT64,
]
/** The extended format with FCW.PC's precision. */
export function extFmt(fcw: number): Fmt {
  return extFmts[(fcw >> 8) & 3]
}

/** Result of roundTo: q * 2^l (q === 0n for zero), or an infinity when inf is true. */
let rq = 0n
let rl = 0
let rInf = false

/**
 * Round (-1)^s * m * 2^e to fmt under the current rounding control (m may
 * carry a sticky bit in its lowest position: callers append one).
 */
function roundTo(s: number, m: bigint, e: number, f: Fmt): void {
  rInf = false
  if (m === 0n) {
    rq = 0n
    rl = 0
    return
  }
  const n = bitlen(m)
  const E = e + n - 1
  const l = Math.max(E - f.prec + 1, f.emin - f.prec + 1)
  let q: bigint
  let inexact = false
  if (l <= e) q = m << BigInt(e - l)
  else {
    const sh = BigInt(l - e)
    q = m >> sh
    const rem = m - (q << sh)
    if (rem !== 0n) {
      inexact = true
      const half = 1n << (sh - 1n)
      const up =
        rc === 0
          ? rem > half || (rem === half && (q & 1n) === 1n)
          : rc === 1
            ? s === 1
            : rc === 2
              ? s === 0
              : false
      if (up) {
        q += 1n
        roundedUp = true
      }
    }
  }
  if (inexact) {
    exc |= PE
    if (E < f.emin) exc |= UE
  }
  if (q === 0n) {
    rq = 0n
    rl = 0
    return
  }
  const er = l + bitlen(q) - 1
  if (er > f.emax) {
    exc |= OE | PE
    const toInf = rc === 0 || (rc === 1 && s === 1) || (rc === 2 && s === 0)
    roundedUp = toInf
    if (toInf) rInf = true
    else {
      rq = (1n << BigInt(f.prec)) - 1n
      rl = f.emax - f.prec + 1
    }
    return
  }
  rq = q
  rl = l
}

/** Pack roundTo's result into the extended format. */
function packExt(s: number): F80 {
  if (rInf) return inf(s)
  if (rq === 0n) return zero(s)
  const bl = bitlen(rq)
  const er = rl + bl - 1
  if (er >= -16382) return { se: (s << 15) | (er + 16383), sig: (rq << BigInt(64 - bl)) & M64 }
  const sig = rq << BigInt(rl + 16445)
  // A denormal that rounded up into the normal range has its integer bit set: exponent 1.
  return { se: (s << 15) | ((sig & B63) !== 0n ? 1 : 0), sig }
}

/** Round an exact value to extended precision (FCW.PC bits, or fmt). */
export function roundExt(s: number, m: bigint, e: number, f: Fmt = EXT64): F80 {
  roundTo(s, m, e, f)
  return packExt(s)
}

// ---------------------------------------------------------------- conversions

/** float32 bits (as uint32 number) to extended; sets DE for denormals; SNaNs stay signalling (see loadQuiet). */
export function fromF32(bits: number): F80 {
  const s = bits >>> 31
  const e = (bits >>> 23) & 0xff
  const frac = BigInt(bits & 0x7fffff)
  if (e === 0xff) {
    if (frac === 0n) return inf(s)
    return { se: (s << 15) | 0x7fff, sig: B63 | (frac << 40n) }
  }
  if (e === 0) {
    if (frac === 0n) return zero(s)
    exc |= DE
    return roundExt(s, frac, -149)
  }
  return { se: (s << 15) | (e - 127 + 16383), sig: B63 | (frac << 40n) }
}

/** float64 bits to extended. */
export function fromF64(bits: bigint): F80 {
  const s = Number(bits >> 63n)
  const e = Number((bits >> 52n) & 0x7ffn)
  const frac = bits & 0xfffffffffffffn
  if (e === 0x7ff) {
    if (frac === 0n) return inf(s)
    return { se: (s << 15) | 0x7fff, sig: B63 | (frac << 11n) }
  }
  if (e === 0) {
    if (frac === 0n) return zero(s)
    exc |= DE
    return roundExt(s, frac, -1074)
  }
  return { se: (s << 15) | (e - 1023 + 16383), sig: B63 | (frac << 11n) }
}

/** A signed integer to extended (exact). */
export function fromInt(v: bigint): F80 {
  if (v === 0n) return zero(0)
  const s = v < 0n ? 1 : 0
  return roundExt(s, s ? -v : v, 0)
}

function toIeee(v: F80, f: Fmt, fracBits: number, expBits: number): bigint {
  const k = classify(v)
  const s = BigInt(signOf(v))
  const top = s << BigInt(fracBits + expBits)
  const expAll = BigInt((1 << expBits) - 1) << BigInt(fracBits)
  const qbit = 1n << BigInt(fracBits - 1)
  switch (k) {
    case Cls.Zero:
      return top
    case Cls.Inf:
      return top | expAll
    case Cls.QNaN:
    case Cls.SNaN:
      if (k === Cls.SNaN) exc |= IE
      return top | expAll | qbit | ((v.sig & (B63 - 1n)) >> BigInt(63 - fracBits))
    case Cls.Unsupported:
      exc |= IE
      return (1n << BigInt(fracBits + expBits)) | expAll | qbit
  }
  // No DE for a denormal source (the host does not report it for stores).
  const sn = Number(s)
  roundTo(sn, v.sig, lsbExp(v), f)
  if (rInf) return top | expAll
  if (rq === 0n) return top
  const bl = bitlen(rq)
  const er = rl + bl - 1
  const bias = (1 << (expBits - 1)) - 1
  if (er >= f.emin) {
    const frac = (rq << BigInt(fracBits + 1 - bl)) & ((1n << BigInt(fracBits)) - 1n)
    return top | (BigInt(er + bias) << BigInt(fracBits)) | frac
  }
  // Denormal (a carry into the exponent field makes it the smallest normal by itself).
  return top | (rq << BigInt(rl - (f.emin - fracBits)))
}

export function toF32(v: F80): number {
  return Number(toIeee(v, SGL, 23, 8))
}
export function toF64(v: F80): bigint {
  return toIeee(v, DBL, 52, 11)
}

/**
 * Extended to a signed integer of `bits` bits, rounded by RC (or truncated);
 * out of range, NaN, infinity: IE and the integer indefinite (-2^(bits-1)).
 */
export function toInt(v: F80, bits: number, truncate: boolean): bigint {
  const k = classify(v)
  const indef = -(1n << BigInt(bits - 1))
  if (k === Cls.Zero) return 0n
  if (k !== Cls.Normal && k !== Cls.Denormal) {
    exc |= IE
    return indef
  }
  const s = signOf(v)
  const q = roundInt(s, v.sig, lsbExp(v), truncate ? 3 : rc)
  const r = s ? -q : q
  if (r < indef || r >= -indef) {
    exc = (exc & ~PE) | IE
    roundedUp = false
    return indef
  }
  return r
}

/** Round m * 2^e to an integer magnitude with rounding mode mode (0-3) for sign s; sets PE/roundedUp. */
function roundInt(s: number, m: bigint, e: number, mode: number): bigint {
  if (e >= 0) return m << BigInt(e)
  if (-e > 70) {
    // |value| < 2^-6: zero or one depending on the mode.
    exc |= PE
    const up = (mode === 1 && s === 1) || (mode === 2 && s === 0)
    if (up) roundedUp = true
    return up ? 1n : 0n
  }
  const sh = BigInt(-e)
  let q = m >> sh
  const rem = m - (q << sh)
  if (rem !== 0n) {
    exc |= PE
    const half = 1n << (sh - 1n)
    const up =
      mode === 0
        ? rem > half || (rem === half && (q & 1n) === 1n)
        : mode === 1
          ? s === 1
          : mode === 2
            ? s === 0
            : false
    if (up) {
      q += 1n
      roundedUp = true
    }
  }
  return q
}

// ---------------------------------------------------------------- arithmetic

/** NaN/unsupported operands of a two-operand operation: the result, or null when both are numbers. */
export function nanResult(a: F80, ka: Cls, b: F80, kb: Cls): F80 | null {
  if (ka === Cls.Unsupported || kb === Cls.Unsupported) {
    exc |= IE
    return INDEFINITE
  }
  const na = isNaN80(ka)
  const nb = isNaN80(kb)
  if (!na && !nb) return null
  if (ka === Cls.SNaN || kb === Cls.SNaN) exc |= IE
  if (na && nb) {
    // An SNaN and a QNaN give the QNaN; two of a kind the larger significand.
    if (ka !== kb) return quiet(ka === Cls.QNaN ? a : b)
    const sa = a.sig | B62
    const sb = b.sig | B62
    if (sa > sb) return quiet(a)
    if (sb > sa) return quiet(b)
    return quiet((a.se & 0x8000) === 0 ? a : b)
  }
  return quiet(na ? a : b)
}

function denormCheck(ka: Cls, kb: Cls): void {
  if (ka === Cls.Denormal || kb === Cls.Denormal) exc |= DE
}

/** a + b, or a - b when `subtract` (NaN operands propagate with their own signs). */
export function add(a: F80, b: F80, f: Fmt, subtract = false): F80 {
  const ka = classify(a)
  const kb = classify(b)
  const n = nanResult(a, ka, b, kb)
  if (n) return n
  denormCheck(ka, kb)
  if (subtract) b = negate(b)
  const sa = signOf(a)
  const sb = signOf(b)
  if (ka === Cls.Inf || kb === Cls.Inf) {
    if (ka === Cls.Inf && kb === Cls.Inf && sa !== sb) {
      exc |= IE
      return INDEFINITE
    }
    return ka === Cls.Inf ? a : b
  }
  if (ka === Cls.Zero && kb === Cls.Zero) return zero(sa === sb ? sa : rc === 1 ? 1 : 0)
  let ma = a.sig
  let ea = lsbExp(a)
  let mb = b.sig
  let eb = lsbExp(b)
  if (ka === Cls.Zero) return roundExt(sb, mb, eb, f)
  if (kb === Cls.Zero) return roundExt(sa, ma, ea, f)
  // Align exactly; an operand far below the other only matters as a sticky bit.
  if (ea - eb > 200) {
    mb = 1n
    eb = ea - 140
  } else if (eb - ea > 200) {
    ma = 1n
    ea = eb - 140
  }
  const e = Math.min(ea, eb)
  let va = ma << BigInt(ea - e)
  if (sa) va = -va
  let vb = mb << BigInt(eb - e)
  if (sb) vb = -vb
  const sum = va + vb
  if (sum === 0n) return zero(rc === 1 ? 1 : 0)
  return sum < 0n ? roundExt(1, -sum, e, f) : roundExt(0, sum, e, f)
}

export function mul(a: F80, b: F80, f: Fmt): F80 {
  const ka = classify(a)
  const kb = classify(b)
  const n = nanResult(a, ka, b, kb)
  if (n) return n
  denormCheck(ka, kb)
  const s = signOf(a) ^ signOf(b)
  if (ka === Cls.Inf || kb === Cls.Inf) {
    if (ka === Cls.Zero || kb === Cls.Zero) {
      exc |= IE
      return INDEFINITE
    }
    return inf(s)
  }
  if (ka === Cls.Zero || kb === Cls.Zero) return zero(s)
  return roundExt(s, a.sig * b.sig, lsbExp(a) + lsbExp(b), f)
}

export function div(a: F80, b: F80, f: Fmt): F80 {
  const ka = classify(a)
  const kb = classify(b)
  const n = nanResult(a, ka, b, kb)
  if (n) return n
  // Invalid and divide-by-zero take precedence over DE.
  if (kb !== Cls.Zero && !(ka === Cls.Inf && kb === Cls.Inf)) denormCheck(ka, kb)
  const s = signOf(a) ^ signOf(b)
  if (ka === Cls.Inf) {
    if (kb === Cls.Inf) {
      exc |= IE
      return INDEFINITE
    }
    return inf(s)
  }
  if (kb === Cls.Inf) return zero(s)
  if (kb === Cls.Zero) {
    if (ka === Cls.Zero) {
      exc |= IE
      return INDEFINITE
    }
    exc |= ZE
    return inf(s)
  }
  if (ka === Cls.Zero) return zero(s)
  const num = a.sig << 130n
  const q = num / b.sig
  const r = num - q * b.sig
  return roundExt(s, (q << 1n) | (r !== 0n ? 1n : 0n), lsbExp(a) - lsbExp(b) - 131, f)
}

function isqrt(n: bigint): bigint {
  if (n < 2n) return n
  let x = 1n << BigInt((bitlen(n) >> 1) + 1)
  for (;;) {
    const y = (x + n / x) >> 1n
    if (y >= x) return x
    x = y
  }
}

export function sqrt(a: F80, f: Fmt): F80 {
  const ka = classify(a)
  if (ka === Cls.Unsupported) {
    exc |= IE
    return INDEFINITE
  }
  if (isNaN80(ka)) {
    if (ka === Cls.SNaN) exc |= IE
    return quiet(a)
  }
  if (ka === Cls.Zero) return a
  if (signOf(a)) {
    exc |= IE
    return INDEFINITE
  }
  if (ka === Cls.Inf) return a
  if (ka === Cls.Denormal) exc |= DE
  let e = lsbExp(a)
  let k = 140
  if (((e - k) & 1) !== 0) k++
  const m = a.sig << BigInt(k)
  e -= k
  const r = isqrt(m)
  return roundExt(0, (r << 1n) | (r * r !== m ? 1n : 0n), e / 2 - 1, f)
}

/** Round to an integer under RC (frndint). */
export function roundToInteger(a: F80): F80 {
  const ka = classify(a)
  if (ka === Cls.Unsupported) {
    exc |= IE
    return INDEFINITE
  }
  if (isNaN80(ka)) {
    if (ka === Cls.SNaN) exc |= IE
    return quiet(a)
  }
  if (ka === Cls.Zero || ka === Cls.Inf) return a
  if (ka === Cls.Denormal) exc |= DE
  const e = lsbExp(a)
  if (e >= 0) return a
  const s = signOf(a)
  const q = roundInt(s, a.sig, e, rc)
  return q === 0n ? zero(s) : roundExt(s, q, 0)
}

/**
 * Compare: -2 unordered, -1 a < b, 0 equal, 1 a > b. IE for SNaN, for any
 * NaN when `signalling`, and for unsupported operands.
 */
export function compare(a: F80, b: F80, signalling: boolean): number {
  const ka = classify(a)
  const kb = classify(b)
  if (ka === Cls.Unsupported || kb === Cls.Unsupported) {
    exc |= IE
    return -2
  }
  if (isNaN80(ka) || isNaN80(kb)) {
    if (signalling || ka === Cls.SNaN || kb === Cls.SNaN) exc |= IE
    return -2
  }
  denormCheck(ka, kb)
  const va = toRational(a, ka)
  const vb = toRational(b, kb)
  return va < vb ? -1 : va > vb ? 1 : 0
}

/** A totally ordered key for non-NaN values: infinities at +-2^20000. */
function toRational(v: F80, k: Cls): bigint {
  if (k === Cls.Zero) return 0n
  const s = signOf(v)
  const mag = k === Cls.Inf ? 1n << 40000n : v.sig << BigInt(lsbExp(v) + 16445)
  return s ? -mag : mag
}

/**
 * fprem (ieee false: truncated quotient) / fprem1 (nearest quotient).
 * Returns the new ST0 and the C bits (C0 C1 C2 C3 as FSW bits 8 9 10 14),
 * or cc -1 for a NaN or invalid operand (C0 and C3 are then left alone).
 */
export function remainder(a: F80, b: F80, ieee: boolean): { r: F80; cc: number } {
  const ka = classify(a)
  const kb = classify(b)
  const n = nanResult(a, ka, b, kb)
  if (n) return { r: n, cc: -1 }
  if (ka === Cls.Inf || kb === Cls.Zero) {
    exc |= IE
    return { r: INDEFINITE, cc: -1 }
  }
  denormCheck(ka, kb)
  if (ka === Cls.Zero || kb === Cls.Inf) return { r: a, cc: 0 }
  const s = signOf(a)
  const ea = lsbExp(a)
  let eb = lsbExp(b)
  const d = ea + bitlen(a.sig) - (eb + bitlen(b.sig))
  let partial = false
  if (d >= 64) {
    // Partial remainder: reduce the exponent difference by d - N, N in 32..63.
    partial = true
    const nn = (d & 31) | 32
    eb += d - nn
  }
  const e = Math.min(ea, eb)
  const A = a.sig << BigInt(ea - e)
  const B = b.sig << BigInt(eb - e)
  let q = A / B
  let r = A - q * B
  let rs = s
  if (ieee && !partial) {
    const r2 = r << 1n
    if (r2 > B || (r2 === B && (q & 1n) === 1n)) {
      q += 1n
      r = B - r
      rs ^= 1
    }
  }
  const res = r === 0n ? zero(s) : roundExt(rs, r, e)
  if (partial) return { r: res, cc: 0x400 }
  const cc =
    (Number(q & 4n) !== 0 ? 0x100 : 0) |
    (Number(q & 2n) !== 0 ? 0x4000 : 0) |
    (Number(q & 1n) !== 0 ? 0x200 : 0)
  return { r: res, cc }
}

/** fscale: a * 2^trunc(b). */
export function scale(a: F80, b: F80): F80 {
  const ka = classify(a)
  const kb = classify(b)
  const n = nanResult(a, ka, b, kb)
  if (n) return n
  denormCheck(ka, kb)
  if (kb === Cls.Inf) {
    if (signOf(b) === 0) {
      if (ka === Cls.Zero) {
        exc |= IE
        return INDEFINITE
      }
      return ka === Cls.Inf ? a : inf(signOf(a))
    }
    if (ka === Cls.Inf) {
      exc |= IE
      return INDEFINITE
    }
    return zero(signOf(a))
  }
  if (ka === Cls.Zero || ka === Cls.Inf) return a
  let t = 0n
  if (kb !== Cls.Zero) {
    const eb = lsbExp(b)
    t = eb >= 0 ? (eb > 40 ? 1n << 40n : b.sig << BigInt(eb)) : -eb >= 64 ? 0n : b.sig >> BigInt(-eb)
    if (t > 1n << 20n) t = 1n << 20n
    if (signOf(b)) t = -t
  }
  return roundExt(signOf(a), a.sig, lsbExp(a) + Number(t))
}
