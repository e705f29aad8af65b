// x87 FPU state the SSE side needs for fxsave/fxrstor, kept outside Cpu so
// that cpu.ts does not change: a per-CPU record looked up by identity.
//
// PLACEHOLDER until the x87 executor exists: nothing executes x87
// instructions yet, so this holds the state Linux gives a new process (FCW
// 0x037f after fninit: all exceptions masked, 64-bit precision, round to
// nearest; empty stack) and whatever fxrstor loads. The x87 implementation is
// expected to own this record (or replace it and the two helpers in
// exec/sse-state.ts marked "x87 part").

import type { Cpu } from './cpu.js'

export interface X87State {
  /** Control word. */
  fcw: number
  /** Status word (TOP in bits 11-13). */
  fsw: number
  /** Abridged tag word as fxsave stores it: bit i set = physical register i is not empty. */
  ftwAbridged: number
  /** Last x87 opcode (11 bits). */
  fop: number
  /** Last instruction and data pointers (linear numbers) and their selectors. */
  fip: number
  fdp: number
  fcs: number
  fds: number
  /** ST(0)..ST(7), 10 bytes each (80-bit extended format), in stack order. */
  readonly st: Uint8Array
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
    st: new Uint8Array(80),
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
