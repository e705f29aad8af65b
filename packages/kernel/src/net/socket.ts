// Unix-domain sockets, as far as a program can get without a listener:
// socket(AF_UNIX) makes an unconnected socket, and connect() fails the way
// Linux does when nothing listens at the path (ENOENT if it does not exist,
// ECONNREFUSED otherwise). glibc's NSS probes nscd this way on every
// getpwuid; bash asks getpeername() whether stdin is a socket. bind, listen
// and accept are not implemented, so no socket ever has a peer. Other
// address families are refused with EAFNOSUPPORT.

import { EAFNOSUPPORT, EBADF, ECONNREFUSED, EINVAL, ENOTCONN, ENOTSOCK, EPROTONOSUPPORT } from '../errno.js'
import { O_CLOEXEC, O_NONBLOCK, O_RDWR, OpenFile } from '../fs/files.js'
import { taskRoot } from '../fs/fs-struct.js'
import type { Inode } from '../fs/vfs.js'
import { copyFromUser, copyToUser, readUserU32, writeUserU32 } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { utf8Decode } from '../utf8.js'

const AF_UNIX = 1
const SOCK_STREAM = 1
const SOCK_DGRAM = 2
const SOCK_SEQPACKET = 5
const SOCK_TYPE_MASK = 0xf
const S_IFSOCK = 0o140000

/** An AF_UNIX socket inode (sockfs). */
export class UnixSocket implements Inode {
  readonly mode = S_IFSOCK | 0o777
  readonly seekable = false
  nlink = 1
  mtime = 0
  constructor(readonly type: number) {}
  size(): number {
    return 0
  }
  /** unix_stream_recvmsg on a socket that never connected. */
  read(): number {
    return -EINVAL
  }
  /** unix_stream_sendmsg with no peer. */
  write(): number {
    return -ENOTCONN
  }
}

/** sizeof(struct sockaddr_storage), sizeof(struct sockaddr_un). */
const SOCKADDR_STORAGE_SIZE = 128
const SOCKADDR_UN_SIZE = 110

function socketOf(ctx: SyscallContext, fd: number): UnixSocket | number {
  const f = ctx.task.files.get(fd | 0)
  if (!f) return -EBADF
  return f.inode instanceof UnixSocket ? f.inode : -ENOTSOCK
}

export function sysSocket(ctx: SyscallContext, family: number, typeArg: number, protocol: number): number {
  const type = typeArg & SOCK_TYPE_MASK
  if ((typeArg & ~(SOCK_TYPE_MASK | O_NONBLOCK | O_CLOEXEC)) !== 0) return -EINVAL
  if (family !== AF_UNIX) return -EAFNOSUPPORT
  if (type !== SOCK_STREAM && type !== SOCK_DGRAM && type !== SOCK_SEQPACKET) return -EINVAL
  if (protocol !== 0) return -EPROTONOSUPPORT
  const f = new OpenFile(new UnixSocket(type), O_RDWR | (typeArg & O_NONBLOCK), 'socket:')
  return ctx.task.files.install(f, (typeArg & O_CLOEXEC) !== 0)
}

/**
 * __sys_connect: the descriptor (EBADF), the address copied in
 * (move_addr_to_kernel: a length past sockaddr_storage is EINVAL, then
 * EFAULT), then a socket (ENOTSOCK), then unix_validate_addr.
 */
export function sysConnect(ctx: SyscallContext, fd: number, addr: number, addrlen: number): number {
  const f = ctx.task.files.get(fd | 0)
  if (!f) return -EBADF
  const len = addrlen | 0
  if (len < 0 || len > SOCKADDR_STORAGE_SIZE) return -EINVAL
  const sa = copyFromUser(ctx.task.mm, addr, len)
  if (!(f.inode instanceof UnixSocket)) return -ENOTSOCK
  if (len <= 2 || len > SOCKADDR_UN_SIZE) return -EINVAL
  if ((sa[0] | (sa[1] << 8)) !== AF_UNIX) return -EINVAL
  // The abstract namespace (a leading NUL) has no listener either.
  if (sa[2] === 0) return -ECONNREFUSED
  const end = sa.indexOf(0, 2)
  const path = utf8Decode(sa.subarray(2, end < 0 ? len : end))
  const root = taskRoot(ctx.kernel.vfs, ctx.task)
  const node = ctx.kernel.vfs.lookup(path, ctx.task.cwd, false, root)
  if (typeof node === 'number') return node
  return -ECONNREFUSED
}

export function sysGetpeername(ctx: SyscallContext, fd: number): number {
  const sock = socketOf(ctx, fd)
  return typeof sock === 'number' ? sock : -ENOTCONN
}

/** An unbound AF_UNIX socket's name is just its family. */
export function sysGetsockname(ctx: SyscallContext, fd: number, addr: number, lenp: number): number {
  const sock = socketOf(ctx, fd)
  if (typeof sock === 'number') return sock
  const len = readUserU32(ctx.task.mm, lenp) | 0
  if (len < 0) return -EINVAL
  copyToUser(ctx.task.mm, addr, Uint8Array.of(AF_UNIX, 0).subarray(0, len))
  writeUserU32(ctx.task.mm, lenp, 2)
  return 0
}

export function registerNetSyscalls(def: SyscallDef): void {
  def(41, 'socket', sysSocket)
  def(42, 'connect', sysConnect)
  def(51, 'getsockname', sysGetsockname)
  def(52, 'getpeername', sysGetpeername)
}
