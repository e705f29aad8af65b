// The calls that make, remove and rename names (fs/namei.c: do_mkdirat,
// do_rmdir, do_unlinkat, do_renameat2, do_linkat, do_symlinkat,
// do_readlinkat), each with its checks in Linux's order: the flags, the
// names (getname), the parent walks, the last components, then the
// vfs_* checks (may_create, may_delete) and tmpfs's own (simple_rmdir,
// shmem_rename2).

import { EBUSY, EEXIST, EINVAL, EISDIR, ENOENT, ENOTDIR, ENOTEMPTY, ENXIO, EPERM, EROFS } from '../errno.js'
import { copyToUser } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { modified } from '../time/clock.js'
import { utf8Encode } from '../utf8.js'
import {
  AT_FDCWD,
  emptyPathAt,
  filenameCreate,
  filenameLookup,
  filenameParentat,
  LAST_DOT,
  LAST_DOTDOT,
  LAST_NORM,
  LAST_ROOT,
  LOOKUP_FOLLOW,
  pathArg,
} from './namei.js'
import { initOwner } from './open.js'
import { CharDevice, Dentries, Directory, type Inode, RegularFile, S_IFCHR, Symlink } from './vfs.js'

const AT_SYMLINK_FOLLOW = 0x400
const AT_REMOVEDIR = 0x200
const AT_EMPTY_PATH = 0x1000
const RENAME_NOREPLACE = 1
const RENAME_EXCHANGE = 2
const RENAME_WHITEOUT = 4
const S_ISGID = 0o2000
const S_ISVTX = 0o1000

/** A name goes from its directory (unlink, rmdir, rename over it): the inode loses a link. */
function dropName(dir: Directory, name: string, node: Inode): void {
  dir.children.delete(name)
  node.nlink--
  if (node instanceof RegularFile) node.unlinked()
  if (node instanceof Directory) {
    node.dead = true
    dir.nlink--
  }
}

/** d_move: the entry under name goes to the head of dir's list, keeping offset when given. */
function movedIn(dir: Directory, name: string, offset?: number): void {
  if (dir.children instanceof Dentries) dir.children.moved(name, offset)
}

/** A directory is empty (simple_empty). */
const isEmpty = (d: Directory): boolean => d.children.size === 0

/** do_mkdirat: filename_create wanting a directory, then vfs_mkdir (mode & 01777, less the umask). */
function mkdirAt(ctx: SyscallContext, dfd: number, path: number, mode: number): number {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const c = filenameCreate(ctx, dfd, p, true)
  if (typeof c === 'number') return c
  if (c.dir.dead) return -ENOENT
  const d = new Directory(c.dir)
  d.perm = mode & (0o777 | S_ISVTX) & ~ctx.task.umask
  if (initOwner(c.dir, d)) d.perm |= S_ISGID
  modified(ctx, d)
  c.dir.children.set(c.name, d)
  c.dir.nlink++
  modified(ctx, c.dir)
  return 0
}

/** do_rmdir: "..", "." and "/" first (ENOTEMPTY, EINVAL, EBUSY), then the name, a directory, empty. */
function rmdirAt(ctx: SyscallContext, dfd: number, path: number): number {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const nd = filenameParentat(ctx, dfd, p)
  if (typeof nd === 'number') return nd
  if (nd.type === LAST_DOTDOT) return -ENOTEMPTY
  if (nd.type === LAST_DOT) return -EINVAL
  if (nd.type === LAST_ROOT) return -EBUSY
  const dir = nd.inode as Directory
  if (dir.readOnly) return -EROFS
  const node = ctx.kernel.vfs.lookupLast(nd)
  if (typeof node === 'number') return node
  if (!node) return -ENOENT
  // may_delete, then simple_rmdir.
  if (!(node instanceof Directory)) return -ENOTDIR
  if (node === ctx.kernel.vfs.root) return -EBUSY
  if (dir.dead) return -ENOENT
  if (!isEmpty(node)) return -ENOTEMPTY
  dropName(dir, nd.last, node)
  modified(ctx, dir)
  return 0
}

/** do_unlinkat: no last name is EISDIR; a name then a trailing slash is EISDIR or ENOTDIR; may_delete. */
function unlinkAt(ctx: SyscallContext, dfd: number, path: number): number {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const nd = filenameParentat(ctx, dfd, p)
  if (typeof nd === 'number') return nd
  if (nd.type !== LAST_NORM) return -EISDIR
  const dir = nd.inode as Directory
  if (dir.readOnly) return -EROFS
  const node = ctx.kernel.vfs.lookupLast(nd)
  if (typeof node === 'number') return node
  if (!node) return -ENOENT
  if (nd.trailing || node instanceof Directory) return node instanceof Directory ? -EISDIR : -ENOTDIR
  if (dir.dead) return -ENOENT
  dropName(dir, nd.last, node)
  modified(ctx, dir)
  return 0
}

/**
 * lock_rename's trap: when one parent lies under the other, the upper one's
 * child on the way down (renaming it is EINVAL, over it ENOTEMPTY).
 */
function renameTrap(newDir: Directory, oldDir: Directory): Directory | null {
  if (newDir === oldDir) return null
  const childToward = (from: Directory, top: Directory): Directory | null => {
    for (let p = from; ; ) {
      const up = p.parent ?? p
      if (up === top) return p
      if (up === p) return null
      p = up
    }
  }
  return childToward(newDir, oldDir) ?? childToward(oldDir, newDir)
}

/** do_renameat2, then vfs_rename and shmem_rename2 (RENAME_EXCHANGE swaps, RENAME_WHITEOUT leaves a 0:0 device). */
function renameAt(
  ctx: SyscallContext,
  dfd: number,
  from: number,
  dfd2: number,
  to: number,
  flags: number,
): number {
  flags >>>= 0
  if ((flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) !== 0) return -EINVAL
  if ((flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)) !== 0 && (flags & RENAME_EXCHANGE) !== 0) return -EINVAL
  const exchange = (flags & RENAME_EXCHANGE) !== 0
  const a = pathArg(ctx, from)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  const pa = filenameParentat(ctx, dfd, a)
  if (typeof pa === 'number') return pa
  if (typeof b === 'number') return b
  const pb = filenameParentat(ctx, dfd2, b)
  if (typeof pb === 'number') return pb
  if (pa.type !== LAST_NORM) return -EBUSY
  if (pb.type !== LAST_NORM) return (flags & RENAME_NOREPLACE) !== 0 ? -EEXIST : -EBUSY
  const oldDir = pa.inode as Directory
  const newDir = pb.inode as Directory
  if (oldDir.readOnly) return -EROFS
  const trap = renameTrap(newDir, oldDir)
  const vfs = ctx.kernel.vfs
  const source = vfs.lookupLast(pa)
  if (typeof source === 'number') return source
  if (!source) return -ENOENT
  const target = vfs.lookupLast(pb)
  if (typeof target === 'number') return target
  if (exchange && !target) return -ENOENT
  if ((flags & RENAME_NOREPLACE) !== 0 && target) return -EEXIST
  if (exchange && !(target instanceof Directory) && pb.trailing) return -ENOTDIR
  if (!(source instanceof Directory)) {
    if (pa.trailing) return -ENOTDIR
    if (!exchange && pb.trailing) return -ENOTDIR
  }
  if (source === trap) return -EINVAL
  if (target && target === trap) return exchange ? -EINVAL : -ENOTEMPTY
  // vfs_rename: the same inode under both names is done already.
  if (source === target) return 0
  const isDir = source instanceof Directory
  if (oldDir.dead) return -ENOENT
  if (!target) {
    if (newDir.dead) return -ENOENT
    if (newDir.readOnly) return -EROFS
  } else if (!exchange) {
    if (isDir && !(target instanceof Directory)) return -ENOTDIR
    if (!isDir && target instanceof Directory) return -EISDIR
    if (newDir.dead) return -ENOENT
  }
  if (exchange) {
    // Each name keeps its offset; both dentries move to the head (d_exchange).
    oldDir.children.set(pa.last, target as Inode)
    newDir.children.set(pb.last, source)
    movedIn(newDir, pb.last)
    movedIn(oldDir, pa.last)
    if (source instanceof Directory) source.parent = newDir
    if (target instanceof Directory) target.parent = oldDir
  } else {
    if (target instanceof Directory && !isEmpty(target)) return -ENOTEMPTY
    // simple_offset_rename: over a name, the entry takes that name's offset.
    const kept = newDir.children instanceof Dentries ? newDir.children.placeOf(pb.last).offset : 0
    if (target) dropName(newDir, pb.last, target)
    oldDir.children.delete(pa.last)
    if ((flags & RENAME_WHITEOUT) !== 0) {
      // Device 0:0, which no driver opens (ENXIO).
      const whiteout = new CharDevice(
        () => new Uint8Array(0),
        () => -ENXIO,
      )
      whiteout.mode = S_IFCHR
      oldDir.children.set(pa.last, whiteout)
    }
    newDir.children.set(pb.last, source)
    if (target) movedIn(newDir, pb.last, kept)
    if (source instanceof Directory) {
      source.parent = newDir
      oldDir.nlink--
      newDir.nlink++
    }
  }
  modified(ctx, oldDir)
  modified(ctx, newDir)
  return 0
}

/**
 * do_linkat: the flags, the old name (followed only with
 * AT_SYMLINK_FOLLOW; "" with AT_EMPTY_PATH is olddfd), the new one
 * (filename_create), then vfs_link: a directory cannot be linked (EPERM), a
 * file with no name left only if it was made linkable (O_TMPFILE).
 */
function linkAt(
  ctx: SyscallContext,
  dfd: number,
  from: number,
  dfd2: number,
  to: number,
  flags: number,
): number {
  flags |= 0
  if ((flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) !== 0) return -EINVAL
  const a = pathArg(ctx, from, (flags & AT_EMPTY_PATH) !== 0)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  const node =
    a === ''
      ? emptyPathAt(ctx, dfd)
      : filenameLookup(ctx, dfd, a, (flags & AT_SYMLINK_FOLLOW) !== 0 ? LOOKUP_FOLLOW : 0)
  if (typeof node === 'number') return node
  if (typeof b === 'number') return b
  const c = filenameCreate(ctx, dfd2, b, false)
  if (typeof c === 'number') return c
  if (c.dir.dead) return -ENOENT
  if (node instanceof Directory) return -EPERM
  if (node.nlink === 0 && !(node instanceof RegularFile && node.linkable)) return -ENOENT
  c.dir.children.set(c.name, node)
  modified(ctx, c.dir)
  node.nlink++
  if (node instanceof RegularFile) node.linked()
  return 0
}

/** do_symlinkat: the target's name first, then filename_create, then vfs_symlink. */
function symlinkAt(ctx: SyscallContext, target: number, dfd: number, linkpath: number): number {
  const t = pathArg(ctx, target)
  const l = pathArg(ctx, linkpath)
  if (typeof t === 'number') return t
  if (typeof l === 'number') return l
  const c = filenameCreate(ctx, dfd, l, false)
  if (typeof c === 'number') return c
  if (c.dir.dead) return -ENOENT
  const link = new Symlink(t)
  initOwner(c.dir, link)
  modified(ctx, link)
  c.dir.children.set(c.name, link)
  modified(ctx, c.dir)
  return 0
}

/**
 * do_readlinkat: bufsiz is an int, and not positive is EINVAL before the
 * name is looked at; the name may be empty (LOOKUP_EMPTY: dfd itself, an
 * O_PATH symlink). Anything but a symlink is EINVAL (ENOENT when named by
 * an empty name); the copy out may fault (EFAULT).
 */
function readlinkAt(ctx: SyscallContext, dfd: number, path: number, buf: number, size: number): number {
  size |= 0
  if (size <= 0) return -EINVAL
  const p = pathArg(ctx, path, true)
  if (typeof p === 'number') return p
  const node = p === '' ? emptyPathAt(ctx, dfd) : filenameLookup(ctx, dfd, p, 0)
  if (typeof node === 'number') return node
  if (!(node instanceof Symlink)) return p === '' ? -ENOENT : -EINVAL
  const bytes = utf8Encode(node.target).subarray(0, size)
  copyToUser(ctx.task.mm, buf, bytes)
  return bytes.length
}

export function registerNameiOps(def: SyscallDef): void {
  def(83, 'mkdir', (ctx, path, mode) => mkdirAt(ctx, AT_FDCWD, path, mode))
  def(258, 'mkdirat', (ctx, dfd, path, mode) => mkdirAt(ctx, dfd, path, mode))
  def(87, 'unlink', (ctx, path) => unlinkAt(ctx, AT_FDCWD, path))
  def(84, 'rmdir', (ctx, path) => rmdirAt(ctx, AT_FDCWD, path))
  def(263, 'unlinkat', (ctx, dfd, path, flags) => {
    if ((flags & ~AT_REMOVEDIR) !== 0) return -EINVAL
    return (flags & AT_REMOVEDIR) !== 0 ? rmdirAt(ctx, dfd, path) : unlinkAt(ctx, dfd, path)
  })
  def(82, 'rename', (ctx, from, to) => renameAt(ctx, AT_FDCWD, from, AT_FDCWD, to, 0))
  def(264, 'renameat', (ctx, dfd, from, dfd2, to) => renameAt(ctx, dfd, from, dfd2, to, 0))
  def(316, 'renameat2', (ctx, dfd, from, dfd2, to, flags) => renameAt(ctx, dfd, from, dfd2, to, flags))
  def(86, 'link', (ctx, from, to) => linkAt(ctx, AT_FDCWD, from, AT_FDCWD, to, 0))
  def(265, 'linkat', (ctx, dfd, from, dfd2, to, flags) => linkAt(ctx, dfd, from, dfd2, to, flags))
  def(88, 'symlink', (ctx, target, linkpath) => symlinkAt(ctx, target, AT_FDCWD, linkpath))
  def(266, 'symlinkat', (ctx, target, dfd, linkpath) => symlinkAt(ctx, target, dfd, linkpath))
  def(89, 'readlink', (ctx, path, buf, size) => readlinkAt(ctx, AT_FDCWD, path, buf, size))
  def(267, 'readlinkat', (ctx, dfd, path, buf, size) => readlinkAt(ctx, dfd, path, buf, size))
}
