// Return instances (struct return_instance; the 2010 uretprobe_instance):
// each thread keeps a stack of the returns it owes, innermost last. The
// entry hit of a return probe swaps the return address on the user stack
// for the XOL area's trampoline and pushes an instance; the trampoline's
// breakpoint pops it, runs the handler and sends the thread to the real
// return address.
//
// An instance is alive while its frame is: its `sp` (where the return
// address sat) is at or above the thread's sp. longjmp past a frame (or a
// thread unwinding some other way) leaves deeper instances behind; they are
// dropped, without their handlers, at the next entry or return of that
// thread (cleanup_return_instances), and all of them when it exits.

import type { PtRegsFrame } from '@probekit/kernel'
import type { Uretprobe } from './uretprobe.js'

export interface ReturnInstance {
  /** The return probe (null for an inode probe's consumers: onReturn does their work). */
  rp: Uretprobe | null
  /** The real return address the trampoline stands in for. */
  ret_addr: number
  /** sp at the entry: the stack slot that held the return address. */
  sp: number
  /** The probed function's address. */
  func: number
  /** Entered by a tail call from a function whose return was already hijacked: shares its slot. */
  chained: boolean
  /** What the return does (the uretprobe's handler, or the consumers' ret_handlers). */
  onReturn(regs: PtRegsFrame, ri: ReturnInstance): void
}

/**
 * At an entry with sp (pointing at the return slot): drop instances of frames already left. Deeper
 * ones (sp below) are gone; one at this very slot is gone too unless this call is chained on it (a
 * tail call: the slot still holds the trampoline), since a new call just wrote its return address
 * there (Linux's RP_CHECK_CALL / RP_CHECK_CHAIN_CALL).
 */
export function cleanupAtEntry(stack: ReturnInstance[], sp: number, chained: boolean): number {
  let dropped = 0
  for (let top = stack.at(-1); top && (top.sp < sp || (top.sp === sp && !chained)); top = stack.at(-1)) {
    stack.pop()
    dropped++
  }
  return dropped
}

/**
 * At the trampoline, sp just past the popped slot: the instances that return now (the innermost
 * whose slot was at sp - 8, with those chained on it, innermost first), after dropping deeper,
 * abandoned ones. Empty when the thread owes no such return (a stray jump to the trampoline).
 */
export function popReturning(
  stack: ReturnInstance[],
  sp: number,
): { returning: ReturnInstance[]; dropped: number } {
  const slot = sp - 8
  let dropped = 0
  while (stack.length > 0 && stack[stack.length - 1].sp < slot) {
    stack.pop()
    dropped++
  }
  const returning: ReturnInstance[] = []
  while (stack.length > 0 && stack[stack.length - 1].sp === slot) returning.push(stack.pop()!)
  return { returning, dropped }
}
