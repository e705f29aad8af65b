// Path lookup for the *at() system calls (fs/namei.c's role on the host):
// where a relative path starts, and the inode it names.

import { EBADF, ENOTDIR } from '../errno.js'
import { strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import { Directory, type Inode } from './vfs.js'

/** dirfd meaning "the current directory". */
export const AT_FDCWD = -100

/** The directory a *at() call starts from: the cwd for AT_FDCWD (or an absolute path), else an open directory. */
export function dirAt(ctx: SyscallContext, dirfd: number, path: string): Directory | number {
  // dirfd is an int (see fileOf): AT_FDCWD often arrives as 0x00000000ffffff9c.
  if (path.startsWith('/') || (dirfd | 0) === AT_FDCWD) return ctx.task.cwd
  const f = ctx.task.files.get(dirfd | 0)
  if (!f) return -EBADF
  return f.inode instanceof Directory ? f.inode : -ENOTDIR
}

export function lookupAt(ctx: SyscallContext, dirfd: number, path: string, nofollow = false): Inode | number {
  const dir = dirAt(ctx, dirfd, path)
  return typeof dir === 'number' ? dir : ctx.kernel.vfs.lookup(path, dir, nofollow)
}

/** A path argument copied in from user memory, or -ENAMETOOLONG. */
export function pathArg(ctx: SyscallContext, addr: number): string | number {
  const p = strncpyFromUser(ctx.task.mm, addr, 4096)
  return p === null ? -36 : p
}
