// fcntl(2) (fs/fcntl.c: do_fcntl): cmd is an unsigned int, arg an unsigned
// long that most commands read as an int. An O_PATH descriptor takes only
// the descriptor commands (else EBADF). Record locks are checked as
// fcntl_getlk/fcntl_setlk check them (the struct flock copied in, its
// whence, range and type, the open mode) and then granted: a process's own
// locks never conflict, and no other process locks these files. Leases and
// ownership are kept per open file; tmpfs files come sealed (F_SEAL_SEAL).

import { EBADF, EINVAL, ENOTDIR, EPERM, ESRCH } from '../errno.js'
import { copyFromUser, copyToUser } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { FdTable, O_APPEND, O_DIRECT, O_NONBLOCK, O_PATH, type OpenFile } from './files.js'
import { LOFF_MAX } from './loff.js'
import { fmodeRead, fmodeWrite } from './read-write.js'
import { Directory, PipeEnd, RegularFile } from './vfs.js'

const F_DUPFD = 0
const F_GETFD = 1
const F_SETFD = 2
const F_GETFL = 3
const F_SETFL = 4
const F_GETLK = 5
const F_SETLK = 6
const F_SETLKW = 7
const F_SETOWN = 8
const F_GETOWN = 9
const F_SETSIG = 10
const F_GETSIG = 11
const F_SETOWN_EX = 15
const F_GETOWN_EX = 16
const F_GETOWNER_UIDS = 17
const F_OFD_GETLK = 36
const F_OFD_SETLK = 37
const F_OFD_SETLKW = 38
const F_SETLEASE = 1024
const F_GETLEASE = 1025
const F_NOTIFY = 1026
const F_DUPFD_QUERY = 1027
const F_CREATED_QUERY = 1028
const F_DUPFD_CLOEXEC = 1030
const F_SETPIPE_SZ = 1031
const F_GETPIPE_SZ = 1032
const F_ADD_SEALS = 1033
const F_GET_SEALS = 1034
const F_GET_RW_HINT = 1035
const F_SET_RW_HINT = 1036

const EOVERFLOW = 75
const F_RDLCK = 0
const F_WRLCK = 1
const F_UNLCK = 2
const O_NOATIME = 0o1000000
const FASYNC = 0o20000
/** What F_SETFL may change. */
const SETFL_MASK = O_APPEND | O_NONBLOCK | O_DIRECT | O_NOATIME
const F_SEAL_SEAL = 1
const F_ALL_SEALS = 0x3f
const DN_MULTISHOT = 0x80000000
/** RWH_WRITE_LIFE_EXTREME: the largest write-life hint. */
const RWH_WRITE_LIFE_EXTREME = 5n

/** The per-open-file state fcntl keeps (struct fown_struct, the lease, the write hint is the inode's). */
interface FileFcntl {
  owner: number
  ownerType: number
  signal: number
  lease: number
}
const fcntlState = new WeakMap<OpenFile, FileFcntl>()
const stateOf = (f: OpenFile): FileFcntl => {
  let s = fcntlState.get(f)
  if (!s) {
    s = { owner: 0, ownerType: 1, signal: 0, lease: F_UNLCK }
    fcntlState.set(f, s)
  }
  return s
}
const writeHints = new WeakMap<object, bigint>()

/** The commands an O_PATH descriptor answers (check_fcntl_cmd). */
const PATH_CMDS = new Set([
  F_CREATED_QUERY,
  F_DUPFD,
  F_DUPFD_CLOEXEC,
  F_DUPFD_QUERY,
  F_GETFD,
  F_SETFD,
  F_GETFL,
])

/** FMODE_CAN_ODIRECT: tmpfs's regular files do direct I/O. */
const canODirect = (f: OpenFile): boolean => f.inode instanceof RegularFile

/**
 * flock_to_posix_lock and the checks of the lock calls on a struct flock
 * (short l_type, short l_whence, off_t l_start, off_t l_len, pid_t l_pid):
 * 0 or -errno.
 */
function checkFlock(f: OpenFile, b: Uint8Array, cmd: number): number {
  const v = new DataView(b.buffer, b.byteOffset, 32)
  const type = v.getInt16(0, true)
  const whence = v.getInt16(2, true)
  const start = v.getBigInt64(8, true)
  const len = v.getBigInt64(16, true)
  const pid = v.getInt32(24, true)
  const getlk = cmd === F_GETLK || cmd === F_OFD_GETLK
  if (getlk && type !== F_RDLCK && type !== F_WRLCK) return -EINVAL
  let base: bigint
  if (whence === 0) base = 0n
  else if (whence === 1) base = f.exactPos
  else if (whence === 2) base = BigInt(f.inode.size())
  else return -EINVAL
  if (start > LOFF_MAX - base) return -EOVERFLOW
  const from = base + start
  if (from < 0n) return -EINVAL
  if (len > 0n) {
    if (len - 1n > LOFF_MAX - from) return -EOVERFLOW
  } else if (len < 0n && from + len < 0n) return -EINVAL
  if (type !== F_RDLCK && type !== F_WRLCK && type !== F_UNLCK) return -EINVAL
  if (!getlk) {
    // check_fmode_for_setlk
    if (type === F_RDLCK && !fmodeRead(f)) return -EBADF
    if (type === F_WRLCK && !fmodeWrite(f)) return -EBADF
  }
  if ((cmd === F_OFD_GETLK || cmd === F_OFD_SETLK || cmd === F_OFD_SETLKW) && pid !== 0) return -EINVAL
  return 0
}

/** f_dupfd: from is an unsigned int below RLIMIT_NOFILE (EINVAL), then the lowest free at or above it. */
function dupfd(ctx: SyscallContext, f: OpenFile, from: number, cloexec: boolean): number {
  if (from >>> 0 >= FdTable.MAX) return -EINVAL
  f.refs++
  return ctx.task.files.install(f, cloexec, from >>> 0)
}

function doFcntl(ctx: SyscallContext, fd: number, cmd: number, arg: number): number {
  const { task } = ctx
  const f = task.files.get(fd | 0)
  if (!f) return -EBADF
  cmd >>>= 0
  if ((f.flags & O_PATH) !== 0 && !PATH_CMDS.has(cmd)) return -EBADF
  const argi = arg | 0
  const mm = task.mm
  switch (cmd) {
    case F_DUPFD:
      return dupfd(ctx, f, argi, false)
    case F_DUPFD_CLOEXEC:
      return dupfd(ctx, f, argi, true)
    case F_DUPFD_QUERY: {
      const other = task.files.get(argi)
      return other ? (other === f ? 1 : 0) : -EBADF
    }
    case F_CREATED_QUERY:
      return f.created ? 1 : 0
    case F_GETFD:
      return task.files.fds[fd | 0]?.cloexec ? 1 : 0
    case F_SETFD: {
      const e = task.files.fds[fd | 0]
      if (e) e.cloexec = (argi & 1) !== 0
      return 0
    }
    case F_GETFL:
      return f.flags
    case F_SETFL: {
      const a = argi >>> 0
      if ((a & O_DIRECT) !== 0 && !(f.inode instanceof PipeEnd) && !canODirect(f)) return -EINVAL
      // FASYNC is the file's ->fasync to set; none of these files has one but a socket.
      const keep = f.path === 'socket:' ? SETFL_MASK | FASYNC : SETFL_MASK
      f.flags = ((a & keep) | (f.flags & ~keep)) >>> 0
      return 0
    }
    case F_GETLK:
    case F_OFD_GETLK: {
      const b = copyFromUser(mm, arg, 32)
      const bad = checkFlock(f, b, cmd)
      if (bad) return bad
      // No lock of another owner conflicts: l_type comes back F_UNLCK.
      new DataView(b.buffer, b.byteOffset, 32).setInt16(0, F_UNLCK, true)
      copyToUser(mm, arg, b)
      return 0
    }
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
      return checkFlock(f, copyFromUser(mm, arg, 32), cmd)
    case F_GETOWN: {
      const s = stateOf(f)
      return s.ownerType === 2 ? -s.owner : s.owner
    }
    case F_SETOWN: {
      // f_setown: a negative number is a process group; INT_MIN has no negation.
      if (argi === -0x8000_0000) return -EINVAL
      const who = Math.abs(argi)
      if (who !== 0 && !processExists(ctx, who, argi < 0)) return -ESRCH
      const s = stateOf(f)
      s.owner = who
      s.ownerType = argi < 0 ? 2 : 1
      return 0
    }
    case F_GETOWN_EX: {
      const s = stateOf(f)
      const b = new Uint8Array(8)
      const v = new DataView(b.buffer)
      v.setInt32(0, s.ownerType, true)
      v.setInt32(4, s.owner, true)
      copyToUser(mm, arg, b)
      return 0
    }
    case F_SETOWN_EX: {
      const v = new DataView(copyFromUser(mm, arg, 8).buffer)
      const type = v.getInt32(0, true)
      const pid = v.getInt32(4, true)
      if (type < 0 || type > 2) return -EINVAL
      if (pid !== 0 && !processExists(ctx, pid, type === 2)) return -ESRCH
      const s = stateOf(f)
      s.owner = pid
      s.ownerType = type
      return 0
    }
    case F_GETOWNER_UIDS:
      copyToUser(mm, arg, new Uint8Array(8))
      return 0
    case F_GETSIG:
      return stateOf(f).signal
    case F_SETSIG:
      if (argi < 0 || argi > 64) return -EINVAL
      stateOf(f).signal = argi
      return 0
    case F_GETLEASE:
      return stateOf(f).lease
    case F_SETLEASE:
      return setLease(f, argi)
    case F_NOTIFY:
      if ((argi & ~DN_MULTISHOT) === 0) return 0
      return f.inode instanceof Directory ? 0 : -ENOTDIR
    case F_SETPIPE_SZ:
      return f.inode instanceof PipeEnd ? f.inode.pipe.resize(argi) : -EBADF
    case F_GETPIPE_SZ:
      return f.inode instanceof PipeEnd ? f.inode.pipe.capacity : -EBADF
    case F_GET_SEALS:
      return f.inode instanceof RegularFile ? F_SEAL_SEAL : -EINVAL
    case F_ADD_SEALS:
      if (!fmodeWrite(f)) return -EPERM
      if (((argi >>> 0) & ~F_ALL_SEALS) !== 0) return -EINVAL
      return f.inode instanceof RegularFile ? -EPERM : -EINVAL
    case F_GET_RW_HINT: {
      const b = new Uint8Array(8)
      new DataView(b.buffer).setBigUint64(0, writeHints.get(f.inode) ?? 0n, true)
      copyToUser(mm, arg, b)
      return 0
    }
    case F_SET_RW_HINT: {
      const b = copyFromUser(mm, arg, 8)
      const hint = new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true)
      if (hint > RWH_WRITE_LIFE_EXTREME) return -EINVAL
      writeHints.set(f.inode, hint)
      return 0
    }
    default:
      return -EINVAL
  }
}

/** A process (or, for a group, a process group) with that id exists (find_vpid). */
function processExists(ctx: SyscallContext, id: number, group: boolean): boolean {
  for (const t of ctx.kernel.tasks.values()) if ((group ? t.pgid : t.pid) === id) return true
  return false
}

/**
 * fcntl_setlease: a regular file only; F_UNLCK drops the lease (EAGAIN when
 * there is none); a read lease needs nobody writing, a write lease no other
 * open, and this file is the one open here.
 */
function setLease(f: OpenFile, type: number): number {
  const s = stateOf(f)
  if (type === F_UNLCK) {
    if (!(f.inode instanceof RegularFile)) return -EINVAL
    if (s.lease === F_UNLCK) return -11 // EAGAIN
    s.lease = F_UNLCK
    return 0
  }
  if (type !== F_RDLCK && type !== F_WRLCK) return -EINVAL
  if (!(f.inode instanceof RegularFile)) return -EINVAL
  if (type === F_RDLCK ? fmodeWrite(f) : f.refs > 1) return -11
  s.lease = type
  return 0
}

export function registerFcntl(def: SyscallDef): void {
  def(72, 'fcntl', (ctx, fd, cmd, arg) => doFcntl(ctx, fd, cmd, arg))
}
