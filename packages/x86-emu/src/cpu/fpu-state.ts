// x87 FPU state, kept outside Cpu so that cpu.ts does not change: a per-CPU
// record looked up by identity. Executed by exec/x87*.ts and moved in and out
// of the fxsave image by exec/sse-state.ts.
//
// The eight data registers are kept in PHYSICAL order (R0..R7); ST(i) is
// physical register (TOP + i) & 7 with TOP in FSW bits 11-13. Each register
// is an exact 80-bit extended value split into its sign/exponent word and its
// 64-bit significand (explicit integer bit).

import type { Cpu } from './cpu.js'

export interface X87State {
  /** Control word. */
  fcw: number
  /** Status word (TOP in bits 11-13). */
  fsw: number
  /** Abridged tag word as fxsave stores it: bit i set = physical register i is not empty. */
  ftwAbridged: number
  /** Last x87 opcode (11 bits). Not tracked by the executor (stays 0 unless fxrstor loads it). */
  fop: number
  /** Last instruction and data pointers (linear numbers) and their selectors (not tracked, see fop). */
  fip: number
  fdp: number
  fcs: number
  fds: number
  /** Physical registers R0..R7: sign (bit 15) and biased exponent (bits 0-14). */
  readonly se: Uint16Array
  /** Physical registers R0..R7: 64-bit significands. */
  readonly sig: bigint[]
}

export const X87_DEFAULT_FCW = 0x037f

const states = new WeakMap<Cpu, X87State>()

export function newX87State(): X87State {
  return {
    fcw: X87_DEFAULT_FCW,
    fsw: 0,
    ftwAbridged: 0,
    fop: 0,
    fip: 0,
    fdp: 0,
    fcs: 0,
    fds: 0,
    se: new Uint16Array(8),
    sig: [0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n],
  }
}

/** The x87 state of a CPU (created in its initial state on first use). */
export function x87State(c: Cpu): X87State {
  let s = states.get(c)
  if (s === undefined) {
    s = newX87State()
    states.set(c, s)
  }
  return s
}

/** A copy of a state (context switch out, fork). */
export function copyX87State(s: X87State): X87State {
  const d = newX87State()
  restoreX87State(d, s)
  return d
}

/** Overwrite `to` with `from` (context switch in). */
export function restoreX87State(to: X87State, from: X87State): void {
  to.fcw = from.fcw
  to.fsw = from.fsw
  to.ftwAbridged = from.ftwAbridged
  to.fop = from.fop
  to.fip = from.fip
  to.fdp = from.fdp
  to.fcs = from.fcs
  to.fds = from.fds
  to.se.set(from.se)
  for (let i = 0; i < 8; i++) to.sig[i] = from.sig[i]
}

/**
 * Write the x87 fields (bytes 0-23 and 32-159) of an fxsave image; `wide`
 * is the fxsave64 layout (64-bit FIP/FDP). The image holds the registers in
 * stack order (ST0 at 32), the record in physical order.
 */
export function x87ToFxsave(s: X87State, image: Uint8Array, wide: boolean): void {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength)
  view.setUint16(0, s.fcw, true)
  view.setUint16(2, s.fsw, true)
  image[4] = s.ftwAbridged
  image[5] = 0
  view.setUint16(6, s.fop & 0x7ff, true)
  if (wide) {
    view.setBigUint64(8, BigInt.asUintN(64, BigInt(s.fip)), true)
    view.setBigUint64(16, BigInt.asUintN(64, BigInt(s.fdp)), true)
  } else {
    view.setUint32(8, s.fip >>> 0, true)
    view.setUint32(12, s.fcs & 0xffff, true)
    view.setUint32(16, s.fdp >>> 0, true)
    view.setUint32(20, s.fds & 0xffff, true)
  }
  const top = (s.fsw >> 11) & 7
  for (let i = 0; i < 8; i++) {
    const p = (top + i) & 7
    view.setBigUint64(32 + 16 * i, s.sig[p], true)
    view.setUint16(40 + 16 * i, s.se[p], true)
    image.fill(0, 42 + 16 * i, 48 + 16 * i)
  }
}

/** Load the x87 fields from an fxsave image (fxrstor, sigreturn). */
export function x87FromFxsave(s: X87State, image: Uint8Array, wide: boolean): void {
  const view = new DataView(image.buffer, image.byteOffset, image.byteLength)
  s.fcw = view.getUint16(0, true)
  s.fsw = view.getUint16(2, true)
  s.ftwAbridged = image[4]
  s.fop = view.getUint16(6, true) & 0x7ff
  if (wide) {
    s.fip = Number(BigInt.asIntN(64, view.getBigUint64(8, true)))
    s.fdp = Number(BigInt.asIntN(64, view.getBigUint64(16, true)))
    s.fcs = 0
    s.fds = 0
  } else {
    s.fip = view.getUint32(8, true)
    s.fcs = view.getUint16(12, true)
    s.fdp = view.getUint32(16, true)
    s.fds = view.getUint16(20, true)
  }
  const top = (s.fsw >> 11) & 7
  for (let i = 0; i < 8; i++) {
    const p = (top + i) & 7
    s.sig[p] = view.getBigUint64(32 + 16 * i, true)
    s.se[p] = view.getUint16(40 + 16 * i, true)
  }
}
