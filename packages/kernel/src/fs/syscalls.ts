// The host's system calls for files, directories, descriptors and pipes (fs/):
// registered into the kernel's syscall table by syscalls.ts.

import { EBADF, EEXIST, EINVAL, EISDIR, ELOOP, ENOENT, ENOTDIR, ENOTTY, EPERM, EROFS } from '../errno.js'
import { BadAddress, copyToUser, strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef, SyscallFn } from '../syscalls.js'
import { changedEntries, modified } from '../time/clock.js'
import { utf8Encode } from '../utf8.js'
import { registerChown } from './chown.js'
import {
  FdTable,
  fileOf,
  O_ACCMODE,
  O_APPEND,
  O_CLOEXEC,
  O_CREAT,
  O_DIRECT,
  O_DIRECTORY,
  O_EXCL,
  O_NOFOLLOW,
  O_NONBLOCK,
  O_PATH,
  O_RDONLY,
  O_TRUNC,
  O_WRONLY,
  OpenFile,
} from './files.js'
import { AT_FDCWD, dirAt, emptyPathAt, lookupAt, pathArg } from './namei.js'
import { sysAccess, sysChmod, sysFaccessat, sysFaccessat2, sysFchmod, sysFchmodat } from './permissions.js'
import { sysPoll, sysPpoll } from './poll.js'
import { fmodeWrite, newsizeOk, registerReadWrite } from './read-write.js'
import { sysFstatfs, sysStatfs } from './statfs.js'
import { registerStatx } from './statx.js'
import { Directory, type Inode, inodeBlocks, Pipe, PipeEnd, RegularFile, S_IFMT, Symlink } from './vfs.js'

const AT_SYMLINK_NOFOLLOW = 0x100
const AT_SYMLINK_FOLLOW = 0x400
const AT_NO_AUTOMOUNT = 0x800
const AT_EMPTY_PATH = 0x1000
const AT_STATX_SYNC_TYPE = 0x6000

const TCGETS = 0x5401
const TIOCGWINSZ = 0x5413
function parentAt(
  ctx: SyscallContext,
  dirfd: number,
  path: string,
): { dir: Directory; name: string } | number {
  const dir = dirAt(ctx, dirfd, path)
  return typeof dir === 'number' ? dir : ctx.kernel.vfs.parentOf(path, dir)
}

/**
 * Where a new name goes (filename_create): the parent and the last
 * component. A path whose last component is not a name ("/", ".", "..")
 * names something that exists: -EEXIST, as mkdir -p relies on.
 */
function createAt(
  ctx: SyscallContext,
  dirfd: number,
  path: string,
): { dir: Directory; name: string } | number {
  const r = parentAt(ctx, dirfd, path)
  return r === -EINVAL ? -EEXIST : r
}

function openPath(ctx: SyscallContext, path: string, flags: number, mode: number, dirfd = AT_FDCWD): number {
  const { task } = ctx
  // O_PATH opens the name only: the other flags but O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC are ignored.
  if ((flags & O_PATH) !== 0) flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
  let node: Inode | number = lookupAt(ctx, dirfd, path, (flags & O_NOFOLLOW) !== 0)
  // A symlink as the last component with O_NOFOLLOW is ELOOP (O_PATH opens the link itself).
  if (node instanceof Symlink && (flags & O_PATH) === 0) return -ELOOP
  if (typeof node === 'number') {
    if (node !== -ENOENT || (flags & O_CREAT) === 0) return node
    const p = parentAt(ctx, dirfd, path)
    if (typeof p === 'number') return p
    if (p.dir.readOnly) return -EROFS
    node = new RegularFile(new Uint8Array(0), 0o100000 | (mode & 0o7777 & ~task.umask), ctx.kernel.vfs.shmem)
    modified(ctx, node)
    p.dir.children.set(p.name, node)
    modified(ctx, p.dir)
  } else if ((flags & O_CREAT) !== 0 && (flags & O_EXCL) !== 0) return -EEXIST
  if ((flags & O_DIRECTORY) !== 0 && !(node instanceof Directory)) return -ENOTDIR
  if (node instanceof Directory && (flags & O_ACCMODE) !== 0) return -EISDIR
  if ((flags & O_TRUNC) !== 0 && node instanceof RegularFile && (flags & O_ACCMODE) !== 0) {
    const r = node.truncate(0)
    if (r < 0) return r
    modified(ctx, node)
  }
  return task.files.install(
    new OpenFile(node, flags & ~(O_CREAT | O_EXCL | O_TRUNC), path),
    (flags & O_CLOEXEC) !== 0,
  )
}

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

// The path calls, each with a directory fd for its *at form (AT_FDCWD for the old one).
const mkdirAt = (ctx: SyscallContext, dfd: number, path: number, mode: number): number => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const parent = createAt(ctx, dfd, p)
  if (typeof parent === 'number') return parent
  const r = ctx.kernel.vfs.mkdir(parent.dir, parent.name, mode & ~ctx.task.umask)
  const made = parent.dir.children.get(parent.name)
  if (r === 0 && made) modified(ctx, made)
  return changedEntries(ctx, parent.dir, r)
}

/** unlink, or rmdir when dir: the entry goes from its directory. */
const removeAt = (ctx: SyscallContext, dfd: number, path: number, dir: boolean): number => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const parent = parentAt(ctx, dfd, p)
  if (typeof parent === 'number') return parent
  const vfs = ctx.kernel.vfs
  return changedEntries(
    ctx,
    parent.dir,
    dir ? vfs.rmdir(parent.dir, parent.name) : vfs.unlink(parent.dir, parent.name),
  )
}

const renameAt = (ctx: SyscallContext, dfd: number, from: number, dfd2: number, to: number): number => {
  const a = pathArg(ctx, from)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  if (typeof b === 'number') return b
  const pa = parentAt(ctx, dfd, a)
  const pb = parentAt(ctx, dfd2, b)
  if (typeof pa === 'number') return pa
  if (typeof pb === 'number') return pb
  const node = pa.dir.children.get(pa.name)
  if (!node) return -ENOENT
  const existing = pb.dir.children.get(pb.name)
  if (existing instanceof Directory && !(node instanceof Directory)) return -EISDIR
  if (node instanceof Directory && existing && !(existing instanceof Directory)) return -ENOTDIR
  if (existing instanceof Directory && existing.children.size > 0) return -39
  if (pa.dir.readOnly || pb.dir.readOnly) return -EROFS
  // Two names of one inode: rename does nothing.
  if (existing === node) return 0
  pa.dir.children.delete(pa.name)
  pb.dir.children.set(pb.name, node)
  // The file renamed over loses that name (its space comes back with its last name and open file).
  if (existing) existing.nlink--
  if (existing instanceof RegularFile) existing.unlinked()
  modified(ctx, pa.dir)
  modified(ctx, pb.dir)
  if (node instanceof Directory) node.parent = pb.dir
  return 0
}

/**
 * do_linkat: the flags (AT_SYMLINK_FOLLOW, AT_EMPTY_PATH), the old name
 * (not followed unless AT_SYMLINK_FOLLOW), the new one (filename_create:
 * EEXIST), then vfs_link: a directory cannot be linked (EPERM).
 */
const linkAt = (
  ctx: SyscallContext,
  dfd: number,
  from: number,
  dfd2: number,
  to: number,
  flags: number,
): number => {
  flags |= 0
  if ((flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) !== 0) return -EINVAL
  const a = pathArg(ctx, from, (flags & AT_EMPTY_PATH) !== 0)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  const node = a === '' ? emptyPathAt(ctx, dfd) : lookupAt(ctx, dfd, a, (flags & AT_SYMLINK_FOLLOW) === 0)
  if (typeof node === 'number') return node
  if (typeof b === 'number') return b
  const pb = createAt(ctx, dfd2, b)
  if (typeof pb === 'number') return pb
  if (pb.dir.children.has(pb.name)) return -EEXIST
  if (pb.dir.readOnly) return -EROFS
  if (node instanceof Directory) return -EPERM
  pb.dir.children.set(pb.name, node)
  modified(ctx, pb.dir)
  node.nlink++
  if (node instanceof RegularFile) node.linked()
  return 0
}

const symlinkAt = (ctx: SyscallContext, target: number, dfd: number, linkpath: number): number => {
  const t = pathArg(ctx, target)
  const l = pathArg(ctx, linkpath)
  if (typeof t === 'number') return t
  if (typeof l === 'number') return l
  const pl = createAt(ctx, dfd, l)
  if (typeof pl === 'number') return pl
  if (pl.dir.children.has(pl.name)) return -EEXIST
  if (pl.dir.readOnly) return -EROFS
  const link = new Symlink(t)
  modified(ctx, link)
  pl.dir.children.set(pl.name, link)
  modified(ctx, pl.dir)
  return 0
}

/**
 * do_readlinkat: bufsiz is an int, and not positive is EINVAL before the
 * name is looked at; the name may be empty (LOOKUP_EMPTY: dfd itself, an
 * O_PATH symlink). Anything but a symlink is EINVAL (ENOENT when named by
 * an empty name); the copy out may fault (EFAULT).
 */
const readlinkAt = (ctx: SyscallContext, dfd: number, path: number, buf: number, size: number): number => {
  size |= 0
  if (size <= 0) return -EINVAL
  const p = pathArg(ctx, path, true)
  if (typeof p === 'number') return p
  const node = p === '' ? emptyPathAt(ctx, dfd) : lookupAt(ctx, dfd, p, true)
  if (typeof node === 'number') return node
  if (!(node instanceof Symlink)) return p === '' ? -ENOENT : -EINVAL
  const bytes = utf8Encode(node.target).subarray(0, size)
  copyToUser(ctx.task.mm, buf, bytes)
  return bytes.length
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
  def(137, 'statfs', sysStatfs)
  def(138, 'fstatfs', sysFstatfs)
  def(3, 'close', ({ task }, fd) => task.files.close(fd | 0)) // an unsigned int: the upper half is not part of it

  def(8, 'lseek', ({ task }, fd, off, whence) => {
    const f = fileOf(task, fd)
    return typeof f === 'number' ? f : f.seek(off, whence)
  })

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

  def(2, 'open', (ctx, path, flags, mode) => {
    const p = strncpyFromUser(ctx.task.mm, path, 4096)
    return p === null ? -36 : openPath(ctx, p, flags, mode)
  })
  def(257, 'openat', (ctx, dirfd, path, flags, mode) => {
    const p = strncpyFromUser(ctx.task.mm, path, 4096)
    if (p === null) return -36
    return openPath(ctx, p, flags, mode, dirfd)
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

  def(72, 'fcntl', ({ task }, fd, cmd, arg) => {
    const f = fileOf(task, fd)
    if (typeof f === 'number') return f
    const e = task.files.fds[fd | 0]! // an int, as fileOf reads it
    switch (cmd | 0) {
      case 0: // F_DUPFD
      case 1030: // F_DUPFD_CLOEXEC
        if (arg < 0 || arg >= FdTable.MAX) return -EINVAL // past RLIMIT_NOFILE
        f.refs++
        return task.files.install(f, cmd === 1030, arg)
      case 1: // F_GETFD
        return e.cloexec ? 1 : 0
      case 2: // F_SETFD
        e.cloexec = (arg & 1) !== 0
        return 0
      case 3: // F_GETFL
        return f.flags
      case 4: // F_SETFL
        f.flags = (f.flags & O_ACCMODE) | (arg & (O_APPEND | 0o4000))
        return 0
      case 1031: // F_SETPIPE_SZ
        return f.inode instanceof PipeEnd ? f.inode.pipe.resize(arg) : -EBADF
      case 1032: // F_GETPIPE_SZ
        return f.inode instanceof PipeEnd ? f.inode.pipe.capacity : -EBADF
      default:
        return -EINVAL
    }
  })

  def(22, 'pipe', (ctx, fds) => makePipe(ctx, fds, 0))
  def(293, 'pipe2', (ctx, fds, flags) => makePipe(ctx, fds, flags))

  /**
   * getdents64 (filldir64): count is kept in an int, so 2^31 and more is too
   * small for any entry (EINVAL); each entry is written in turn, and one
   * that faults ends the call: EFAULT if it was the first, else the bytes so far.
   */
  def(217, 'getdents64', (ctx, fd, buf, count) => {
    const f = fileOf(ctx.task, fd)
    if (typeof f === 'number') return f
    if (!(f.inode instanceof Directory)) return -ENOTDIR
    const room = count | 0
    const entries: [string, Inode][] = [
      ['.', f.inode],
      ['..', f.inode.parent ?? f.inode],
      ...[...f.inode.children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ]
    let written = 0
    while (f.pos < entries.length) {
      const [name, node] = entries[f.pos]
      const nameBytes = utf8Encode(name)
      const reclen = Math.ceil((19 + nameBytes.length + 1) / 8) * 8
      if (written + reclen > room) return written > 0 ? written : -EINVAL
      const rec = new Uint8Array(reclen)
      const v = new DataView(rec.buffer)
      v.setBigUint64(0, BigInt(ctx.kernel.vfs.inoOf(node)), true)
      v.setBigUint64(8, BigInt(f.pos + 1), true)
      v.setUint16(16, reclen, true)
      const fmt = node.mode & S_IFMT
      rec[18] = fmt === 0o040000 ? 4 : fmt === 0o100000 ? 8 : fmt === 0o020000 ? 2 : fmt === 0o010000 ? 1 : 0
      rec.set(nameBytes, 19)
      try {
        copyToUser(ctx.task.mm, buf + written, rec)
      } catch (e) {
        if (written > 0 && e instanceof BadAddress) return written
        throw e
      }
      written += reclen
      f.pos++
    }
    return written
  })

  def(83, 'mkdir', (ctx, path, mode) => mkdirAt(ctx, AT_FDCWD, path, mode))
  def(258, 'mkdirat', (ctx, dfd, path, mode) => mkdirAt(ctx, dfd | 0, path, mode))
  def(87, 'unlink', (ctx, path) => removeAt(ctx, AT_FDCWD, path, false))
  def(84, 'rmdir', (ctx, path) => removeAt(ctx, AT_FDCWD, path, true))
  // unlinkat: AT_REMOVEDIR (0x200) makes it rmdir.
  def(263, 'unlinkat', (ctx, dfd, path, flags) =>
    (flags & ~0x200) !== 0 ? -EINVAL : removeAt(ctx, dfd | 0, path, (flags & 0x200) !== 0),
  )
  def(82, 'rename', (ctx, from, to) => renameAt(ctx, AT_FDCWD, from, AT_FDCWD, to))
  def(264, 'renameat', (ctx, dfd, from, dfd2, to) => renameAt(ctx, dfd | 0, from, dfd2 | 0, to))
  // renameat2: RENAME_NOREPLACE (1) is EEXIST over an existing name; RENAME_EXCHANGE is not supported.
  def(316, 'renameat2', (ctx, dfd, from, dfd2, to, flags) => {
    if ((flags & ~1) !== 0) return -EINVAL
    if (flags & 1) {
      const b = pathArg(ctx, to)
      if (typeof b === 'number') return b
      if (typeof lookupAt(ctx, dfd2 | 0, b, true) !== 'number') return -EEXIST
    }
    return renameAt(ctx, dfd | 0, from, dfd2 | 0, to)
  })
  def(86, 'link', (ctx, from, to) => linkAt(ctx, AT_FDCWD, from, AT_FDCWD, to, 0))
  def(265, 'linkat', (ctx, dfd, from, dfd2, to, flags) => linkAt(ctx, dfd | 0, from, dfd2 | 0, to, flags))
  def(88, 'symlink', (ctx, target, linkpath) => symlinkAt(ctx, target, AT_FDCWD, linkpath))
  def(266, 'symlinkat', (ctx, target, dfd, linkpath) => symlinkAt(ctx, target, dfd | 0, linkpath))
  def(89, 'readlink', (ctx, path, buf, size) => readlinkAt(ctx, AT_FDCWD, path, buf, size))
  def(267, 'readlinkat', (ctx, dfd, path, buf, size) => readlinkAt(ctx, dfd | 0, path, buf, size))
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
  def(79, 'getcwd', (ctx, buf, size) => {
    const cwd = utf8Encode(`${ctx.kernel.vfs.pathOf(ctx.task.cwd)}\0`)
    if (size < cwd.length) return -34
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

  // fallocate (vfs_fallocate's checks, then shmem_fallocate): tmpfs knows KEEP_SIZE (1) and PUNCH_HOLE (2).
  def(285, 'fallocate', (ctx, fd, mode, offset, len) => {
    const f = fileOf(ctx.task, fd)
    if (typeof f === 'number') return f
    if (offset >= 2 ** 63 || len >= 2 ** 63 || len === 0) return -EINVAL // loff_t: negative
    mode |= 0
    if ((mode & ~3) !== 0 || ((mode & 2) !== 0 && (mode & 1) === 0)) return -95 // EOPNOTSUPP
    if ((f.flags & O_ACCMODE) === O_RDONLY || (f.flags & O_PATH) !== 0) return -EBADF
    if (f.inode instanceof PipeEnd) return -29 // ESPIPE
    if (f.inode instanceof Directory) return -EISDIR
    if (!(f.inode instanceof RegularFile)) return -19 // ENODEV
    const r = f.inode.fallocate(mode, offset, len)
    if (r === 0) modified(ctx, f.inode)
    return r
  })
  def(74, 'fsync', (ctx, fd) => fsync(ctx, fd))
  def(75, 'fdatasync', (ctx, fd) => fsync(ctx, fd))
}
