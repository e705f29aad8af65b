// Path lookup for the *at() system calls (fs/namei.c's role on the host):
// where a relative path starts, and the inode it names.

import { EBADF, EFAULT, ENAMETOOLONG, ENOENT, ENOTDIR } from '../errno.js'
import { BadAddress, strncpyFromUser } from '../mm/user-memory.js'
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

/** An empty path with AT_EMPTY_PATH (or LOOKUP_EMPTY): dirfd's own inode, of any type; AT_FDCWD's the cwd. */
export function emptyPathAt(ctx: SyscallContext, dirfd: number): Inode | number {
  if ((dirfd | 0) === AT_FDCWD) return ctx.task.cwd
  return ctx.task.files.get(dirfd | 0)?.inode ?? -EBADF
}

export function lookupAt(ctx: SyscallContext, dirfd: number, path: string, nofollow = false): Inode | number {
  const dir = dirAt(ctx, dirfd, path)
  return typeof dir === 'number' ? dir : ctx.kernel.vfs.lookup(path, dir, nofollow)
}

/**
 * getname: a path argument copied in from user memory (EFAULT), no longer
 * than PATH_MAX with its NUL (ENAMETOOLONG), and not empty (ENOENT) unless
 * the call takes an empty path (LOOKUP_EMPTY: AT_EMPTY_PATH and readlinkat).
 */
export function pathArg(ctx: SyscallContext, addr: number, empty = false): string | number {
  let p: string | null
  try {
    p = strncpyFromUser(ctx.task.mm, addr, 4096)
  } catch (e) {
    // Kept as the call's answer, not thrown: a call may have checks that come before the name's.
    if (e instanceof BadAddress) return -EFAULT
    throw e
  }
  if (p === null) return -ENAMETOOLONG
  return p === '' && !empty ? -ENOENT : p
}
