// The x87 register stack, status and control words: ST(i) access by TOP,
// tags, push/pop with stack faults, and committing an operation's exception
// bits to FSW.
//
// Exceptions: all six are normally masked (FCW 0x037f) and then the masked
// response is produced (QNaN indefinite, infinity, ...). An unmasked
// exception sets FSW.ES and FSW.B as on hardware and #MF is delivered at the
// next waiting instruction (fpu-exceptions.ts); the instruction itself still
// produces the masked response (the unmasked responses - operands left
// unchanged, results scaled by 2^+-24576 - are not modelled).

import type { X87State } from '../cpu/fpu-state.js'
import { type F80, IE, INDEFINITE, SF } from './x87-float.js'

export const C0 = 0x100
export const C1 = 0x200
export const C2 = 0x400
export const C3 = 0x4000
export const CC_MASK = C0 | C1 | C2 | C3

export function top(s: X87State): number {
  return (s.fsw >> 11) & 7
}
export function setTop(s: X87State, t: number): void {
  s.fsw = (s.fsw & ~0x3800) | ((t & 7) << 11)
}
export function phys(s: X87State, i: number): number {
  return (top(s) + i) & 7
}
export function isEmpty(s: X87State, i: number): boolean {
  return ((s.ftwAbridged >> phys(s, i)) & 1) === 0
}
export function getSt(s: X87State, i: number): F80 {
  const p = phys(s, i)
  return { se: s.se[p], sig: s.sig[p] }
}
export function setSt(s: X87State, i: number, v: F80): void {
  const p = phys(s, i)
  s.se[p] = v.se
  s.sig[p] = v.sig
  s.ftwAbridged |= 1 << p
}
export function pop(s: X87State): void {
  s.ftwAbridged &= ~(1 << phys(s, 0))
  setTop(s, top(s) + 1)
}

/** Merge exception bits into FSW (sticky), with ES/B when any is unmasked. */
export function commitExc(s: X87State, bits: number): void {
  if (bits === 0) return
  s.fsw |= bits
  if ((bits & ~s.fcw & 0x3f) !== 0) s.fsw |= 0x8080
}

/** Set C1 (and clear it otherwise). */
export function setC1(s: X87State, on: boolean): void {
  s.fsw = on ? s.fsw | C1 : s.fsw & ~C1
}

/** Stack underflow: IE + SF, C1 = 0. */
export function underflow(s: X87State): void {
  setC1(s, false)
  commitExc(s, IE | SF)
}

/** Push v (stack overflow when the new ST0 is in use: IE + SF, C1 = 1, the indefinite is pushed). */
export function push(s: X87State, v: F80): void {
  const t = (top(s) - 1) & 7
  if (((s.ftwAbridged >> t) & 1) !== 0) {
    setC1(s, true)
    commitExc(s, IE | SF)
    v = INDEFINITE
  }
  setTop(s, t)
  setSt(s, 0, v)
}

/** True when a push would overflow: the register below ST0 is in use. */
export function pushWouldOverflow(s: X87State): boolean {
  return ((s.ftwAbridged >> ((top(s) - 1) & 7)) & 1) !== 0
}

/** Full 16-bit tag word (fnstenv/fnsave): 00 valid, 01 zero, 10 special, 11 empty per physical register. */
export function fullTagWord(s: X87State): number {
  let w = 0
  for (let p = 0; p < 8; p++) {
    let t = 3
    if (((s.ftwAbridged >> p) & 1) !== 0) {
      const e = s.se[p] & 0x7fff
      const j = (s.sig[p] >> 63n) & 1n
      if (e === 0) t = s.sig[p] === 0n ? 1 : 2
      else if (e === 0x7fff || j === 0n) t = 2
      else t = 0
    }
    w |= t << (2 * p)
  }
  return w
}

export function abridgedFromFull(w: number): number {
  let a = 0
  for (let p = 0; p < 8; p++) if (((w >> (2 * p)) & 3) !== 3) a |= 1 << p
  return a
}

export function fninit(s: X87State): void {
  s.fcw = 0x037f
  s.fsw = 0
  s.ftwAbridged = 0
  s.fop = 0
  s.fip = 0
  s.fdp = 0
  s.fcs = 0
  s.fds = 0
}
