// struct jprobe (Linux <= 4.14): a probe whose handler gets the probed function's arguments.

import type { Kprobe } from './kprobe.js'

/**
 * The mirror of the probed function: called with its SysV arguments (rdi, rsi,
 * rdx, rcx, r8, r9). Host code cannot `jprobe_return()` into the guest; returning
 * from `entry` is the jprobe_return: the function then runs from its original state.
 */
export type JprobeEntry = (...args: number[]) => void

export interface Jprobe {
  kp: Kprobe
  entry: JprobeEntry
}

/** MAX_STACK_SIZE: the bytes of stack setjmp_pre_handler saves (at most; less near the stack top). */
export const MAX_STACK_SIZE = 64

/** The argument registers in SysV order. */
export const JPROBE_ARG_REGS = ['di', 'si', 'dx', 'cx', 'r8', 'r9'] as const

/** jprobe_return: a no-op marker for ported handlers (returning from entry does its work). */
export function jprobe_return(): void {}
