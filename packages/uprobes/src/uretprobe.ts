// struct uretprobe and struct uretprobe_instance (the utrace-based
// uprobes' return probes, the seed's TODO b): a uprobe at a function's
// first instruction whose hit replaces the return address on the user
// stack with the XOL area's trampoline; the trampoline's breakpoint runs
// handler, then the thread goes on at the real return address.

import type { PtRegsFrame } from '@probekit/kernel'
import type { Uprobe } from './uprobe.js'

export interface Uretprobe {
  /** Where: u.pid (any thread of the process) and u.vaddr (the function's first instruction). */
  u: Pick<Uprobe, 'pid' | 'vaddr'> & {
    /** For a [un]registration delayed from a handler, as struct uprobe's. */
    registration_callback?(u: Uretprobe['u'], reg: number, result: number): void
  }
  /** Called as the probed function returns: regs.ax is its return value, ip the real return address. */
  handler(ri: UretprobeInstance, regs: PtRegsFrame): void
  /** Entries whose return could not be hijacked (nesting deeper than MAX_URETPROBE_DEPTH, no XOL slot). */
  nmissed?: number
}

/** One pending return: made at the entry hit, consumed by the return (or dropped by longjmp or exit). */
export interface UretprobeInstance {
  rp: Uretprobe | null
  /** The real return address (what the trampoline replaced). */
  ret_addr: number
  /** sp at the entry (where the return address sat): deeper instances have smaller sp. */
  sp: number
  /** The function's address (u.vaddr). */
  func: number
}
