// fs/read_write.c's positioned and vectored calls (pread64, pwrite64,
// readv, writev, sendfile) with vfs_read / vfs_write's checks in Linux's
// order: the descriptor, the file's mode (FMODE_READ, FMODE_WRITE,
// FMODE_PREAD), access_ok on the buffer, rw_verify_area on the range; then
// the transfer, which stops short at the first page it cannot copy. And
// generic_write_check_limits: RLIMIT_FSIZE (SIGXFSZ and EFBIG) for every
// write to a regular file. read(2) and write(2) are the guest's.

import type { Cpu } from '@probekit/x86-emu'
import { EBADF, EFAULT, EFBIG, EINVAL, EISDIR, ESPIPE } from '../errno.js'
import { accessOk, copyFromUserPartial, copyToUser } from '../mm/user-memory.js'
import { RLIM_INFINITY, RLIMIT_FSIZE } from '../process/rlimits.js'
import type { Task } from '../sched/task.js'
import { SIGXFSZ } from '../signal/signals.js'
import type { SyscallContext, SyscallDef, SyscallResult } from '../syscalls.js'
import { modified } from '../time/clock.js'
import { fileOf, O_ACCMODE, O_APPEND, O_PATH, O_RDONLY, O_WRONLY, type OpenFile } from './files.js'
import { importIovec, iovCount, MAX_RW_COUNT } from './iov-iter.js'
import { loffArg, readUserLoff, rwVerifyArea } from './loff.js'
import { Directory, RegularFile } from './vfs.js'

/** loff_t's largest value: s_maxbytes of tmpfs (MAX_LFS_FILESIZE). */
const MAX_LFS_FILESIZE = 2 ** 63

/** FMODE_READ / FMODE_WRITE: what the open's access mode gave (an O_PATH file has neither). */
export const fmodeRead = (f: OpenFile): boolean =>
  (f.flags & O_PATH) === 0 && (f.flags & O_ACCMODE) !== O_WRONLY && (f.flags & O_ACCMODE) !== 3
export const fmodeWrite = (f: OpenFile): boolean =>
  (f.flags & O_PATH) === 0 && (f.flags & O_ACCMODE) !== O_RDONLY && (f.flags & O_ACCMODE) !== 3
/** FMODE_PREAD: every file but a stream (pipes, sockets, terminals: nonseekable_open). */
const fmodePread = (f: OpenFile): boolean => f.inode.seekable

/** RLIMIT_FSIZE's soft limit, or Infinity. */
function fsizeLimit(task: Task): number {
  const cur = task.rlimits[RLIMIT_FSIZE].cur
  return cur === RLIM_INFINITY ? Number.POSITIVE_INFINITY : Number(cur)
}

/**
 * generic_write_check_limits: how much of count may be written at pos. At or
 * past RLIMIT_FSIZE the writer gets SIGXFSZ and EFBIG; a write that would
 * cross it is cut to it.
 */
export function writeCheckLimits(
  k: SyscallContext['kernel'],
  c: Cpu,
  task: Task,
  pos: number,
  count: number,
): number {
  const limit = fsizeLimit(task)
  if (pos >= limit) {
    k.signals.sendSignal(c, task, { signo: SIGXFSZ, code: 0, pid: task.tgid })
    return -EFBIG
  }
  if (pos >= MAX_LFS_FILESIZE) return -EFBIG
  return Math.min(count, limit - pos, MAX_LFS_FILESIZE - pos)
}

/**
 * inode_newsize_ok: a size past RLIMIT_FSIZE is SIGXFSZ and EFBIG, past
 * s_maxbytes EFBIG (truncate, ftruncate, fallocate).
 */
export function newsizeOk(ctx: SyscallContext, size: number): number {
  if (size > fsizeLimit(ctx.task)) {
    ctx.kernel.signals.sendSignal(ctx.cpu, ctx.task, { signo: SIGXFSZ, code: 0, pid: ctx.task.tgid })
    return -EFBIG
  }
  return size >= MAX_LFS_FILESIZE ? -EFBIG : 0
}

/** Copy to user memory up to the first page that cannot take it: the bytes copied. */
function copyToUserPartial(ctx: SyscallContext, addr: number, data: Uint8Array): number {
  for (let k = 0; k < data.length; ) {
    const n = Math.min(4096 - ((addr + k) % 4096), data.length - k)
    try {
      copyToUser(ctx.task.mm, addr + k, data.subarray(k, k + n))
    } catch {
      return k
    }
    k += n
  }
  return data.length
}

/** A regular file's read at pos into user memory: the bytes copied, or EFAULT when none could be. */
function readRegular(
  ctx: SyscallContext,
  inode: RegularFile,
  buf: number,
  count: number,
  pos: number,
): number {
  const data = inode.readAt(pos, count)
  const n = copyToUserPartial(ctx, buf, data)
  return n === 0 && data.length > 0 ? -EFAULT : n
}

/** A regular file's write at pos from user memory, within RLIMIT_FSIZE. */
function writeRegular(ctx: SyscallContext, f: OpenFile, buf: number, count: number, pos: number): number {
  if (count === 0) return 0
  const room = writeCheckLimits(ctx.kernel, ctx.cpu, ctx.task, pos, count)
  if (room < 0) return room
  const data = copyFromUserPartial(ctx.task.mm, buf, room)
  if (data.length === 0) return -EFAULT
  const n = (f.inode as RegularFile).writeAt(pos, data)
  if (n > 0) modified(ctx, f.inode)
  return n
}

/** ksys_pread64 → vfs_read (pos and count exactly: the range check is at 2^63). */
function pread64(ctx: SyscallContext, fd: number, buf: number, count: number): number {
  const pos = loffArg(ctx, 'r10')
  if (pos < 0n) return -EINVAL
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!fmodePread(f)) return -ESPIPE
  if (!fmodeRead(f)) return -EBADF
  if (!accessOk(buf, count)) return -EFAULT
  const bad = rwVerifyArea(pos, loffArg(ctx, 'dx'))
  if (bad) return bad
  count = Math.min(count, MAX_RW_COUNT)
  if (f.inode instanceof Directory) return -EISDIR
  if (!(f.inode instanceof RegularFile)) return -ESPIPE
  return readRegular(ctx, f.inode, buf, count, Number(pos))
}

/** ksys_pwrite64 → vfs_write (pos and count exactly). */
function pwrite64(ctx: SyscallContext, fd: number, buf: number, count: number): number {
  const pos = loffArg(ctx, 'r10')
  if (pos < 0n) return -EINVAL
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!fmodePread(f)) return -ESPIPE
  if (!fmodeWrite(f)) return -EBADF
  if (!accessOk(buf, count)) return -EFAULT
  const bad = rwVerifyArea(pos, loffArg(ctx, 'dx'))
  if (bad) return bad
  count = Math.min(count, MAX_RW_COUNT)
  if (!(f.inode instanceof RegularFile)) return -ESPIPE
  return writeRegular(ctx, f, buf, count, Number(pos))
}

/** do_readv → vfs_readv: the mode, the iovec, then each segment in turn until one comes short. */
function readv(ctx: SyscallContext, fd: number, uvec: number, nr: number): SyscallResult {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!fmodeRead(f)) return -EBADF
  const segs = importIovec(ctx, uvec, nr)
  if (typeof segs === 'number') return segs
  if (iovCount(segs) === 0) return 0
  if (f.inode instanceof Directory) return -EISDIR
  let total = 0
  for (const v of segs) {
    if (v.len === 0) continue
    let r: SyscallResult
    if (f.inode instanceof RegularFile) {
      r = readRegular(ctx, f.inode, v.base, v.len, f.pos)
      if (r > 0) f.pos += r
    } else {
      const data = f.read(v.len)
      if (!(data instanceof Uint8Array)) r = data
      else {
        copyToUser(ctx.task.mm, v.base, data)
        r = data.length
      }
    }
    if (typeof r !== 'number' || r < 0) return total > 0 ? total : r
    total += r
    if (r < v.len) break
  }
  return total
}

/** do_writev → vfs_writev: the segments' bytes up to the first that cannot be copied, as one write. */
function writev(ctx: SyscallContext, fd: number, uvec: number, nr: number): SyscallResult {
  const f = fileOf(ctx.task, fd)
  if (typeof f === 'number') return f
  if (!fmodeWrite(f)) return -EBADF
  const segs = importIovec(ctx, uvec, nr)
  if (typeof segs === 'number') return segs
  const want = iovCount(segs)
  if (want === 0) return 0
  const parts: Uint8Array[] = []
  for (const v of segs) {
    const p = copyFromUserPartial(ctx.task.mm, v.base, v.len)
    parts.push(p)
    if (p.length < v.len) break
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    all.set(p, o)
    o += p.length
  }
  if (all.length === 0) return -EFAULT
  return ctx.kernel.fileIo.fileWrite(ctx.cpu, ctx.task, f, all)
}

/**
 * do_sendfile: in_fd first (readable; with an offset, FMODE_PREAD; the range),
 * then out_fd (writable, not O_APPEND), then the input must be a regular
 * file (splice_direct_to_actor). With an offset pointer the copy starts
 * there and the pointer is written back whatever the outcome (EFAULT on a
 * read-only one); without, in_fd's position moves. Only what out_fd took counts.
 */
function sendfile(
  ctx: SyscallContext,
  outFd: number,
  inFd: number,
  offsetPtr: number,
  count: number,
): SyscallResult {
  const pos = offsetPtr ? readUserLoff(ctx, offsetPtr) : null
  const r = doSendfile(ctx, outFd, inFd, pos, count)
  if (typeof r !== 'number') return r
  if (pos !== null) {
    const b = new Uint8Array(8)
    new DataView(b.buffer).setBigInt64(0, r > 0 ? pos + BigInt(r) : pos, true)
    copyToUser(ctx.task.mm, offsetPtr, b)
  }
  return r
}

function doSendfile(
  ctx: SyscallContext,
  outFd: number,
  inFd: number,
  ppos: bigint | null,
  count: number,
): SyscallResult {
  const inp = fileOf(ctx.task, inFd)
  if (typeof inp === 'number') return inp
  if (!fmodeRead(inp)) return -EBADF
  if (ppos !== null && !fmodePread(inp)) return -ESPIPE
  const bad = rwVerifyArea(ppos ?? BigInt(inp.pos), loffArg(ctx, 'r10'))
  if (bad) return bad
  const start = ppos === null ? inp.pos : Number(ppos)
  count = Math.min(count, MAX_RW_COUNT)
  const out = fileOf(ctx.task, outFd)
  if (typeof out === 'number') return out
  if (!fmodeWrite(out)) return -EBADF
  if ((out.flags & O_APPEND) !== 0) return -EINVAL
  // The input is spliced from: a directory has no splice_read, a stream none that sendfile may use.
  if (inp.inode instanceof Directory || !inp.inode.seekable) return -EINVAL
  if (count === 0) return 0
  const saved = inp.pos
  inp.pos = start
  const data = inp.read(count)
  inp.pos = saved
  if (!(data instanceof Uint8Array)) return data
  if (data.length === 0) return 0
  const n = ctx.kernel.fileIo.fileWrite(ctx.cpu, ctx.task, out, data)
  if (typeof n !== 'number' || n < 0) return n
  if (ppos === null) inp.pos = start + n
  return n
}

export function registerReadWrite(def: SyscallDef): void {
  def(17, 'pread64', pread64)
  def(18, 'pwrite64', pwrite64)
  def(19, 'readv', readv)
  def(20, 'writev', writev)
  def(40, 'sendfile', sendfile)
}
