// struct jprobe (Linux <= 4.14): a probe whose handler gets the probed function's arguments.

import type { Kprobe, PtRegs } from './kprobe.js'

/**
 * The mirror of the probed function: called with its SysV arguments, the first
 * six from rdi, rsi, rdx, rcx, r8, r9 and the rest from the stack above the
 * return address (declare them: `entry.length` says how many the mirror takes).
 * It runs in the guest's place of the function: setjmp_pre_handler sends the
 * CPU to jprobe_entry_stub in kernel text, whose hypercall calls the entry
 * (Kprobes.jprobe_regs() is the stub's pt_regs meanwhile). When the entry
 * returns or calls jprobe_return(), the stub executes jprobe_return's int3 and
 * longjmp_break_handler puts back the registers and MIN_STACK_SIZE bytes of
 * stack, whatever the entry did to them; then the function runs untouched.
 */
export type JprobeEntry = (...args: number[]) => void

export interface Jprobe {
  kp: Kprobe
  entry: JprobeEntry
}

/** MAX_STACK_SIZE: the bytes of stack setjmp_pre_handler saves (at most; less near the stack top). */
export const MAX_STACK_SIZE = 64

/** MIN_STACK_SIZE(addr): MAX_STACK_SIZE, or less when the stack's top is nearer. */
export function MIN_STACK_SIZE(addr: number, topOfStack: number): number {
  const left = topOfStack - addr
  return left > 0 && left < MAX_STACK_SIZE ? left : MAX_STACK_SIZE
}

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

/** What jprobe_return() throws: the entry ends there (a longjmp); only the jprobe entry call catches it. */
export class JprobeReturn extends Error {
  constructor() {
    super('jprobe_return() outside a jprobe entry')
    this.name = 'JprobeReturn'
  }
}

/**
 * jprobe_return: ends the entry here, as Linux's does (it never returns; the
 * code after it does not run). Returning from the entry does the same.
 */
export function jprobe_return(): never {
  throw new JprobeReturn()
}

/** The per-CPU jprobe state of struct kprobe_ctlblk (Linux <= 4.14). */
export interface JprobeCtlblk {
  /** The jprobe whose setjmp_pre_handler ran and whose break is still to come (null: none). */
  jp: Jprobe | null
  /** jprobe_saved_regs: the probed function's pt_regs at the hit. */
  savedRegs: Uint8Array
  /** jprobe_saved_sp. */
  savedSp: number
  /** jprobes_stack: MIN_STACK_SIZE(sp) bytes from sp. */
  stack: Uint8Array
  stackSize: number
  /** While the entry runs: the pt_regs jprobe_entry_stub built. */
  regs: PtRegs | null
}
