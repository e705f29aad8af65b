// System calls implemented on the host side: everything do_syscall_64 does
// not route through a guest sys_* function reaches here via HC_SYSCALL.
// Each returns a value for rax (negative errno) or WouldBlock, in which
// case the task is parked and the syscall restarted when ready.

import type { Cpu } from '@probekit/x86-emu'
import { sysGetgroups, sysGetresid } from './credentials.js'
import {
  EBADF,
  EEXIST,
  EINVAL,
  EISDIR,
  ENOENT,
  ENOTDIR,
  ENOTTY,
  EPERM,
  ERESTARTNOHAND,
  ESRCH,
} from './errno.js'
import {
  O_ACCMODE,
  O_APPEND,
  O_CLOEXEC,
  O_CREAT,
  O_DIRECTORY,
  O_EXCL,
  O_RDONLY,
  O_TRUNC,
  O_WRONLY,
  OpenFile,
  type WouldBlock,
} from './fs/files.js'
import { AT_FDCWD, dirAt, lookupAt } from './fs/namei.js'
import { sysAccess, sysChmod, sysFaccessat, sysFaccessat2, sysFchmod, sysFchmodat } from './fs/permissions.js'
import { sysPoll, sysPpoll } from './fs/poll.js'
import { sysFstatfs, sysStatfs } from './fs/statfs.js'
import { Directory, type Inode, Pipe, PipeEnd, RegularFile, S_IFMT, S_IFREG, Symlink } from './fs/vfs.js'
import type { Kernel, PtRegsFrame } from './kernel.js'
import { sysMadvise } from './mm/madvise.js'
import { PAGE, PROT_READ, PROT_WRITE, pageUp } from './mm/mm.js'
import {
  copyFromUser,
  copyToUser,
  readUserU64,
  strncpyFromUser,
  writeUserU32,
  writeUserU64,
} from './mm/user-memory.js'
import { sysConnect, sysGetpeername, sysGetsockname, sysSocket } from './net/socket.js'
import { sysPrctl } from './prctl.js'
import { futex, wait4, waitid } from './process.js'
import { sysGetpgid, sysGetpgrp, sysGetsid, sysSetpgid, sysSetsid } from './process-groups.js'
import { sysGetrlimit, sysPrlimit64, sysSetrlimit } from './rlimits.js'
import { sysGetRobustList, sysSetRobustList } from './robust-futex.js'
import { sysGetrusage, sysTimes } from './sched/cputime.js'
import { sysRseq } from './sched/rseq.js'
import { sysSchedGetaffinity } from './sched/sched-affinity.js'
import type { Task } from './sched/task.js'
import { bit, NSIG, restoreRtFrame, SIGKILL, SIGSEGV, SIGSTOP, sanitizeMask } from './signal/signals.js'
import { SYSCALL_NAMES_64 } from './syscall-names.js'
import { sysSysinfo } from './sysinfo.js'
import { utf8Encode } from './utf8.js'

export interface SyscallContext {
  kernel: Kernel
  cpu: Cpu
  task: Task
  frame: PtRegsFrame
  regs: number
}

export type SyscallResult = number | WouldBlock
export type SyscallFn = (ctx: SyscallContext, ...args: number[]) => SyscallResult

export const syscallTable = new Map<number, SyscallFn>()
const names = new Map<number, string>()

function def(nr: number, name: string, fn: SyscallFn): void {
  syscallTable.set(nr, fn)
  names.set(nr, name)
}

export function syscallName(nr: number): string {
  return names.get(nr) ?? SYSCALL_NAMES_64[nr] ?? `syscall_${nr}`
}

/** A descriptor argument is a C int: the register's upper half is not part of it (mov $-100, %edi leaves it zero). */
function fileOf(t: Task, fd: number): OpenFile | number {
  return t.files.get(fd | 0) ?? -EBADF
}

// ---------------------------------------------------------------- files

def(3, 'close', ({ task }, fd) => task.files.close(fd))

def(8, 'lseek', ({ task }, fd, off, whence) => {
  const f = fileOf(task, fd)
  return typeof f === 'number' ? f : f.seek(off, whence)
})

function readInto(ctx: SyscallContext, f: OpenFile, buf: number, count: number, at?: number): SyscallResult {
  if (at !== undefined) {
    if (!(f.inode instanceof RegularFile)) return -29
    const data = f.inode.readAt(at, count)
    copyToUser(ctx.task.mm, buf, data)
    return data.length
  }
  const r = f.read(count)
  if (typeof r === 'number' || !(r instanceof Uint8Array)) return r
  copyToUser(ctx.task.mm, buf, r)
  return r.length
}

// read(2) and write(2) are the guest kernel's (fs/read_write.c: sys_read/sys_write through HC_FILE_READ and
// HC_FILE_WRITE); the host side of a write is Kernel.fileWrite, which writev and sendfile share.
def(17, 'pread64', (ctx, fd, buf, count, pos) => {
  const f = fileOf(ctx.task, fd)
  return typeof f === 'number' ? f : readInto(ctx, f, buf, count, pos)
})
def(18, 'pwrite64', (ctx, fd, buf, count, pos) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!(f.inode instanceof RegularFile)) return -29
  const n = f.inode.writeAt(pos, copyFromUser(ctx.task.mm, buf, count))
  if (n > 0) modified(ctx, f.inode)
  return n
})

function iovecs(ctx: SyscallContext, iov: number, cnt: number): { base: number; len: number }[] {
  const out = []
  for (let i = 0; i < cnt; i++)
    out.push({
      base: readUserU64(ctx.task.mm, iov + 16 * i),
      len: readUserU64(ctx.task.mm, iov + 16 * i + 8),
    })
  return out
}

def(19, 'readv', (ctx, fd, iov, cnt) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  let total = 0
  for (const v of iovecs(ctx, iov, cnt)) {
    if (v.len === 0) continue
    const r = readInto(ctx, f, v.base, v.len)
    if (typeof r !== 'number') return total > 0 ? total : r
    if (r < 0) return total > 0 ? total : r
    total += r
    if (r < v.len) break
  }
  return total
})

def(20, 'writev', (ctx, fd, iov, cnt) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  const parts = iovecs(ctx, iov, cnt).map((v) => copyFromUser(ctx.task.mm, v.base, v.len))
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    all.set(p, o)
    o += p.length
  }
  return ctx.kernel.fileWrite(ctx.cpu, ctx.task, f, all)
})

/**
 * sendfile(out_fd, in_fd, offset, count): copy from a seekable file to any
 * writable one. With an offset pointer the copy starts there and the
 * pointer moves, not in_fd's position; without, in_fd's position moves.
 * Only what out_fd took counts (a pipe may take part, or block).
 */
def(40, 'sendfile', (ctx, outFd, inFd, offsetPtr, count) => {
  const out = fileOf(ctx.task, outFd)
  if (typeof out === 'number') return out
  const inp = fileOf(ctx.task, inFd)
  if (typeof inp === 'number') return inp
  if ((inp.flags & O_ACCMODE) === O_WRONLY || (out.flags & O_ACCMODE) === O_RDONLY) return -EBADF
  // in_fd must be a file that can be read at an offset; out_fd must not be in append mode.
  if (!inp.inode.seekable || (out.flags & O_APPEND) !== 0) return -EINVAL
  const mm = ctx.task.mm
  const saved = inp.pos
  const start = offsetPtr ? readUserU64(mm, offsetPtr) : inp.pos
  inp.pos = start
  const data = inp.read(Math.min(count, 0x7ffff000))
  inp.pos = saved
  if (!(data instanceof Uint8Array)) return data
  if (data.length === 0) return 0
  const n = ctx.kernel.fileWrite(ctx.cpu, ctx.task, out, data)
  if (typeof n !== 'number' || n < 0) return n
  if (offsetPtr) writeUserU64(mm, offsetPtr, start + n)
  else inp.pos = start + n
  return n
})

const TCGETS = 0x5401
const TIOCGWINSZ = 0x5413
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
  let node: Inode | number = lookupAt(ctx, dirfd, path)
  if (typeof node === 'number') {
    if (node !== -ENOENT || (flags & O_CREAT) === 0) return node
    const p = parentAt(ctx, dirfd, path)
    if (typeof p === 'number') return p
    node = new RegularFile(new Uint8Array(0), 0o100000 | (mode & 0o7777 & ~task.umask))
    modified(ctx, node)
    p.dir.children.set(p.name, node)
    modified(ctx, p.dir)
  } else if ((flags & O_CREAT) !== 0 && (flags & O_EXCL) !== 0) return -EEXIST
  if ((flags & O_DIRECTORY) !== 0 && !(node instanceof Directory)) return -ENOTDIR
  if (node instanceof Directory && (flags & O_ACCMODE) !== 0) return -EISDIR
  if ((flags & O_TRUNC) !== 0 && node instanceof RegularFile && (flags & O_ACCMODE) !== 0) {
    node.truncate(0)
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

def(2, 'open', (ctx, path, flags, mode) => {
  const p = strncpyFromUser(ctx.task.mm, path, 4096)
  return p === null ? -36 : openPath(ctx, p, flags, mode)
})
def(257, 'openat', (ctx, dirfd, path, flags, mode) => {
  const p = strncpyFromUser(ctx.task.mm, path, 4096)
  if (p === null) return -36
  return openPath(ctx, p, flags, mode, dirfd)
})

// struct stat (x86-64, 144 bytes).
function statBuf(node: Inode): Uint8Array {
  const b = new Uint8Array(144)
  const v = new DataView(b.buffer)
  const u64 = (o: number, x: number) => v.setBigUint64(o, BigInt(x), true)
  u64(0, 1) // st_dev
  u64(8, node.ino)
  u64(16, node.nlink)
  v.setUint32(24, node.mode, true)
  u64(48, node.size())
  u64(56, 4096)
  // st_blocks as tmpfs counts them: whole pages of a regular file's data, in 512-byte units; 0 for the rest.
  u64(64, (node.mode & S_IFMT) === S_IFREG ? Math.ceil(node.size() / 4096) * 8 : 0)
  // st_atime, st_mtime, st_ctime: the one time the inode keeps, in seconds (set by utimensat).
  for (const o of [72, 88, 104]) u64(o, node.mtime)
  return b
}

def(5, 'fstat', (ctx, fd, buf) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  copyToUser(ctx.task.mm, buf, statBuf(f.inode))
  return 0
})
function statAt(ctx: SyscallContext, dirfd: number, path: number, buf: number, nofollow: boolean): number {
  const p = strncpyFromUser(ctx.task.mm, path, 4096)
  if (p === null) return -36
  const node = lookupAt(ctx, dirfd, p, nofollow)
  if (typeof node === 'number') return node
  copyToUser(ctx.task.mm, buf, statBuf(node))
  return 0
}
def(4, 'stat', (ctx, path, buf) => statAt(ctx, AT_FDCWD, path, buf, false))
def(6, 'lstat', (ctx, path, buf) => statAt(ctx, AT_FDCWD, path, buf, true))
def(262, 'newfstatat', (ctx, dirfd, path, buf, flags) => {
  const p = strncpyFromUser(ctx.task.mm, path, 4096)
  if (p === null) return -36
  if (p === '' && (flags & 0x1000) !== 0) return syscallTable.get(5)!(ctx, dirfd, buf) // AT_EMPTY_PATH
  return statAt(ctx, dirfd, path, buf, (flags & 0x100) !== 0) // AT_SYMLINK_NOFOLLOW
})

def(32, 'dup', ({ task }, fd) => {
  const f = fileOf(task, fd)
  if (typeof f === 'number') return f
  f.refs++
  return task.files.install(f)
})
const dup3: SyscallFn = ({ task }, oldfd, newfd, flags) => {
  const f = fileOf(task, oldfd)
  if (typeof f === 'number') return f
  if (oldfd === newfd) return flags === -1 ? newfd : -EINVAL
  f.refs++
  task.files.installAt(newfd, f, (flags & O_CLOEXEC) !== 0)
  return newfd
}
def(33, 'dup2', (ctx, a, b) => (a === b ? (ctx.task.files.get(a) ? b : -EBADF) : dup3(ctx, a, b, 0)))
def(292, 'dup3', dup3)

def(72, 'fcntl', ({ task }, fd, cmd, arg) => {
  const f = fileOf(task, fd)
  if (typeof f === 'number') return f
  const e = task.files.fds[fd]!
  switch (cmd) {
    case 0: // F_DUPFD
    case 1030: // F_DUPFD_CLOEXEC
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

function makePipe(ctx: SyscallContext, fds: number, flags: number): number {
  const pipe = new Pipe()
  const r = ctx.task.files.install(
    new OpenFile(new PipeEnd(pipe, false), 0, 'pipe:[r]'),
    (flags & O_CLOEXEC) !== 0,
  )
  const w = ctx.task.files.install(
    new OpenFile(new PipeEnd(pipe, true), 1, 'pipe:[w]'),
    (flags & O_CLOEXEC) !== 0,
  )
  writeUserU32(ctx.task.mm, fds, r)
  writeUserU32(ctx.task.mm, fds + 4, w)
  return 0
}
def(22, 'pipe', (ctx, fds) => makePipe(ctx, fds, 0))
def(293, 'pipe2', (ctx, fds, flags) => makePipe(ctx, fds, flags))

def(217, 'getdents64', (ctx, fd, buf, count) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!(f.inode instanceof Directory)) return -ENOTDIR
  const entries: [string, Inode][] = [
    ['.', f.inode],
    ['..', f.inode.parent ?? f.inode],
    ...[...f.inode.children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]
  const out: number[] = []
  while (f.pos < entries.length) {
    const [name, node] = entries[f.pos]
    const nameBytes = utf8Encode(name)
    const reclen = Math.ceil((19 + nameBytes.length + 1) / 8) * 8
    if (out.length + reclen > count) break
    const rec = new Uint8Array(reclen)
    const v = new DataView(rec.buffer)
    v.setBigUint64(0, BigInt(node.ino), true)
    v.setBigUint64(8, BigInt(f.pos + 1), true)
    v.setUint16(16, reclen, true)
    const fmt = node.mode & S_IFMT
    rec[18] = fmt === 0o040000 ? 4 : fmt === 0o100000 ? 8 : fmt === 0o020000 ? 2 : fmt === 0o010000 ? 1 : 0
    rec.set(nameBytes, 19)
    out.push(...rec)
    f.pos++
  }
  if (out.length === 0 && f.pos < entries.length) return -EINVAL
  copyToUser(ctx.task.mm, buf, Uint8Array.from(out))
  return out.length
})

function pathArg(ctx: SyscallContext, addr: number): string | number {
  const p = strncpyFromUser(ctx.task.mm, addr, 4096)
  return p === null ? -36 : p
}

def(83, 'mkdir', (ctx, path, mode) => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const parent = createAt(ctx, AT_FDCWD, p)
  if (typeof parent === 'number') return parent
  const r = ctx.kernel.vfs.mkdir(parent.dir, parent.name, mode & ~ctx.task.umask)
  const made = parent.dir.children.get(parent.name)
  if (r === 0 && made) modified(ctx, made)
  return changedEntries(ctx, parent.dir, r)
})
def(87, 'unlink', (ctx, path) => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const parent = parentAt(ctx, AT_FDCWD, p)
  if (typeof parent === 'number') return parent
  return changedEntries(ctx, parent.dir, ctx.kernel.vfs.unlink(parent.dir, parent.name))
})
def(84, 'rmdir', (ctx, path) => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const parent = parentAt(ctx, AT_FDCWD, p)
  if (typeof parent === 'number') return parent
  return changedEntries(ctx, parent.dir, ctx.kernel.vfs.rmdir(parent.dir, parent.name))
})
def(82, 'rename', (ctx, from, to) => {
  const a = pathArg(ctx, from)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  if (typeof b === 'number') return b
  const pa = parentAt(ctx, AT_FDCWD, a)
  const pb = parentAt(ctx, AT_FDCWD, b)
  if (typeof pa === 'number') return pa
  if (typeof pb === 'number') return pb
  const node = pa.dir.children.get(pa.name)
  if (!node) return -ENOENT
  const existing = pb.dir.children.get(pb.name)
  if (existing instanceof Directory && !(node instanceof Directory)) return -EISDIR
  if (node instanceof Directory && existing && !(existing instanceof Directory)) return -ENOTDIR
  if (existing instanceof Directory && existing.children.size > 0) return -39
  pa.dir.children.delete(pa.name)
  pb.dir.children.set(pb.name, node)
  modified(ctx, pa.dir)
  modified(ctx, pb.dir)
  if (node instanceof Directory) node.parent = pb.dir
  return 0
})
def(86, 'link', (ctx, from, to) => {
  const a = pathArg(ctx, from)
  const b = pathArg(ctx, to)
  if (typeof a === 'number') return a
  if (typeof b === 'number') return b
  const node = lookupAt(ctx, AT_FDCWD, a, true)
  if (typeof node === 'number') return node
  if (node instanceof Directory) return -EPERM
  const pb = createAt(ctx, AT_FDCWD, b)
  if (typeof pb === 'number') return pb
  if (pb.dir.children.has(pb.name)) return -EEXIST
  pb.dir.children.set(pb.name, node)
  modified(ctx, pb.dir)
  node.nlink++
  return 0
})
def(88, 'symlink', (ctx, target, linkpath) => {
  const t = pathArg(ctx, target)
  const l = pathArg(ctx, linkpath)
  if (typeof t === 'number') return t
  if (typeof l === 'number') return l
  const pl = createAt(ctx, AT_FDCWD, l)
  if (typeof pl === 'number') return pl
  if (pl.dir.children.has(pl.name)) return -EEXIST
  const link = new Symlink(t)
  modified(ctx, link)
  pl.dir.children.set(pl.name, link)
  modified(ctx, pl.dir)
  return 0
})
def(89, 'readlink', (ctx, path, buf, size) => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const node = lookupAt(ctx, AT_FDCWD, p, true)
  if (typeof node === 'number') return node
  if (!(node instanceof Symlink)) return -EINVAL
  const bytes = utf8Encode(node.target).subarray(0, size)
  copyToUser(ctx.task.mm, buf, bytes)
  return bytes.length
})
def(77, 'ftruncate', (ctx, fd, len) => {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!(f.inode instanceof RegularFile)) return -EINVAL
  if ((f.flags & O_ACCMODE) === 0) return -EINVAL
  f.inode.truncate(len)
  modified(ctx, f.inode)
  return 0
})
def(76, 'truncate', (ctx, path, len) => {
  const p = pathArg(ctx, path)
  if (typeof p === 'number') return p
  const node = lookupAt(ctx, AT_FDCWD, p)
  if (typeof node === 'number') return node
  if (!(node instanceof RegularFile)) return -EISDIR
  node.truncate(len)
  modified(ctx, node)
  return 0
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

// ---------------------------------------------------------------- memory

const MAP_SHARED = 1
const MAP_FIXED = 0x10
const MAP_ANONYMOUS = 0x20

def(12, 'brk', ({ task }, addr) => {
  const mm = task.mm
  if (addr === 0 || addr < mm.brkStart) return mm.brk
  const newEnd = pageUp(addr)
  const oldEnd = pageUp(mm.brk)
  if (newEnd > oldEnd) {
    if (mm.vmas.some((v) => v.start < newEnd && v.end > oldEnd)) return mm.brk
    mm.addVma({
      start: oldEnd,
      end: newEnd,
      prot: PROT_READ | PROT_WRITE,
      kind: 'heap',
      name: '[heap]',
      shared: false,
    })
  } else if (newEnd < oldEnd) mm.unmapRange(newEnd, oldEnd)
  mm.brk = addr
  return addr
})

def(9, 'mmap', (ctx, addr, len, prot, flags, fd, off) => {
  const mm = ctx.task.mm
  if (len <= 0 || addr % PAGE !== 0) return -EINVAL
  const size = pageUp(len)
  const start = (flags & MAP_FIXED) !== 0 ? addr : mm.findFree(size, addr)
  const kind = (flags & MAP_ANONYMOUS) !== 0 ? 'anon' : 'file'
  mm.addVma({ start, end: start + size, prot, kind, name: '', shared: (flags & MAP_SHARED) !== 0 })
  if ((flags & MAP_ANONYMOUS) === 0) {
    const f = fileOf(ctx.task, fd)
    if (typeof f === 'number') return f
    if (!(f.inode instanceof RegularFile)) return -19
    mm.write(start, f.inode.readAt(off, len))
  }
  return start
})
def(11, 'munmap', ({ task }, addr, len) => {
  if (addr % PAGE !== 0) return -EINVAL
  task.mm.unmapRange(addr, addr + pageUp(len))
  return 0
})
def(10, 'mprotect', ({ task, cpu }, addr, len, prot) => {
  if (addr % PAGE !== 0) return -EINVAL
  task.mm.protect(addr, addr + pageUp(len), prot)
  cpu.flushTlb()
  return 0
})
def(28, 'madvise', sysMadvise)
def(25, 'mremap', ({ task, cpu }, oldAddr, oldSize, newSize, flags, newAddr) => {
  const MAYMOVE = 1
  const FIXED = 2
  const mm = task.mm
  if (oldAddr % PAGE !== 0 || newSize === 0) return -EINVAL
  const oldLen = pageUp(oldSize)
  const newLen = pageUp(newSize)
  const vma = mm.findVma(oldAddr)
  if (!vma || oldAddr + oldLen > vma.end) return -14 // EFAULT
  if ((flags & FIXED) === 0) {
    if (newLen <= oldLen) {
      mm.unmapRange(oldAddr + newLen, oldAddr + oldLen)
      cpu.flushTlb()
      return oldAddr
    }
    const free = !mm.vmas.some((v) => v !== vma && v.start < oldAddr + newLen && v.end > oldAddr + oldLen)
    if (free && oldAddr + oldLen === vma.end) {
      vma.end = oldAddr + newLen
      return oldAddr
    }
    if ((flags & MAYMOVE) === 0) return -12 // ENOMEM
  }
  // Move: the pages themselves go to the new place (no copy).
  const dest = (flags & FIXED) !== 0 ? newAddr : mm.findFree(newLen)
  mm.unmapRange(dest, dest + newLen)
  mm.addVma({ ...vma, start: dest, end: dest + newLen })
  for (let off = 0; off < Math.min(oldLen, newLen); off += PAGE) {
    const m = mm.space.lookup(oldAddr + off)
    if (!m) continue
    mm.space.unmap(oldAddr + off)
    mm.space.map(dest + off, m.frame, m.flags)
  }
  mm.unmapRange(oldAddr, oldAddr + oldLen)
  cpu.flushTlb()
  return dest
})

// ---------------------------------------------------------------- process state

def(39, 'getpid', ({ task }) => task.tgid)
def(186, 'gettid', ({ task }) => task.pid)
def(110, 'getppid', ({ task }) => task.parent?.tgid ?? 0)
for (const [nr, name] of [
  [102, 'getuid'],
  [104, 'getgid'],
  [107, 'geteuid'],
  [108, 'getegid'],
] as const)
  def(nr, name, () => 0)
def(218, 'set_tid_address', ({ task }, tidptr) => {
  task.clearChildTid = tidptr
  return task.pid
})
def(273, 'set_robust_list', sysSetRobustList)
def(274, 'get_robust_list', sysGetRobustList)
def(334, 'rseq', sysRseq)
def(204, 'sched_getaffinity', sysSchedGetaffinity)
def(99, 'sysinfo', sysSysinfo)
def(157, 'prctl', sysPrctl)
def(7, 'poll', sysPoll)
def(271, 'ppoll', sysPpoll)
def(13, 'rt_sigaction', ({ task }, sig, act, oldact, sigsetsize) => {
  if (sig < 1 || sig > NSIG || sigsetsize !== 8) return -EINVAL
  const a = task.sighand.actions[sig]
  if (oldact) {
    const b = new Uint8Array(32)
    const v = new DataView(b.buffer)
    v.setBigUint64(0, BigInt.asUintN(64, BigInt(a.handler)), true)
    v.setBigUint64(8, BigInt(a.flags >>> 0), true)
    v.setBigUint64(16, BigInt.asUintN(64, BigInt(a.restorer)), true)
    v.setBigUint64(24, a.mask, true)
    copyToUser(task.mm, oldact, b)
  }
  if (act) {
    if (sig === SIGKILL || sig === SIGSTOP) return -EINVAL
    const v = new DataView(copyFromUser(task.mm, act, 32).buffer)
    a.handler = Number(BigInt.asIntN(64, v.getBigUint64(0, true)))
    a.flags = Number(v.getBigUint64(8, true) & 0xffffffffn)
    a.restorer = Number(BigInt.asIntN(64, v.getBigUint64(16, true)))
    a.mask = sanitizeMask(v.getBigUint64(24, true))
  }
  return 0
})
def(14, 'rt_sigprocmask', ({ task }, how, set, oldset, sigsetsize) => {
  if (sigsetsize !== 8) return -EINVAL
  const old = task.blocked
  if (set) {
    const m = new DataView(copyFromUser(task.mm, set, 8).buffer).getBigUint64(0, true)
    if (how === 0) task.blocked = sanitizeMask(old | m)
    else if (how === 1) task.blocked = sanitizeMask(old & ~m)
    else if (how === 2) task.blocked = sanitizeMask(m)
    else return -EINVAL
  }
  if (oldset) {
    const b = new Uint8Array(8)
    new DataView(b.buffer).setBigUint64(0, old, true)
    copyToUser(task.mm, oldset, b)
  }
  return 0
})
def(127, 'rt_sigpending', ({ task }, set) => {
  let m = 0n
  for (const sig of task.pending.keys()) m |= bit(sig)
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, m & task.blocked, true)
  copyToUser(task.mm, set, b)
  return 0
})
/** Is a signal pending that the current mask lets through? */
function deliverable(task: Task): boolean {
  for (const sig of task.pending.keys()) if ((task.blocked & bit(sig)) === 0n) return true
  return false
}
def(130, 'rt_sigsuspend', ({ task }, mask, size) => {
  if (size !== 8) return -EINVAL
  if (task.savedSigmask === null) task.savedSigmask = task.blocked
  task.blocked = sanitizeMask(new DataView(copyFromUser(task.mm, mask, 8).buffer).getBigUint64(0, true))
  if (deliverable(task)) return -4 // EINTR: the handler runs on the way out, with the old mask saved
  return { wouldBlock: true, ready: () => false, restartCode: ERESTARTNOHAND } // only a signal wakes it
})
def(34, 'pause', ({ task }) =>
  deliverable(task) ? -4 : { wouldBlock: true, ready: () => false, restartCode: ERESTARTNOHAND },
)
def(15, 'rt_sigreturn', ({ kernel, cpu, task, frame }) => {
  const mask = restoreRtFrame(task, frame, cpu)
  if (mask === null) {
    kernel.killTask(cpu, task, SIGSEGV)
    return 0
  }
  task.blocked = sanitizeMask(mask)
  return frame.get('ax')
})
def(131, 'sigaltstack', ({ task, frame }, ss, oldss) => {
  const SS_ONSTACK = 1
  const SS_DISABLE = 2
  const sp = frame.get('sp')
  const alt = task.altStack
  const onAlt = alt.size > 0 && sp > alt.sp && sp <= alt.sp + alt.size
  if (oldss) {
    const b = new Uint8Array(24)
    const v = new DataView(b.buffer)
    v.setBigUint64(0, BigInt.asUintN(64, BigInt(alt.sp)), true)
    v.setInt32(8, alt.size === 0 ? SS_DISABLE : onAlt ? SS_ONSTACK : 0, true)
    v.setBigUint64(16, BigInt(alt.size), true)
    copyToUser(task.mm, oldss, b)
  }
  if (ss) {
    if (onAlt) return -EPERM
    const v = new DataView(copyFromUser(task.mm, ss, 24).buffer)
    const flags = v.getInt32(8, true)
    if ((flags & ~(SS_DISABLE | 0x80000000)) !== 0) return -EINVAL
    if ((flags & SS_DISABLE) !== 0) task.altStack = { sp: 0, size: 0 }
    else {
      const size = Number(v.getBigUint64(16, true))
      if (size < 2048) return -12 // ENOMEM: below MINSIGSTKSZ
      task.altStack = { sp: Number(BigInt.asIntN(64, v.getBigUint64(0, true))), size }
    }
  }
  return 0
})
// do_sched_yield: the caller goes to the back of the run queue at its return to user mode (schedule()).
def(24, 'sched_yield', ({ kernel, cpu }) => {
  kernel.requestReschedule(cpu)
  return 0
})

const ARCH_SET_GS = 0x1001
const ARCH_SET_FS = 0x1002
const ARCH_GET_FS = 0x1003
const ARCH_GET_GS = 0x1004
def(158, 'arch_prctl', ({ task, cpu }, code, addr) => {
  switch (code) {
    case ARCH_SET_FS:
      cpu.fsBase = addr
      task.fsBase = addr
      return 0
    case ARCH_SET_GS:
      cpu.kernelGsBase = addr
      task.gsBase = addr
      return 0
    case ARCH_GET_FS:
      writeUserU64(task.mm, addr, cpu.fsBase)
      return 0
    case ARCH_GET_GS:
      writeUserU64(task.mm, addr, cpu.kernelGsBase)
      return 0
    default:
      return -EINVAL
  }
})

def(63, 'uname', ({ task }, buf) => {
  const fields = ['Linux', 'probekit', '2.6.26-probekit', '#1 SMP', 'x86_64', '(none)']
  const out = new Uint8Array(65 * 6)
  fields.forEach((f, i) => {
    out.set(utf8Encode(f), i * 65)
  })
  copyToUser(task.mm, buf, out)
  return 0
})

// ---------------------------------------------------------------- time and randomness

/** The virtual clock: guest cycles at a nominal 1 GHz, starting at a fixed epoch. */
export const CLOCK_EPOCH_SECONDS = 1_700_000_000
/** CLOCK_REALTIME in whole seconds: what file times are kept in. */
export function wallSeconds(kernel: Kernel, cpu = 0): number {
  return CLOCK_EPOCH_SECONDS + Math.floor(kernel.machine.cycles(cpu) / 1e9)
}
/** A write, truncation or creation: the inode's modification time is now. */
function modified(ctx: SyscallContext, node: Inode): void {
  node.mtime = wallSeconds(ctx.kernel, ctx.cpu.id)
}
/** A directory whose entries a call changed (it returned 0) is modified too. */
function changedEntries(ctx: SyscallContext, dir: Directory, r: number): number {
  if (r === 0) modified(ctx, dir)
  return r
}
function nowNs(ctx: SyscallContext): number {
  return ctx.kernel.machine.cycles(ctx.cpu.id)
}
def(228, 'clock_gettime', (ctx, clock, tp) => {
  const ns = nowNs(ctx)
  const sec = (clock === 0 ? CLOCK_EPOCH_SECONDS : 0) + Math.floor(ns / 1e9)
  const b = new Uint8Array(16)
  const v = new DataView(b.buffer)
  v.setBigInt64(0, BigInt(sec), true)
  v.setBigInt64(8, BigInt(ns % 1e9), true)
  copyToUser(ctx.task.mm, tp, b)
  return 0
})
const UTIME_NOW = (1 << 30) - 1
const UTIME_OMIT = (1 << 30) - 2
/**
 * utimensat(dirfd, path, times, flags), and futimens (path NULL: dirfd
 * itself). Inodes keep one time, the modification time in whole seconds;
 * times NULL or UTIME_NOW is the virtual clock's now.
 */
def(280, 'utimensat', (ctx, dirfd, path, times, flags) => {
  let node: Inode | number
  if (path === 0) {
    const f = fileOf(ctx.task, dirfd)
    node = typeof f === 'number' ? f : f.inode
  } else {
    const p = pathArg(ctx, path)
    if (typeof p === 'number') return p
    node = lookupAt(ctx, dirfd, p, (flags & 0x100) !== 0) // AT_SYMLINK_NOFOLLOW
  }
  if (typeof node === 'number') return node
  let sec = CLOCK_EPOCH_SECONDS + Math.floor(nowNs(ctx) / 1e9)
  if (times) {
    const nsec = readUserU64(ctx.task.mm, times + 24)
    if (nsec === UTIME_OMIT) return 0
    if (nsec !== UTIME_NOW) {
      if (nsec >= 1e9) return -EINVAL
      sec = readUserU64(ctx.task.mm, times + 16)
    }
  }
  if (node.readOnly) return -30 // EROFS
  node.mtime = sec
  return 0
})

/** time(tloc): glibc calls it when there is no vDSO (there is none here). */
def(201, 'time', (ctx, tloc) => {
  const sec = CLOCK_EPOCH_SECONDS + Math.floor(nowNs(ctx) / 1e9)
  if (tloc) writeUserU64(ctx.task.mm, tloc, sec)
  return sec
})
def(96, 'gettimeofday', (ctx, tv) => {
  if (!tv) return 0
  const ns = nowNs(ctx)
  const b = new Uint8Array(16)
  const v = new DataView(b.buffer)
  v.setBigInt64(0, BigInt(CLOCK_EPOCH_SECONDS + Math.floor(ns / 1e9)), true)
  v.setBigInt64(8, BigInt(Math.floor((ns % 1e9) / 1000)), true)
  copyToUser(ctx.task.mm, tv, b)
  return 0
})

/** getrandom with a fixed seed per kernel: runs are reproducible. */
def(318, 'getrandom', ({ kernel, task }, buf, len) => {
  const out = kernel.randomBytes(len)
  copyToUser(task.mm, buf, out)
  return len
})

// ---------------------------------------------------------------- processes

def(61, 'wait4', (ctx, pid, status, options) => wait4(ctx, pid | 0, status, options))
def(247, 'waitid', (ctx, idtype, id, infop, options) => waitid(ctx, idtype, id | 0, infop, options))
def(202, 'futex', (ctx, uaddr, op, val, val2, uaddr2, val3) =>
  futex(ctx, uaddr, op, val, val2, uaddr2, val3 | 0),
)

/** Sleep until the virtual clock passes a deadline kept across restarts. */
function sleepUntil(ctx: SyscallContext, nr: number, ns: number): SyscallResult {
  const { kernel, task } = ctx
  const now = kernel.machine.cycles(0)
  if (task.restart?.nr === nr && task.restart.deadline !== undefined) {
    if (now >= task.restart.deadline) {
      task.restart = null
      return 0
    }
  } else task.restart = { nr, deadline: now + ns }
  const deadline = task.restart!.deadline!
  // A handler makes it EINTR; without one (SIGSTOP/SIGCONT) it goes on to the same deadline (restart_block).
  return { wouldBlock: true, ready: () => kernel.machine.cycles(0) >= deadline, restartCode: ERESTARTNOHAND }
}
function timespecNs(ctx: SyscallContext, ts: number): number {
  return readUserU64(ctx.task.mm, ts) * 1e9 + readUserU64(ctx.task.mm, ts + 8)
}
def(35, 'nanosleep', (ctx, req) => sleepUntil(ctx, 35, timespecNs(ctx, req)))
def(230, 'clock_nanosleep', (ctx, _clock, flags, req) => {
  const ns = timespecNs(ctx, req)
  return sleepUntil(ctx, 230, (flags & 1) !== 0 ? Math.max(0, ns - ctx.kernel.machine.cycles(0)) : ns)
})

function sendSignal(ctx: SyscallContext, target: Task, sig: number, code = 0): number {
  if (sig < 0 || sig > NSIG) return -EINVAL
  if (sig === 0) return 0
  ctx.kernel.sendSignal(ctx.cpu, target, { signo: sig, code, pid: ctx.task.tgid })
  return 0
}
// vfs_fsync's host half: files here live in memory (or are read-only host mounts), always in sync;
// a pipe or socket cannot be synced (EINVAL), as on Linux.
function fsync(ctx: SyscallContext, fd: number): number {
  const f = ctx.task.files.get(fd | 0)
  if (!f) return -EBADF
  return f.inode instanceof PipeEnd || f.path === 'socket:' ? -EINVAL : 0
}
def(74, 'fsync', (ctx, fd) => fsync(ctx, fd))
def(75, 'fdatasync', (ctx, fd) => fsync(ctx, fd))

// kill of a pid, tkill and tgkill run in the guest (kernel/signal.c) down to send_signal's leaf;
// kill of a process group or of -1 comes here (to the caller's own process, for now).
def(62, 'kill', (ctx, pid, sig) => {
  const t = ctx.kernel.tasks.get(pid > 0 ? pid : ctx.task.tgid)
  return t && t.state !== 'zombie' ? sendSignal(ctx, t, sig) : -ESRCH
})

// ---------------------------------------------------------------- in their own files

def(21, 'access', sysAccess)
def(269, 'faccessat', sysFaccessat)
def(439, 'faccessat2', sysFaccessat2)
def(90, 'chmod', sysChmod)
def(91, 'fchmod', sysFchmod)
def(268, 'fchmodat', sysFchmodat)
def(137, 'statfs', sysStatfs)
def(138, 'fstatfs', sysFstatfs)
def(97, 'getrlimit', sysGetrlimit)
def(160, 'setrlimit', sysSetrlimit)
def(302, 'prlimit64', sysPrlimit64)
def(98, 'getrusage', sysGetrusage)
def(100, 'times', sysTimes)
def(111, 'getpgrp', sysGetpgrp)
def(121, 'getpgid', sysGetpgid)
def(109, 'setpgid', sysSetpgid)
def(124, 'getsid', sysGetsid)
def(112, 'setsid', sysSetsid)
def(115, 'getgroups', sysGetgroups)
def(118, 'getresuid', sysGetresid)
def(120, 'getresgid', sysGetresid)
def(41, 'socket', sysSocket)
def(42, 'connect', sysConnect)
def(51, 'getsockname', sysGetsockname)
def(52, 'getpeername', sysGetpeername)
