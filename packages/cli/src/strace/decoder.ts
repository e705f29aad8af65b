// What a per-call decoder is. Like strace, a call's arguments are printed in
// order, some when it starts (inputs) and the rest when it returns (outputs
// such as read's buffer): a Later part and everything after it is printed
// at exit, so an interrupted call shows just "read(3, " first.

import type { StraceMemory } from './memory.js'
import { hex } from './numbers.js'

export interface EntryView {
  /** The six argument registers: rdi rsi rdx r10 r8 r9. */
  readonly args: readonly number[]
  readonly mem: StraceMemory
}

export interface ExitView extends EntryView {
  /** rax after the call. */
  readonly ret: number
  /** The call returned -errno (ret in -4095..-1). */
  readonly failed: boolean
}

export interface Later {
  readonly exit: (x: ExitView) => string
  /** Prints its own separator (clone's ", parent_tid=..."), so none goes before it. */
  readonly glued?: boolean
}

export type Part = string | Later

export interface Decoder {
  readonly args: (c: EntryView) => readonly Part[]
  /** The successful result after "= "; decimal when absent. */
  readonly ret?: (x: ExitView) => string
}

/** A part printed when the call returns. */
export function later(exit: (x: ExitView) => string): Later {
  return { exit }
}

/**
 * An output struct at addr (umove_or_printaddr on exit): NULL, the address
 * if the call failed, else what print makes of it.
 */
export function output(addr: number, print: (x: ExitView) => string): Later {
  return later((x) => (addr === 0 ? 'NULL' : x.failed ? hex(addr) : print(x)))
}
