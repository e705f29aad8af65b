// File permission checks and changes: access/faccessat/faccessat2 and
// chmod/fchmod/fchmodat. Every task runs as root (uid 0, no capabilities
// dropped), so, as generic_permission does for root, reading and writing are
// always allowed, execution needs an execute bit on a non-directory, and a
// read-only mount refuses writes (EROFS).

import { EACCES, EBADF, EINVAL, EOPNOTSUPP, EROFS } from '../errno.js'
import { strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import { O_PATH } from './files.js'
import { AT_FDCWD, lookupAt } from './namei.js'
import type { Inode } from './vfs.js'
import { Directory, S_IFMT, Symlink } from './vfs.js'

const W_OK = 2
const X_OK = 1
const AT_SYMLINK_NOFOLLOW = 0x100
const AT_EACCESS = 0x200
const AT_EMPTY_PATH = 0x1000

/** The inode a path (or, with AT_EMPTY_PATH and "", dirfd itself) names. */
function resolve(ctx: SyscallContext, dirfd: number, pathAddr: number, flags: number): Inode | number {
  const path = strncpyFromUser(ctx.task.mm, pathAddr, 4096)
  if (path === null) return -36 // ENAMETOOLONG
  if (path === '' && (flags & AT_EMPTY_PATH) !== 0) {
    if (dirfd === AT_FDCWD) return ctx.task.cwd
    return ctx.task.files.get(dirfd)?.inode ?? -EBADF
  }
  return lookupAt(ctx, dirfd, path, (flags & AT_SYMLINK_NOFOLLOW) !== 0)
}

/** inode_permission for root. */
function permission(node: Inode, mode: number): number {
  if ((mode & W_OK) !== 0 && node.readOnly) return -EROFS
  if ((mode & X_OK) !== 0 && !(node instanceof Directory) && (node.mode & 0o111) === 0) return -EACCES
  return 0
}

function doFaccessat(ctx: SyscallContext, dirfd: number, path: number, mode: number, flags: number): number {
  if ((mode & ~7) !== 0) return -EINVAL
  if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_EACCESS | AT_EMPTY_PATH)) !== 0) return -EINVAL
  const node = resolve(ctx, dirfd | 0, path, flags)
  return typeof node === 'number' ? node : permission(node, mode)
}

export const sysAccess = (ctx: SyscallContext, path: number, mode: number) =>
  doFaccessat(ctx, AT_FDCWD, path, mode, 0)
export const sysFaccessat = (ctx: SyscallContext, dirfd: number, path: number, mode: number) =>
  doFaccessat(ctx, dirfd, path, mode, 0)
export const sysFaccessat2 = doFaccessat

/**
 * chmod_common: a read-only mount is EROFS, a symlink's mode cannot change
 * (notify_change: EOPNOTSUPP); the permission bits (and set-id/sticky)
 * change, the file type stays. mode is a umode_t.
 */
function chmodInode(node: Inode, mode: number): number {
  if (node.readOnly) return -EROFS
  if (node instanceof Symlink) return -EOPNOTSUPP
  if (node instanceof Directory) node.perm = mode & 0o7777
  else (node as { mode: number }).mode = (node.mode & S_IFMT) | (mode & 0o7777)
  return 0
}

/** fchmod: an O_PATH descriptor opens nothing to change (fdget: EBADF). */
export function sysFchmod(ctx: SyscallContext, fd: number, mode: number): number {
  const f = ctx.task.files.get(fd | 0)
  return f && (f.flags & O_PATH) === 0 ? chmodInode(f.inode, mode) : -EBADF
}

/** do_fchmodat: the flags (an unsigned int: AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH), the name, chmod_common. */
function doFchmodat(ctx: SyscallContext, dirfd: number, path: number, mode: number, flags: number): number {
  if ((flags >>> 0) & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return -EINVAL
  const node = resolve(ctx, dirfd | 0, path, flags)
  return typeof node === 'number' ? node : chmodInode(node, mode)
}

export const sysFchmodat = (ctx: SyscallContext, dirfd: number, path: number, mode: number) =>
  doFchmodat(ctx, dirfd, path, mode, 0)
export const sysFchmodat2 = doFchmodat
export const sysChmod = (ctx: SyscallContext, path: number, mode: number) =>
  doFchmodat(ctx, AT_FDCWD, path, mode, 0)
