// The host's system calls for clocks, file times, randomness and sleeping (kernel/time/),
// registered into the kernel's syscall table by syscalls.ts.

import { EINVAL, ERESTARTNOHAND } from '../errno.js'
import { fileOf } from '../fs/files.js'
import { lookupAt, pathArg } from '../fs/namei.js'
import type { Inode } from '../fs/vfs.js'
import { copyToUser, readUserU64, writeUserU64 } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef, SyscallResult } from '../syscalls.js'
import { CLOCK_EPOCH_SECONDS, nowNs } from './clock.js'

const UTIME_NOW = (1 << 30) - 1
const UTIME_OMIT = (1 << 30) - 2
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

export function registerTimeSyscalls(def: SyscallDef): void {
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

  def(35, 'nanosleep', (ctx, req) => sleepUntil(ctx, 35, timespecNs(ctx, req)))
  def(230, 'clock_nanosleep', (ctx, _clock, flags, req) => {
    const ns = timespecNs(ctx, req)
    return sleepUntil(ctx, 230, (flags & 1) !== 0 ? Math.max(0, ns - ctx.kernel.machine.cycles(0)) : ns)
  })
}
