// The host half of open(2), openat(2) and creat(2): path_openat with
// open_last_lookups and do_open (fs/namei.c), in Linux's order. The guest's
// build_open_flags (guest/fs/open.c) has already refused bad flag
// combinations and copied the name in.

import { EEXIST, EINVAL, EISDIR, ELOOP, EMFILE, ENOENT, ENOTDIR, EROFS } from '../errno.js'
import type { SyscallContext } from '../syscalls.js'
import { modified } from '../time/clock.js'
import {
  O_ACCMODE,
  O_CLOEXEC,
  O_CREAT,
  O_DIRECT,
  O_DIRECTORY,
  O_EXCL,
  O_NOCTTY,
  O_NOFOLLOW,
  O_PATH,
  O_TRUNC,
  OpenFile,
} from './files.js'
import { filenameLookup, LAST_NORM, LOOKUP_DIRECTORY, LOOKUP_FOLLOW, pathInit } from './namei.js'
import { newsizeOk } from './read-write.js'
import { Directory, type Inode, RegularFile, S_IFREG, Symlink } from './vfs.js'

/** __O_TMPFILE (O_TMPFILE is it with O_DIRECTORY). */
const __O_TMPFILE = 0o20000000
/** Forced on every open of a 64-bit kernel (force_o_largefile). */
export const O_LARGEFILE = 0o100000
const __O_SYNC = 0o4000000
const O_DSYNC = 0o10000
const MAY_WRITE = 2
const MAY_READ = 4
const S_ISGID = 0o2000

/** ACC_MODE: what the access mode asks for (3 is read and write, as for the check). */
const accMode = (flags: number): number =>
  [MAY_READ, MAY_WRITE, MAY_READ | MAY_WRITE, MAY_READ | MAY_WRITE][flags & O_ACCMODE]

/** inode_init_owner: a new inode in a set-group-ID directory takes its group (a directory the bit too). */
export function initOwner(dir: Directory, node: { gid?: number }): boolean {
  if ((dir.perm & S_ISGID) === 0) return false
  node.gid = dir.gid
  return true
}

/** A new regular file in dir (lookup_open's create): mode without the umask, the owner rules. */
function createFile(ctx: SyscallContext, dir: Directory, name: string, mode: number): RegularFile {
  const node = new RegularFile(
    new Uint8Array(0),
    S_IFREG | (mode & 0o7777 & ~ctx.task.umask),
    ctx.kernel.vfs.shmem,
  )
  initOwner(dir, node)
  modified(ctx, node)
  dir.children.set(name, node)
  modified(ctx, dir)
  return node
}

/**
 * may_open: a symlink cannot be opened (ELOOP), a directory not for writing
 * (EISDIR); root passes the permission bits, a read-only mount refuses
 * writing (EROFS).
 */
function mayOpen(node: Inode, acc: number): number {
  if (node instanceof Symlink) return -ELOOP
  if (node instanceof Directory && (acc & MAY_WRITE) !== 0) return -EISDIR
  if ((acc & MAY_WRITE) !== 0 && node.readOnly && (node instanceof RegularFile || node instanceof Directory))
    return -EROFS
  return 0
}

/** The file's f_flags: what the open asked for, less the open-time flags (do_dentry_open), O_LARGEFILE on. */
const fileFlags = (flags: number): number =>
  ((flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) |
    O_LARGEFILE |
    (flags & __O_SYNC ? O_DSYNC : 0)) >>>
  0

function install(ctx: SyscallContext, node: Inode, flags: number, path: string): number {
  return ctx.task.files.install(new OpenFile(node, fileFlags(flags), path), (flags & O_CLOEXEC) !== 0)
}

/**
 * O_TMPFILE (do_tmpfile): the directory named (followed unless O_NOFOLLOW,
 * ENOTDIR otherwise), then an unnamed regular file in it, open: linkable
 * later unless O_EXCL.
 */
function openTmpfile(ctx: SyscallContext, dfd: number, path: string, flags: number, mode: number): number {
  const dir = filenameLookup(
    ctx,
    dfd,
    path,
    LOOKUP_DIRECTORY | ((flags & O_NOFOLLOW) === 0 ? LOOKUP_FOLLOW : 0),
  )
  if (typeof dir === 'number') return dir
  if (dir.readOnly) return -EROFS
  const d = dir as Directory
  if (d.dead) return -ENOENT
  const node = new RegularFile(
    new Uint8Array(0),
    S_IFREG | (mode & 0o7777 & ~ctx.task.umask),
    ctx.kernel.vfs.shmem,
  )
  initOwner(d, node)
  modified(ctx, node)
  const fd = install(ctx, node, flags, path)
  // No name: nlink 0, its pages go with the last open file.
  node.nlink = 0
  node.linkable = (flags & O_EXCL) === 0
  node.unlinked()
  return fd
}

/**
 * path_openat: the walk (link_path_walk), the last component
 * (open_last_lookups: with O_CREAT a trailing slash is EISDIR and a missing
 * name is created; a trailing symlink is followed unless O_NOFOLLOW, or
 * O_EXCL), then do_open's checks in order: EEXIST, EISDIR, ENOTDIR, may_open,
 * O_DIRECT, the truncation. flags are open_how's (the guest's build_open_how).
 */
export function openPath(
  ctx: SyscallContext,
  path: string,
  flags: number,
  mode: number,
  dfd: number,
): number {
  flags >>>= 0
  // get_unused_fd_flags comes before the walk.
  if (!ctx.task.files.hasFree()) return -EMFILE
  if ((flags & __O_TMPFILE) !== 0) return openTmpfile(ctx, dfd, path, flags, mode)
  const vfs = ctx.kernel.vfs
  const create = (flags & O_CREAT) !== 0
  const nofollow = (flags & O_NOFOLLOW) !== 0 || (create && (flags & O_EXCL) !== 0)
  const lookupFlags = ((flags & O_DIRECTORY) !== 0 ? LOOKUP_DIRECTORY : 0) | (nofollow ? 0 : LOOKUP_FOLLOW)
  if ((flags & O_PATH) !== 0) {
    // do_o_path: the name only (a symlink itself with O_NOFOLLOW), no permission asked.
    const node = filenameLookup(ctx, dfd, path, lookupFlags)
    return typeof node === 'number' ? node : install(ctx, node, flags, path)
  }
  const nd = pathInit(ctx, dfd, path)
  if (typeof nd === 'number') return nd
  nd.flags = lookupFlags
  let created = false
  for (let s = path; ; ) {
    const err = vfs.linkPathWalk(nd, s)
    if (err) return err
    if (nd.type === LAST_NORM && create) {
      if (nd.trailing) return -EISDIR
      const child = vfs.lookupLast(nd)
      if (typeof child === 'number') return child
      if (child === undefined) {
        const dir = nd.inode as Directory
        if (dir.dead) return -ENOENT
        if (dir.readOnly) return -EROFS
        nd.inode = createFile(ctx, dir, nd.last, mode)
        created = true
        break
      }
    } else if (nd.type === LAST_NORM && nd.trailing) nd.flags |= LOOKUP_FOLLOW | LOOKUP_DIRECTORY
    const link = vfs.walkLast(nd)
    if (typeof link === 'number') return link
    if (link === null) break
    s = link
  }
  // do_open
  const node = nd.inode
  if (create) {
    if ((flags & O_EXCL) !== 0 && !created) return -EEXIST
    if (node instanceof Directory) return -EISDIR
  }
  if ((nd.flags & LOOKUP_DIRECTORY) !== 0 && !(node instanceof Directory)) return -ENOTDIR
  const truncate = !created && node instanceof RegularFile && (flags & O_TRUNC) !== 0
  if (truncate && (node as Inode).readOnly) return -EROFS
  const acc = created ? 0 : accMode(flags) | ((flags & O_TRUNC) !== 0 ? MAY_WRITE : 0)
  const bad = mayOpen(node, acc)
  if (bad) return bad
  // do_dentry_open: O_DIRECT wants a file system that does direct I/O (tmpfs's regular files do).
  if ((flags & O_DIRECT) !== 0 && !(node instanceof RegularFile)) return -EINVAL
  if (truncate) {
    const r = newsizeOk(ctx, 0) || node.truncate(0)
    if (r < 0) return r
    modified(ctx, node)
  }
  const fd = install(ctx, node, flags, path)
  if (created && fd >= 0) (ctx.task.files.get(fd) as OpenFile).created = true
  return fd
}
