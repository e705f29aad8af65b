// Path lookup for the system calls (fs/namei.c's role on the host): where
// a path starts (path_init), the whole path (filename_lookup), its parent
// and last component (filename_parentat), and a new name's place
// (filename_create). The walk itself is the file system's (Vfs).

import { EBADF, EEXIST, EFAULT, ENAMETOOLONG, ENOENT, ENOTDIR, EROFS } from '../errno.js'
import { BadAddress, strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import { taskRoot } from './fs-struct.js'
import { Directory, type Inode, LAST_NORM, LOOKUP_FOLLOW, type Nameidata } from './vfs.js'

export { LAST_DOT, LAST_DOTDOT, LAST_NORM, LAST_ROOT, LOOKUP_DIRECTORY, LOOKUP_FOLLOW } from './vfs.js'

/** dirfd meaning "the current directory". */
export const AT_FDCWD = -100

/**
 * path_init: an absolute path starts at the root whatever dfd is; a
 * relative one at the cwd (AT_FDCWD) or at dfd, an int (EBADF), which must
 * be a directory unless the path is empty (ENOTDIR).
 */
export function pathInit(ctx: SyscallContext, dfd: number, path: string): Nameidata | number {
  const vfs = ctx.kernel.vfs
  // dirfd is an int (see fileOf): AT_FDCWD often arrives as 0x00000000ffffff9c.
  const root = taskRoot(vfs, ctx.task)
  if (path.startsWith('/') || (dfd | 0) === AT_FDCWD) return vfs.nameidata(ctx.task.cwd, path, 0, root)
  const f = ctx.task.files.get(dfd | 0)
  if (!f) return -EBADF
  if (path !== '' && !(f.inode instanceof Directory)) return -ENOTDIR
  return vfs.nameidata(f.inode, path, 0, root)
}

/** filename_lookup: what path names (flags: LOOKUP_FOLLOW, LOOKUP_DIRECTORY); "" is dfd itself (LOOKUP_EMPTY). */
export function filenameLookup(
  ctx: SyscallContext,
  dfd: number,
  path: string,
  flags: number,
): Inode | number {
  const nd = pathInit(ctx, dfd, path)
  if (typeof nd === 'number') return nd
  nd.flags = flags
  const r = ctx.kernel.vfs.pathLookupat(nd, path)
  return r < 0 ? r : nd.inode
}

/** filename_parentat: the directory holding path's last component, which nd.last names (nd.type: LAST_*). */
export function filenameParentat(ctx: SyscallContext, dfd: number, path: string): Nameidata | number {
  const nd = pathInit(ctx, dfd, path)
  if (typeof nd === 'number') return nd
  const r = ctx.kernel.vfs.linkPathWalk(nd, path)
  return r < 0 ? r : nd
}

/**
 * filename_create: where a new name goes. No last name to create ("/",
 * ".", "..") or one that exists is EEXIST; a trailing slash is only for a
 * directory to be (else ENOENT); a read-only mount is EROFS last.
 */
export function filenameCreate(
  ctx: SyscallContext,
  dfd: number,
  path: string,
  wantDir: boolean,
): { dir: Directory; name: string } | number {
  const nd = filenameParentat(ctx, dfd, path)
  if (typeof nd === 'number') return nd
  if (nd.type !== LAST_NORM) return -EEXIST
  const child = ctx.kernel.vfs.lookupLast(nd)
  if (typeof child === 'number') return child
  if (child) return -EEXIST
  if (nd.trailing && !wantDir) return -ENOENT
  const dir = nd.inode as Directory
  return dir.readOnly ? -EROFS : { dir, name: nd.last }
}

/** An empty path with AT_EMPTY_PATH (or LOOKUP_EMPTY): dirfd's own inode, of any type; AT_FDCWD's the cwd. */
export function emptyPathAt(ctx: SyscallContext, dirfd: number): Inode | number {
  if ((dirfd | 0) === AT_FDCWD) return ctx.task.cwd
  return ctx.task.files.get(dirfd | 0)?.inode ?? -EBADF
}

/** A non-empty path looked up from dirfd, the last symlink followed unless nofollow. */
export function lookupAt(ctx: SyscallContext, dirfd: number, path: string, nofollow = false): Inode | number {
  if (path === '') return -ENOENT
  return filenameLookup(ctx, dirfd, path, nofollow ? 0 : LOOKUP_FOLLOW)
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
