// struct uprobe_consumer (include/linux/uprobes.h, the inode-based API of
// Linux 3.5 on): a probe on a file offset rather than one process's
// address. uprobe_register(inode, offset, uc) puts the breakpoint in every
// process that maps that file (now, and each later mmap of it, as
// uprobe_mmap does); filter decides which of them get it.

import type { Mm, PtRegsFrame } from '@probekit/kernel'

/** handler's return: take the breakpoint out of this process (if no consumer's filter wants it). */
export const UPROBE_HANDLER_REMOVE = 1

/** Why filter is asked (enum uprobe_filter_ctx). */
export const UPROBE_FILTER_REGISTER = 0
export const UPROBE_FILTER_UNREGISTER = 1
export const UPROBE_FILTER_MMAP = 2

export interface UprobeConsumer {
  /** At the probed instruction, before it runs; regs writable. 0, or UPROBE_HANDLER_REMOVE. */
  handler?(self: UprobeConsumer, regs: PtRegsFrame): number
  /** When the function entered at the probed address returns: func is that address, regs.ax the value. */
  ret_handler?(self: UprobeConsumer, func: number, regs: PtRegsFrame): number
  /** Should this address space carry the breakpoint? (absent: every one that maps the file) */
  filter?(self: UprobeConsumer, ctx: number, mm: Mm): boolean
}
