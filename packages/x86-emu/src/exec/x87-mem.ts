// x87 memory operands: m16/m32/m64 integers, m32/m64/m80 reals, the
// environment (fnstenv/fldenv, 28-byte protected-mode layout) and the
// fnsave/frstor image. Loads read everything before any state changes, m80
// and environment stores probe the whole area first, so faults are precise.

import type { Cpu } from '../cpu/cpu.js'
import type { X87State } from '../cpu/fpu-state.js'
import { type F80, fromF32, fromF64, fromInt, negate } from './x87-float.js'
import { abridgedFromFull, fullTagWord, top } from './x87-stack.js'

export function readF32(c: Cpu, a: number): F80 {
  return fromF32(c.read32(a) >>> 0)
}
export function readU64(c: Cpu, a: number): bigint {
  const lo = c.read64(a)
  return (BigInt(c.th >>> 0) << 32n) | BigInt(lo >>> 0)
}
export function readF64(c: Cpu, a: number): F80 {
  return fromF64(readU64(c, a))
}
export function readF80(c: Cpu, a: number): F80 {
  const sig = readU64(c, a)
  return { se: c.read16(a + 8) & 0xffff, sig }
}
export function readInt(c: Cpu, a: number, bytes: number): F80 {
  if (bytes === 2) return fromInt(BigInt((c.read16(a) << 16) >> 16))
  if (bytes === 4) return fromInt(BigInt(c.read32(a) | 0))
  return fromInt(BigInt.asIntN(64, readU64(c, a)))
}

export function writeU64(c: Cpu, a: number, v: bigint): void {
  c.write64(a, Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n)))
}
export function writeF80(c: Cpu, a: number, v: F80): void {
  c.probeWrite(a, 10)
  writeU64(c, a, v.sig)
  c.write16(a + 8, v.se)
}
/** Integer of 2, 4 or 8 bytes. */
export function writeInt(c: Cpu, a: number, bytes: number, v: bigint): void {
  if (bytes === 2) c.write16(a, Number(BigInt.asUintN(16, v)))
  else if (bytes === 4) c.write32(a, Number(BigInt.asIntN(32, v)))
  else writeU64(c, a, v)
}

/** fnstenv (28 bytes): reserved upper halves stored as ones, as Intel parts do. */
export function storeEnv(c: Cpu, a: number, s: X87State): void {
  c.probeWrite(a, 28)
  c.write32(a, 0xffff0000 | s.fcw)
  c.write32(a + 4, 0xffff0000 | s.fsw)
  c.write32(a + 8, 0xffff0000 | fullTagWord(s))
  c.write32(a + 12, s.fip | 0)
  c.write32(a + 16, (s.fcs & 0xffff) | ((s.fop & 0x7ff) << 16))
  c.write32(a + 20, s.fdp | 0)
  c.write32(a + 24, 0xffff0000 | (s.fds & 0xffff))
}

/** Reads a 28-byte environment; returns a function applying it (so later reads can still fault first). */
export function loadEnv(c: Cpu, a: number): (s: X87State) => void {
  const w = [0, 4, 8, 12, 16, 20, 24].map((o) => c.read32(a + o))
  return (s) => {
    s.fcw = w[0] & 0x1f7f
    s.fsw = w[1] & 0xffff
    s.ftwAbridged = abridgedFromFull(w[2] & 0xffff)
    s.fip = w[3] >>> 0
    s.fcs = w[4] & 0xffff
    s.fop = (w[4] >>> 16) & 0x7ff
    s.fdp = w[5] >>> 0
    s.fds = w[6] & 0xffff
  }
}

/** fnsave image: environment + ST0..ST7 (10 bytes each, stack order) = 108 bytes. */
export function storeSave(c: Cpu, a: number, s: X87State): void {
  c.probeWrite(a, 108)
  storeEnv(c, a, s)
  const t = top(s)
  for (let i = 0; i < 8; i++) {
    const p = (t + i) & 7
    writeF80(c, a + 28 + 10 * i, { se: s.se[p], sig: s.sig[p] })
  }
}

export function loadSave(c: Cpu, a: number): (s: X87State) => void {
  const env = loadEnv(c, a)
  const regs: F80[] = []
  for (let i = 0; i < 8; i++) regs.push(readF80(c, a + 28 + 10 * i))
  return (s) => {
    env(s)
    const t = top(s)
    for (let i = 0; i < 8; i++) {
      const p = (t + i) & 7
      s.se[p] = regs[i].se
      s.sig[p] = regs[i].sig
    }
  }
}

/** fbld: 18 packed BCD digits (bytes 0-8, low digit in the low nibble) and the sign in bit 7 of byte 9. */
export function readBcd(c: Cpu, a: number): F80 {
  const lo = readU64(c, a)
  const hi = c.read16(a + 8) & 0xffff
  let v = 0n
  for (let i = 17; i >= 0; i--) {
    const nib = i < 16 ? Number((lo >> BigInt(4 * i)) & 0xfn) : (hi >> (4 * (i - 16))) & 0xf
    v = v * 10n + BigInt(nib)
  }
  const r = fromInt(v)
  return (hi & 0x8000) !== 0 ? negate(r) : r
}

/** fbstp: `v` null stores the BCD indefinite. */
export function writeBcd(c: Cpu, a: number, v: bigint | null, negative: boolean): void {
  c.probeWrite(a, 10)
  if (v === null) {
    writeU64(c, a, 0xc000000000000000n)
    c.write16(a + 8, 0xffff)
    return
  }
  let lo = 0n
  let hi = 0
  for (let i = 0; i < 18; i++) {
    const d = v % 10n
    v /= 10n
    if (i < 16) lo |= d << BigInt(4 * i)
    else hi |= Number(d) << (4 * (i - 16))
  }
  writeU64(c, a, lo)
  c.write16(a + 8, hi | (negative ? 0x8000 : 0))
}
