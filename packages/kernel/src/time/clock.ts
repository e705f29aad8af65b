// The virtual clock (guest cycles at a nominal 1 GHz, from a fixed epoch)
// and the file times kept on it.

import type { Directory, Inode } from '../fs/vfs.js'
import type { Kernel } from '../kernel.js'
import type { SyscallContext } from '../syscalls.js'

/** The virtual clock's epoch: CLOCK_REALTIME at boot. */
export const CLOCK_EPOCH_SECONDS = 1_700_000_000

/** CLOCK_REALTIME in whole seconds: what file times are kept in. */
export function wallSeconds(kernel: Kernel, cpu = 0): number {
  return CLOCK_EPOCH_SECONDS + Math.floor(kernel.machine.cycles(cpu) / 1e9)
}

/** A write, truncation or creation: the inode's modification time is now. */
export function modified(ctx: SyscallContext, node: Inode): void {
  node.mtime = wallSeconds(ctx.kernel, ctx.cpu.id)
}

/** A directory whose entries a call changed (it returned 0) is modified too. */
export function changedEntries(ctx: SyscallContext, dir: Directory, r: number): number {
  if (r === 0) modified(ctx, dir)
  return r
}

/** CLOCK_MONOTONIC in nanoseconds. */
export function nowNs(ctx: SyscallContext): number {
  return ctx.kernel.machine.cycles(ctx.cpu.id)
}
