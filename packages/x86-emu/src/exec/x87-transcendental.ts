// x87 transcendentals (fsin fcos fsincos fptan fpatan f2xm1 fyl2x fyl2xp1),
// computed in a BigInt floating format with ~200-bit significands and rounded
// once to extended precision under RC: the correctly rounded value of the
// function (barring astronomically rare near-ties). Hardware results are
// only guaranteed within 1 ulp, so the last significand bit can differ from a
// given CPU (the differential test allows 1 ulp and does not compare C1/PE
// for these). PE is set for every non-trivial result, even where the true
// result is exact (e.g. fyl2x of a power of two).
//
// fsin/fcos/fptan/fsincos reduce the argument modulo pi/2 with pi rounded to
// 66 significant bits, as the hardware does (this host and Intel's
// documentation agree), so results for large arguments follow the CPU rather
// than the true function; |x| >= 2^63 sets C2 and leaves ST0 unchanged.

import {
  Cls,
  classify,
  DE,
  type F80,
  IE,
  INDEFINITE,
  inf,
  isNaN80,
  nanResult,
  ONE,
  quiet,
  raise,
  roundExt,
  signOf,
  ZE,
  zero,
} from './x87-float.js'

const P = 200

/** value = m * 2^e, m signed. */
interface BF {
  m: bigint
  e: number
}

function bl(x: bigint): number {
  if (x < 0n) x = -x
  return x === 0n ? 0 : x.toString(2).length
}

function norm(a: BF): BF {
  const n = bl(a.m)
  if (n <= P + 8) return a
  const sh = n - P
  return { m: a.m >> BigInt(sh), e: a.e + sh }
}
function add(a: BF, b: BF): BF {
  if (a.m === 0n) return b
  if (b.m === 0n) return a
  const ta = a.e + bl(a.m)
  const tb = b.e + bl(b.m)
  // A far smaller operand only nudges the larger one in its direction (keeps directed rounding right).
  if (ta - tb > 2 * P) return nudge(a, ta, b.m < 0n)
  if (tb - ta > 2 * P) return nudge(b, tb, a.m < 0n)
  const e = Math.min(a.e, b.e)
  return norm({ m: (a.m << BigInt(a.e - e)) + (b.m << BigInt(b.e - e)), e })
}
function nudge(a: BF, top: number, down: boolean): BF {
  const e = top - 2 * P - 2
  return norm({ m: (a.m << BigInt(a.e - e)) + (down ? -1n : 1n), e })
}
const neg = (a: BF): BF => ({ m: -a.m, e: a.e })
const sub = (a: BF, b: BF): BF => add(a, neg(b))
function mul(a: BF, b: BF): BF {
  return norm({ m: a.m * b.m, e: a.e + b.e })
}
function div(a: BF, b: BF): BF {
  const k = P + 8 + bl(b.m) - bl(a.m)
  const num = k >= 0 ? a.m << BigInt(k) : a.m >> BigInt(-k)
  return norm({ m: num / b.m, e: a.e - k - b.e })
}
const int = (n: number | bigint): BF => ({ m: BigInt(n), e: 0 })
const divInt = (a: BF, n: number): BF => div(a, int(n))
/** |a| below 2^-P relative to ref (series termination). */
const tiny = (a: BF, ref: BF): boolean => a.m === 0n || a.e + bl(a.m) < ref.e + bl(ref.m) - P - 4
function sqrt(a: BF): BF {
  // a > 0
  let e = a.e
  let m = a.m
  const want = 2 * P + 16
  let sh = want - bl(m)
  if (((e - sh) & 1) !== 0) sh++
  m = sh >= 0 ? m << BigInt(sh) : m >> BigInt(-sh)
  e -= sh
  let x = 1n << BigInt((bl(m) >> 1) + 1)
  for (;;) {
    const y = (x + m / x) >> 1n
    if (y >= x) break
    x = y
  }
  return norm({ m: x, e: e / 2 })
}
function cmpAbs(a: BF, b: BF): number {
  const d = sub({ m: a.m < 0n ? -a.m : a.m, e: a.e }, { m: b.m < 0n ? -b.m : b.m, e: b.e })
  return d.m === 0n ? 0 : d.m < 0n ? -1 : 1
}

function fromF80(v: F80): BF {
  const be = v.se & 0x7fff
  const m = signOf(v) ? -v.sig : v.sig
  return { m, e: (be === 0 ? 1 : be) - 16383 - 63 }
}
/** Round to extended; the sticky bit keeps an approximation from looking exact. */
function toF80(a: BF): F80 {
  if (a.m === 0n) return zero(0)
  const s = a.m < 0n ? 1 : 0
  let m = s ? -a.m : a.m
  let e = a.e
  const n = bl(m)
  if (n < P) {
    m <<= BigInt(P - n)
    e -= P - n
  }
  return roundExt(s, (m << 1n) | 1n, e - 1)
}

// ---------------------------------------------------------------- constants

/** atan(1/n) as a fixed-point integer scaled by 2^bits. */
function atanInv(n: bigint, bits: number): bigint {
  const one = 1n << BigInt(bits)
  let term = one / n
  let sum = term
  const n2 = n * n
  for (let k = 1n; term !== 0n; k++) {
    term /= n2
    sum += (k & 1n ? -term : term) / (2n * k + 1n)
  }
  return sum
}
const PI_BITS = 400
const PI: BF = { m: 16n * atanInv(5n, PI_BITS + 8) - 4n * atanInv(239n, PI_BITS + 8), e: -(PI_BITS + 8) }
const PI_2: BF = { m: PI.m, e: PI.e - 1 }
const PI_4: BF = { m: PI.m, e: PI.e - 2 }
/** pi/2 as the reduction of fsin/fcos/fptan uses it: pi rounded to RED_BITS significant bits. */
const RED_BITS = 66
const RED_PI_2: BF = (() => {
  const sh = bl(PI.m) - RED_BITS
  const m = (PI.m + (1n << BigInt(sh - 1))) >> BigInt(sh)
  return { m, e: PI.e + sh - 1 }
})()

/** ln 2 = 2 atanh(1/3). */
const LN2: BF = (() => {
  const bits = P + 16
  const one = 1n << BigInt(bits)
  let t = one / 3n
  let sum = t
  for (let k = 1n; t !== 0n; k++) {
    t /= 9n
    sum += t / (2n * k + 1n)
  }
  return norm({ m: 2n * sum, e: -bits })
})()

// ---------------------------------------------------------------- series

/** e^y - 1 for |y| < 1. */
function expm1(y: BF): BF {
  let term = y
  let sum = y
  for (let n = 2; ; n++) {
    term = divInt(mul(term, y), n)
    sum = add(sum, term)
    if (tiny(term, sum)) return sum
  }
}

/** atanh(t) for |t| < 0.2. */
function atanh(t: BF): BF {
  const t2 = mul(t, t)
  let p = t
  let sum = t
  for (let n = 3; ; n += 2) {
    p = mul(p, t2)
    const term = divInt(p, n)
    sum = add(sum, term)
    if (tiny(term, sum)) return sum
  }
}

/** ln(x) for x > 0. */
function ln(x: BF): BF {
  // x = m * 2^k with m in [sqrt(1/2), sqrt(2)).
  let k = x.e + bl(x.m) - 1
  let m: BF = { m: x.m, e: x.e - k }
  if (cmpAbs(m, { m: 0xb504f333f9de6484n, e: -63 }) > 0) {
    k++
    m = { m: m.m, e: m.e - 1 }
  }
  const t = div(sub(m, int(1)), add(m, int(1)))
  return add(mul(int(k), LN2), mul(int(2), atanh(t)))
}

/** ln(1 + x) for small x (relative precision kept). */
function ln1p(x: BF): BF {
  return mul(int(2), atanh(div(x, add(int(2), x))))
}

/** sin and cos of r, |r| <= pi/4. */
function sinCosSmall(r: BF): [BF, BF] {
  const r2 = mul(r, r)
  let ts = r
  let s = r
  for (let n = 2; ; n += 2) {
    ts = neg(divInt(mul(ts, r2), n * (n + 1)))
    s = add(s, ts)
    if (tiny(ts, s)) break
  }
  let tc: BF = int(1)
  let c: BF = int(1)
  for (let n = 1; ; n += 2) {
    tc = neg(divInt(mul(tc, r2), n * (n + 1)))
    c = add(c, tc)
    if (tiny(tc, c)) break
  }
  return [s, c]
}

/** sin and cos of x (|x| < 2^63) by exact reduction modulo pi/2. */
function sinCos(x: BF): [BF, BF] {
  const q = div(x, RED_PI_2)
  // k = round(q)
  let k = 0n
  if (q.e >= 0) k = q.m << BigInt(q.e)
  else if (-q.e < 400) {
    const sh = BigInt(-q.e)
    k = q.m >> sh
    if (((q.m >> (sh - 1n)) & 1n) !== 0n) k += 1n
  }
  // r = x - k * pi/2, exactly in BigInt before one normalisation (x.e >= pi's exponent when k != 0).
  const r = k === 0n ? x : norm({ m: (x.m << BigInt(x.e - RED_PI_2.e)) - RED_PI_2.m * k, e: RED_PI_2.e })
  const [s, c] = sinCosSmall(r)
  switch (Number(((k % 4n) + 4n) % 4n)) {
    case 0:
      return [s, c]
    case 1:
      return [c, neg(s)]
    case 2:
      return [neg(s), neg(c)]
    default:
      return [neg(c), s]
  }
}

/** atan(t) for 0 <= t <= 1. */
function atanSmall(t: BF): BF {
  // Three halvings: atan(t) = 2 atan(t / (1 + sqrt(1 + t^2))).
  for (let i = 0; i < 3; i++) {
    if (t.m === 0n) return t
    t = div(t, add(int(1), sqrt(add(int(1), mul(t, t)))))
  }
  const t2 = mul(t, t)
  let p = t
  let sum = t
  for (let n = 3; ; n += 2) {
    p = neg(mul(p, t2))
    const term = divInt(p, n)
    sum = add(sum, term)
    if (tiny(term, sum)) break
  }
  return { m: sum.m, e: sum.e + 3 }
}

// ---------------------------------------------------------------- operations

function denorm(...ks: Cls[]): void {
  if (ks.includes(Cls.Denormal)) raise(DE)
}

/** One-operand NaN/unsupported handling: the result or null. */
function nan1(a: F80, k: Cls): F80 | null {
  if (k === Cls.Unsupported) {
    raise(IE)
    return INDEFINITE
  }
  if (isNaN80(k)) {
    if (k === Cls.SNaN) raise(IE)
    return quiet(a)
  }
  return null
}

const TWO63 = 16383 + 63
const ZERO_RESULT = zero(0)

/** fsin/fcos/fptan/fsincos argument check: null when |x| >= 2^63 (C2 = 1, ST0 unchanged). */
export function trigArgInRange(a: F80): boolean {
  const k = classify(a)
  return !(k === Cls.Normal && (a.se & 0x7fff) >= TWO63)
}

/**
 * [sin, cos] of ST0 (as extended results), or for NaN/inf the invalid or
 * propagated result in both; `want` 0 rounds (and raises flags for) only
 * sin, 1 only cos, 2 both.
 */
export function sinCosOp(a: F80, want = 2): [F80, F80] {
  const k = classify(a)
  const n = nan1(a, k)
  if (n) return [n, n]
  if (k === Cls.Inf) {
    raise(IE)
    return [INDEFINITE, INDEFINITE]
  }
  denorm(k)
  if (k === Cls.Zero) return [a, ONE]
  const [s, c] = sinCos(fromF80(a))
  return [want === 1 ? ZERO_RESULT : toF80(s), want === 0 ? ZERO_RESULT : toF80(c)]
}

/** tan(ST0). */
export function tanOp(a: F80): F80 {
  const k = classify(a)
  const n = nan1(a, k)
  if (n) return n
  if (k === Cls.Inf) {
    raise(IE)
    return INDEFINITE
  }
  denorm(k)
  if (k === Cls.Zero) return a
  const [s, c] = sinCos(fromF80(a))
  return toF80(div(s, c))
}

/** f2xm1: 2^x - 1. */
export function f2xm1Op(a: F80): F80 {
  const k = classify(a)
  const n = nan1(a, k)
  if (n) return n
  if (k === Cls.Zero) return a
  if (k === Cls.Inf) return signOf(a) ? { se: 0xbfff, sig: 1n << 63n } : a
  denorm(k)
  return toF80(expm1(mul(fromF80(a), LN2)))
}

/** fyl2x: y * log2(x) (x = ST0, y = ST1). */
export function fyl2xOp(x: F80, y: F80): F80 {
  const kx = classify(x)
  const ky = classify(y)
  const n = nanResult(x, kx, y, ky)
  if (n) return n
  const sx = signOf(x)
  const sy = signOf(y)
  if (sx && kx !== Cls.Zero) {
    raise(IE)
    return INDEFINITE
  }
  if (kx === Cls.Zero) {
    if (ky === Cls.Zero) {
      raise(IE)
      return INDEFINITE
    }
    // Divide-by-zero (not for an infinite y) takes precedence over DE.
    if (ky !== Cls.Inf) raise(ZE)
    return inf(sy ^ 1)
  }
  denorm(kx, ky)
  const bx = fromF80(x)
  const cmp1 = kx === Cls.Inf ? 1 : cmpAbs(bx, int(1))
  if (kx === Cls.Inf) {
    if (ky === Cls.Zero) {
      raise(IE)
      return INDEFINITE
    }
    return inf(sy)
  }
  if (ky === Cls.Inf) {
    if (cmp1 === 0) {
      raise(IE)
      return INDEFINITE
    }
    return inf(sy ^ (cmp1 < 0 ? 1 : 0))
  }
  if (ky === Cls.Zero || cmp1 === 0) return zero(sy ^ (cmp1 < 0 ? 1 : 0))
  return toF80(mul(fromF80(y), div(ln(bx), LN2)))
}

/** fyl2xp1: y * log2(x + 1) (x = ST0, y = ST1). */
export function fyl2xp1Op(x: F80, y: F80): F80 {
  const kx = classify(x)
  const ky = classify(y)
  const n = nanResult(x, kx, y, ky)
  if (n) return n
  const sx = signOf(x)
  const sy = signOf(y)
  denorm(kx, ky)
  if (kx === Cls.Inf) {
    if (sx || ky === Cls.Zero) {
      raise(IE)
      return INDEFINITE
    }
    return inf(sy)
  }
  if (kx === Cls.Zero) {
    if (ky === Cls.Inf) {
      raise(IE)
      return INDEFINITE
    }
    return zero(sx ^ sy)
  }
  const bx = fromF80(x)
  if (sx && cmpAbs(bx, int(1)) >= 0) {
    if (cmpAbs(bx, int(1)) === 0 && ky !== Cls.Zero) {
      raise(ZE)
      return inf(sy ^ 1)
    }
    raise(IE)
    return INDEFINITE
  }
  if (ky === Cls.Inf) return inf(sy ^ sx)
  if (ky === Cls.Zero) return zero(sx ^ sy)
  return toF80(mul(fromF80(y), div(ln1p(bx), LN2)))
}

/** fpatan: atan2(y, x) (x = ST0, y = ST1). */
export function fpatanOp(x: F80, y: F80): F80 {
  const kx = classify(x)
  const ky = classify(y)
  const n = nanResult(x, kx, y, ky)
  if (n) return n
  denorm(kx, ky)
  const sx = signOf(x)
  const sy = signOf(y)
  const signed = (v: BF): F80 => toF80(sy ? neg(v) : v)
  if (ky === Cls.Zero) return sx ? signed(PI) : zero(sy)
  if (ky === Cls.Inf) {
    if (kx === Cls.Inf) return signed(sx ? mul(PI_4, int(3)) : PI_4)
    return signed(PI_2)
  }
  if (kx === Cls.Zero) return signed(PI_2)
  if (kx === Cls.Inf) return sx ? signed(PI) : zero(sy)
  const ax = fromF80({ se: x.se & 0x7fff, sig: x.sig })
  const ay = fromF80({ se: y.se & 0x7fff, sig: y.sig })
  let a: BF
  if (cmpAbs(ay, ax) <= 0) a = atanSmall(div(ay, ax))
  else a = sub(PI_2, atanSmall(div(ax, ay)))
  if (sx) a = sub(PI, a)
  return signed(a)
}
