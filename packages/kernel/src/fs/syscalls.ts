// The host's system calls for files, directories, descriptors and pipes (fs/):
// registered into the kernel's syscall table by syscalls.ts.

import { EBADF, EINVAL, EISDIR, ENOENT, ENOTDIR, ENOTTY } from '../errno.js'
import { copyToUser } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef, SyscallFn } from '../syscalls.js'
import { modified } from '../time/clock.js'
import { utf8Encode } from '../utf8.js'
import { registerChown } from './chown.js'
import { sysFallocate } from './fallocate.js'
import { registerFcntl } from './fcntl.js'
import {
  FdTable,
  fileOf,
  O_CLOEXEC,
  O_CREAT,
  O_DIRECT,
  O_NONBLOCK,
  O_RDONLY,
  O_TRUNC,
  O_WRONLY,
  OpenFile,
} from './files.js'
import { cwdPath } from './fs-struct.js'
import { sysLseek } from './llseek.js'
import { AT_FDCWD, emptyPathAt, lookupAt, pathArg } from './namei.js'
import { registerNameiOps } from './namei-ops.js'
import { O_LARGEFILE, openPath } from './open.js'
import {
  sysAccess,
  sysChmod,
  sysFaccessat,
  sysFaccessat2,
  sysFchmod,
  sysFchmodat,
  sysFchmodat2,
} from './permissions.js'
import { sysPoll, sysPpoll } from './poll.js'
import { fmodeWrite, newsizeOk, registerReadWrite } from './read-write.js'
import { sysGetdents64 } from './readdir.js'
import { sysFstatfs, sysStatfs } from './statfs.js'
import { registerStatx } from './statx.js'
import { Directory, type Inode, inodeBlocks, Pipe, PipeEnd, RegularFile } from './vfs.js'

const AT_SYMLINK_NOFOLLOW = 0x100
const _AT_SYMLINK_FOLLOW = 0x400
const AT_NO_AUTOMOUNT = 0x800
const AT_EMPTY_PATH = 0x1000
const AT_STATX_SYNC_TYPE = 0x6000

const TCGETS = 0x5401
const TIOCGWINSZ = 0x5413
/** HC_FILE_OPEN: the guest's do_filp_open, with the path copied in and the flags checked. */
export function hostOpen(
  ctx: SyscallContext,
  path: string,
  flags: number,
  mode: number,
  dirfd = AT_FDCWD,
): number {
  return openPath(ctx, path, flags, mode, dirfd)
}

/** do_truncate: inode_newsize_ok, then the new size. */
function truncateTo(ctx: SyscallContext, inode: RegularFile, len: number): number {
  const bad = newsizeOk(ctx, len)
  if (bad) return bad
  const r = inode.truncate(len)
  if (r < 0) return r
  modified(ctx, inode)
  return 0
}

// struct stat (x86-64, 144 bytes).
function statBuf(node: Inode, ino: number): Uint8Array {
  const b = new Uint8Array(144)
  const v = new DataView(b.buffer)
  const u64 = (o: number, x: number) => v.setBigUint64(o, BigInt(x), true)
  u64(0, 1) // st_dev
  u64(8, ino)
  u64(16, node.nlink)
  v.setUint32(24, node.mode, true)
  v.setUint32(28, node.uid ?? 0, true)
  v.setUint32(32, node.gid ?? 0, true)
  u64(48, node.size())
  u64(56, 4096)
  // st_blocks in 512-byte units: a host file's as the host has them, else as tmpfs counts them.
  u64(64, inodeBlocks(node))
  // st_atime, st_mtime, st_ctime: the one time the inode keeps, in seconds (set by utimensat).
  for (const o of [72, 88, 104]) u64(o, node.mtime)
  return b
}

/**
 * vfs_fstatat: with AT_EMPTY_PATH an empty (or NULL) name and a descriptor
 * is fstat; else vfs_statx checks the flags, then the name (getname's
 * errors), then looks it up.
 */
function fstatat(ctx: SyscallContext, dirfd: number, path: number, buf: number, flags: number): number {
  flags |= 0
  dirfd |= 0
  const empty = (flags & AT_EMPTY_PATH) !== 0
  const name = empty && path === 0 ? '' : pathArg(ctx, path, empty)
  if (name === '' && dirfd >= 0) return fstat(ctx, dirfd, buf)
  if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE)) !== 0)
    return -EINVAL
  if (typeof name === 'number') return name
  const node =
    name === '' ? emptyPathAt(ctx, dirfd) : lookupAt(ctx, dirfd, name, (flags & AT_SYMLINK_NOFOLLOW) !== 0)
  if (typeof node === 'number') return node
  copyToUser(ctx.task.mm, buf, statBuf(node, ctx.kernel.vfs.inoOf(node)))
  return 0
}

/** ksys_dup3: the descriptors are unsigned ints; a new one past RLIMIT_NOFILE is EBADF. */
const dup3: SyscallFn = ({ task }, oldfd, newfd, flags) => {
  const from = oldfd >>> 0
  const to = newfd >>> 0
  if ((flags & ~O_CLOEXEC) !== 0 || from === to) return -EINVAL
  if (to >= FdTable.MAX) return -EBADF
  const f = fileOf(task, from)
  if (typeof f === 'number') return f
  f.refs++
  task.files.installAt(to, f, (flags & O_CLOEXEC) !== 0)
  return to
}
function makePipe(ctx: SyscallContext, fds: number, flags: number): number {
  // do_pipe2: O_CLOEXEC, O_NONBLOCK and O_DIRECT (packet mode, taken as a plain pipe); O_NONBLOCK is each end's.
  if ((flags & ~(O_CLOEXEC | O_NONBLOCK | O_DIRECT)) !== 0) return -EINVAL
  const pipe = new Pipe()
  const r = ctx.task.files.install(
    new OpenFile(new PipeEnd(pipe, false), O_RDONLY | (flags & O_NONBLOCK), 'pipe:[r]'),
    (flags & O_CLOEXEC) !== 0,
  )
  const w = ctx.task.files.install(
    new OpenFile(new PipeEnd(pipe, true), O_WRONLY | (flags & O_NONBLOCK), 'pipe:[w]'),
    (flags & O_CLOEXEC) !== 0,
  )
  if (r < 0 || w < 0) {
    if (r >= 0) ctx.task.files.close(r)
    return r < 0 ? r : w // EMFILE
  }
  // do_pipe2: both numbers go out together, or the descriptors are given back (EFAULT).
  const out = new Uint8Array(8)
  const v = new DataView(out.buffer)
  v.setInt32(0, r, true)
  v.setInt32(4, w, true)
  try {
    copyToUser(ctx.task.mm, fds, out)
  } catch (e) {
    ctx.task.files.close(r)
    ctx.task.files.close(w)
    throw e
  }
  return 0
}

// vfs_fsync's host half: files here live in memory (or are read-only host mounts), always in sync;
// a pipe or socket cannot be synced (EINVAL), as on Linux.
function fsync(ctx: SyscallContext, fd: number): number {
  const f = ctx.task.files.get(fd | 0)
  if (!f) return -EBADF
  return f.inode instanceof PipeEnd || f.path === 'socket:' ? -EINVAL : 0
}

function fstat(ctx: SyscallContext, fd: number, buf: number): number {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  copyToUser(ctx.task.mm, buf, statBuf(f.inode, ctx.kernel.vfs.inoOf(f.inode)))
  return 0
}

export function registerFsSyscalls(def: SyscallDef): void {
  registerStatx(def)
  def(7, 'poll', sysPoll)
  def(271, 'ppoll', sysPpoll)
  def(21, 'access', sysAccess)
  def(269, 'faccessat', sysFaccessat)
  def(439, 'faccessat2', sysFaccessat2)
  def(90, 'chmod', sysChmod)
  def(91, 'fchmod', sysFchmod)
  def(268, 'fchmodat', sysFchmodat)
  def(452, 'fchmodat2', sysFchmodat2)
  def(137, 'statfs', sysStatfs)
  def(138, 'fstatfs', sysFstatfs)
  def(3, 'close', ({ task }, fd) => task.files.close(fd | 0)) // an unsigned int: the upper half is not part of it

  def(8, 'lseek', sysLseek)

  // read(2) and write(2) are the guest kernel's (fs/read_write.c: sys_read/sys_write through HC_FILE_READ and
  // HC_FILE_WRITE); the host side of a write is Kernel.fileWrite, which writev and sendfile share.
  registerReadWrite(def)

  def(16, 'ioctl', ({ task }, fd, request, arg) => {
    const f = fileOf(task, fd)
    if (typeof f === 'number') return f
    const r = f.inode.ioctl ? f.inode.ioctl(request) : -ENOTTY
    if (r !== 0) return r
    if (request === TCGETS) {
      // A cooked terminal: ICRNL IXON / OPOST ONLCR / B38400 CS8 CREAD / ISIG ICANON ECHO ECHOE ECHOK IEXTEN.
      const t = new Uint8Array(60)
      const v = new DataView(t.buffer)
      v.setUint32(0, 0o2400, true)
      v.setUint32(4, 0o5, true)
      v.setUint32(8, 0o277, true)
      v.setUint32(12, 0o105073, true)
      t.set([3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 0, 18, 15, 23, 22, 0], 17)
      copyToUser(task.mm, arg, t)
    } else if (request === TIOCGWINSZ) {
      const w = new Uint8Array(8)
      new DataView(w.buffer).setUint16(0, 24, true)
      new DataView(w.buffer).setUint16(2, 80, true)
      copyToUser(task.mm, arg, w)
    }
    return 0
  })

  // open and openat are the guest's (guest/fs/open.c, which checks the flags and hands the walk to hostOpen).
  // creat: do_sys_open(AT_FDCWD, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE), flags that need no checking.
  def(85, 'creat', (ctx, path, mode) => {
    const p = pathArg(ctx, path)
    return typeof p === 'number'
      ? p
      : openPath(ctx, p, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode, AT_FDCWD)
  })

  def(5, 'fstat', fstat)
  def(4, 'stat', (ctx, path, buf) => fstatat(ctx, AT_FDCWD, path, buf, 0))
  def(6, 'lstat', (ctx, path, buf) => fstatat(ctx, AT_FDCWD, path, buf, AT_SYMLINK_NOFOLLOW))
  def(262, 'newfstatat', fstatat)

  def(32, 'dup', ({ task }, fd) => {
    const f = fileOf(task, fd)
    if (typeof f === 'number') return f
    f.refs++
    return task.files.install(f)
  })
  def(33, 'dup2', (ctx, a, b) =>
    a >>> 0 === b >>> 0 ? (ctx.task.files.get(a >>> 0) ? b >>> 0 : -EBADF) : dup3(ctx, a, b, 0),
  )
  def(292, 'dup3', dup3)

  registerFcntl(def)

  def(22, 'pipe', (ctx, fds) => makePipe(ctx, fds, 0))
  def(293, 'pipe2', (ctx, fds, flags) => makePipe(ctx, fds, flags))

  def(217, 'getdents64', sysGetdents64)

  registerNameiOps(def)
  registerChown(def)
  // do_sys_ftruncate: the length, the descriptor, then a regular file open for writing; the new size
  // within RLIMIT_FSIZE (inode_newsize_ok).
  def(77, 'ftruncate', (ctx, fd, len) => {
    if (len < 0) return -EINVAL
    const f = fileOf(ctx.task, fd)
    if (typeof f === 'number') return f
    if (!(f.inode instanceof RegularFile) || !fmodeWrite(f)) return -EINVAL
    return truncateTo(ctx, f.inode, len)
  })
  // do_sys_truncate → vfs_truncate: the length, the path, a directory is EISDIR, else a regular file.
  def(76, 'truncate', (ctx, path, len) => {
    if (len < 0) return -EINVAL
    const p = pathArg(ctx, path)
    if (typeof p === 'number') return p
    const node = lookupAt(ctx, AT_FDCWD, p)
    if (typeof node === 'number') return node
    if (node instanceof Directory) return -EISDIR
    if (!(node instanceof RegularFile)) return -EINVAL
    return truncateTo(ctx, node, len)
  })
  // getcwd: a removed cwd is ENOENT; size is an unsigned long; the path is from the task's root.
  def(79, 'getcwd', (ctx, buf, size) => {
    if (ctx.task.cwd.dead) return -ENOENT
    const cwd = utf8Encode(`${cwdPath(ctx.kernel.vfs, ctx.task)}\0`)
    if (size >= 0 && size < cwd.length) return -34
    copyToUser(ctx.task.mm, buf, cwd)
    return cwd.length
  })
  def(80, 'chdir', (ctx, path) => {
    const p = pathArg(ctx, path)
    if (typeof p === 'number') return p
    const node = lookupAt(ctx, AT_FDCWD, p)
    if (typeof node === 'number') return node
    if (!(node instanceof Directory)) return -ENOTDIR
    ctx.task.cwd = node
    return 0
  })
  def(81, 'fchdir', ({ task }, fd) => {
    const f = fileOf(task, fd)
    if (typeof f === 'number') return f
    if (!(f.inode instanceof Directory)) return -ENOTDIR
    task.cwd = f.inode
    return 0
  })
  def(95, 'umask', ({ task }, mask) => {
    const old = task.umask
    task.umask = mask & 0o777
    return old
  })

  def(285, 'fallocate', sysFallocate)
  def(74, 'fsync', (ctx, fd) => fsync(ctx, fd))
  def(75, 'fdatasync', (ctx, fd) => fsync(ctx, fd))
}
