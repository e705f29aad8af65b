// x87 arithmetic and compares: fadd/fmul/fsub/fsubr/fdiv/fdivr (m32, m64,
// m16int, m32int, ST(i) forms and the P forms), fcom/fucom family, fcomi
// family, ftst, fxam, fsqrt/frndint/fscale/fxtract/fprem/fprem1, fchs/fabs.

import type { Cpu } from '../cpu/cpu.js'
import { FK_EAGER } from '../cpu/flags.js'
import { x87State } from '../cpu/fpu-state.js'
import { ARITH_FLAGS, CF, PF, ZF } from '../cpu/registers.js'
import type { Op } from './op.js'
import {
  add,
  Cls,
  classify,
  compare,
  DE,
  div,
  exc,
  extFmt,
  type F80,
  fBegin,
  fromInt,
  IE,
  INDEFINITE,
  inf,
  isNaN80,
  mul,
  quiet,
  raise,
  remainder,
  roundedUp,
  roundToInteger,
  scale,
  signOf,
  sqrt,
  withdraw,
  ZE,
  zero,
} from './x87-float.js'
import {
  C0,
  C1,
  C2,
  C3,
  CC_MASK,
  commitExc,
  getSt,
  isEmpty,
  pop,
  push,
  pushWouldOverflow,
  setC1,
  setSt,
  underflow,
} from './x87-stack.js'

/** reg field 0 add, 1 mul, 4 x-y, 5 y-x, 6 x/y, 7 y/x (x = ST0, y = the other operand). */
function binop(r: number, x: F80, y: F80, fcw: number): F80 {
  const f = extFmt(fcw)
  switch (r) {
    case 0:
      return add(x, y, f)
    case 1:
      return mul(x, y, f)
    case 4:
      return add(x, y, f, true)
    case 5:
      return add(y, x, f, true)
    case 6:
      return div(x, y, f)
    default:
      return div(y, x, f)
  }
}

/** Arithmetic with a memory source (already converted to extended by `load`), result in ST0. */
export function arithMem(r: number, load: (c: Cpu) => F80): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    const y = load(c)
    if (isEmpty(s, 0)) {
      setSt(s, 0, INDEFINITE)
      underflow(s)
      return
    }
    const x = getSt(s, 0)
    if (!isNumber(x)) withdraw(DE)
    const v = binop(r, x, y, s.fcw)
    // A denormal memory source is not reported when the operation is invalid or divides by zero.
    if ((exc & (IE | ZE)) !== 0) withdraw(DE)
    setSt(s, 0, v)
    setC1(s, roundedUp)
    commitExc(s, exc)
  }
}

/** Register arithmetic: toSti false = D8 (ST0 op= ST(i)), true = DC/DE (ST(i) op= ST0); pop for DE. */
export function arithReg(r: number, i: number, toSti: boolean, doPop: boolean): Op {
  const d = toSti ? i : 0
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0) || isEmpty(s, i)) {
      setSt(s, d, INDEFINITE)
      underflow(s)
    } else {
      const v = binop(r, getSt(s, 0), getSt(s, i), s.fcw)
      setSt(s, d, v)
      setC1(s, roundedUp)
      commitExc(s, exc)
    }
    if (doPop) pop(s)
  }
}

/** Not a NaN or unsupported encoding. */
function isNumber(v: F80): boolean {
  const k = classify(v)
  return !isNaN80(k) && k !== Cls.Unsupported
}

function ccOf(r: number): number {
  return r === -2 ? C0 | C2 | C3 : r === -1 ? C0 : r === 0 ? C3 : 0
}

/** fcom/fcomp/fucom.. with an operand getter (null = empty register), pops 0-2 times. */
export function fcom(get: (c: Cpu) => F80 | null, signalling: boolean, pops: number): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    const y = get(c)
    let cc: number
    if (y === null || isEmpty(s, 0)) {
      cc = C0 | C2 | C3
      raise(IE | 0x40)
    } else {
      const x = getSt(s, 0)
      if (!isNumber(x)) withdraw(DE)
      cc = ccOf(compare(x, y, signalling))
    }
    s.fsw = cc < 0 ? s.fsw & ~(C1 | C2) : (s.fsw & ~CC_MASK) | cc
    commitExc(s, exc)
    for (let k = 0; k < pops; k++) pop(s)
  }
}

/** fcomi/fucomi(p): ZF PF CF from the compare, OF SF AF cleared. */
export function fcomi(i: number, signalling: boolean, doPop: boolean): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    let r: number
    if (isEmpty(s, 0) || isEmpty(s, i)) {
      r = -2
      underflow(s)
    } else {
      // C1 is left alone (as the host does) unless the stack underflows.
      r = compare(getSt(s, 0), getSt(s, i), signalling)
      commitExc(s, exc)
    }
    const f = r === -2 ? ZF | PF | CF : r === -1 ? CF : r === 0 ? ZF : 0
    c.eflags = (c.eflags & ~ARITH_FLAGS) | f
    c.fop = FK_EAGER
    if (doPop) pop(s)
  }
}

/** fxam: C1 = sign, C3 C2 C0 = class. */
export const fxam: Op = (c) => {
  const s = x87State(c)
  const v = getSt(s, 0)
  let cls: number
  if (isEmpty(s, 0)) cls = C3 | C0
  else
    switch (classify(v)) {
      case Cls.Zero:
        cls = C3
        break
      case Cls.Normal:
        cls = C2
        break
      case Cls.Denormal:
        cls = C3 | C2
        break
      case Cls.Inf:
        cls = C2 | C0
        break
      case Cls.QNaN:
      case Cls.SNaN:
        cls = C0
        break
      default:
        cls = 0
    }
  s.fsw = (s.fsw & ~CC_MASK) | cls | (signOf(v) ? C1 : 0)
}

/** A one-operand operation on ST0 (unary: fchs, fabs, fsqrt, frndint). */
export function unary(fn: (v: F80, fcw: number) => F80): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0)) {
      setSt(s, 0, INDEFINITE)
      underflow(s)
      return
    }
    const v = fn(getSt(s, 0), s.fcw)
    setSt(s, 0, v)
    setC1(s, roundedUp)
    commitExc(s, exc)
  }
}

export const fchs = unary((v) => ({ se: v.se ^ 0x8000, sig: v.sig }))
export const fabs = unary((v) => ({ se: v.se & 0x7fff, sig: v.sig }))
export const fsqrt = unary((v, fcw) => sqrt(v, extFmt(fcw)))
export const frndint = unary((v) => roundToInteger(v))

/** fscale: ST0 = ST0 * 2^trunc(ST1). */
export const fscale: Op = (c) => {
  const s = x87State(c)
  fBegin(s.fcw)
  if (isEmpty(s, 0) || isEmpty(s, 1)) {
    setSt(s, 0, INDEFINITE)
    underflow(s)
    return
  }
  setSt(s, 0, scale(getSt(s, 0), getSt(s, 1)))
  setC1(s, roundedUp)
  commitExc(s, exc)
}

/** fprem (ieee false) / fprem1. */
export function fprem(ieee: boolean): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0) || isEmpty(s, 1)) {
      setSt(s, 0, INDEFINITE)
      underflow(s)
      s.fsw &= ~C2
      return
    }
    const { r, cc } = remainder(getSt(s, 0), getSt(s, 1), ieee)
    setSt(s, 0, r)
    s.fsw = cc < 0 ? s.fsw & ~(C1 | C2) : (s.fsw & ~CC_MASK) | cc
    commitExc(s, exc)
  }
}

/** fxtract: ST0 = exponent, push significand (with exponent 0). */
export const fxtract: Op = (c) => {
  const s = x87State(c)
  fBegin(s.fcw)
  if (isEmpty(s, 0)) {
    setSt(s, 0, INDEFINITE)
    underflow(s)
    push(s, INDEFINITE)
    return
  }
  if (pushWouldOverflow(s)) {
    // Stack overflow is checked first: ST0 and the pushed register both become the indefinite (IE, SF, C1 = 1).
    setSt(s, 0, INDEFINITE)
    push(s, INDEFINITE)
    return
  }
  const v = getSt(s, 0)
  const k = classify(v)
  let e: F80
  let m: F80
  if (k === Cls.Zero) {
    raise(ZE)
    e = inf(1)
    m = zero(signOf(v))
  } else if (k === Cls.Inf) {
    e = inf(0)
    m = v
  } else if (isNaN80(k) || k === Cls.Unsupported) {
    raise(k === Cls.QNaN ? 0 : IE)
    e = m = k === Cls.Unsupported ? INDEFINITE : quiet(v)
  } else {
    if (k === Cls.Denormal) raise(DE)
    const be = v.se & 0x7fff
    let sig = v.sig
    let ex = (be === 0 ? 1 : be) - 16383
    while ((sig & (1n << 63n)) === 0n) {
      sig <<= 1n
      ex--
    }
    e = fromInt(BigInt(ex))
    m = { se: (v.se & 0x8000) | 0x3fff, sig }
  }
  setSt(s, 0, e)
  setC1(s, false)
  push(s, m)
  commitExc(s, exc)
}
