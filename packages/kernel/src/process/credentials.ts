// Credentials beyond getuid/getgid: every task runs as root (uid and gid 0
// in all three of real, effective and saved) with no supplementary groups,
// like a process started by the kernel's init.

import { writeUserU32 } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'

/** getgroups(size, list): the number of supplementary groups (none). */
export function sysGetgroups(_ctx: SyscallContext, size: number): number {
  return (size | 0) < 0 ? -22 : 0
}

/** getresuid / getresgid: real, effective and saved ids, all 0. */
export function sysGetresid(ctx: SyscallContext, r: number, e: number, s: number): number {
  for (const p of [r, e, s]) writeUserU32(ctx.task.mm, p, 0)
  return 0
}
