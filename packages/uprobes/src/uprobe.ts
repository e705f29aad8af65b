// struct uprobe (include/linux/uprobes.h, the utrace-based API): what the
// caller fills in, and uprobe_kimg, Uprobes' own record of one registered
// uprobe (Linux keeps it in u->kdata; here it lives in a map, so the
// caller's object stays untouched).

import type { PtRegsFrame } from '@probekit/kernel'
import type { UprobeProbept } from './uprobe-probept.js'
import type { UprobeProcess } from './uprobe-process.js'

export interface Uprobe {
  /** Any thread id of the probed process. */
  pid: number
  /** The probed instruction's virtual address. */
  vaddr: number
  /** Called when a thread hits the probepoint; regs are its user registers (writes change them). */
  handler(u: Uprobe, regs: PtRegsFrame): void
  /**
   * Called when a [un]registration made from a handler (delayed, -EINPROGRESS) completes: reg 1 for
   * register, 0 for unregister; result what the call would have returned (always 0 for unregister).
   */
  registration_callback?(u: Uprobe, reg: number, result: number): void
}

/** struct uprobe_kimg: a registered uprobe and the probepoint it hangs on. */
export interface UprobeKimg {
  uprobe: Uprobe
  uproc: UprobeProcess
  ppt: UprobeProbept
}
