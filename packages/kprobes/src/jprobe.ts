// struct jprobe (Linux <= 4.14): a probe whose handler gets the probed function's arguments.

import type { Kprobe } from './kprobe.js'

/**
 * The mirror of the probed function: called with its SysV arguments, the first
 * six from rdi, rsi, rdx, rcx, r8, r9 and the rest from the stack above the
 * return address (declare them: `entry.length` says how many the mirror takes).
 * Host code cannot `jprobe_return()` into the guest; returning from `entry` is
 * the jprobe_return: the function then runs from its original registers and
 * MAX_STACK_SIZE bytes of stack, whatever the mirror did to them.
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

/**
 * The arguments a mirror with `arity` parameters receives at a function's
 * entry: registers first, then the qwords at sp+8, sp+16, ... (sp holds the
 * return address). At least the six register arguments are always passed.
 */
export function jprobeArguments(
  arity: number,
  reg: (name: (typeof JPROBE_ARG_REGS)[number]) => number,
  stackArg: (index: number) => number,
): number[] {
  const args = JPROBE_ARG_REGS.map(reg)
  for (let i = 0; i < arity - JPROBE_ARG_REGS.length; i++) args.push(stackArg(i))
  return args
}

/** jprobe_return: a no-op marker for ported handlers (returning from entry does its work). */
export function jprobe_return(): void {}
