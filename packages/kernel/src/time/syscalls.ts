// The host's system calls for clocks, file times, randomness and sleeping (kernel/time/),
// registered into the kernel's syscall table by syscalls.ts.

import { EFAULT, EINVAL, ERESTARTNOHAND } from '../errno.js'
import { fileOf } from '../fs/files.js'
import { AT_FDCWD, emptyPathAt, lookupAt, pathArg } from '../fs/namei.js'
import type { Inode } from '../fs/vfs.js'
import { copyToUser, readUserU64, writeUserU64 } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef, SyscallResult } from '../syscalls.js'
import { CLOCK_EPOCH_SECONDS, nowNs } from './clock.js'

const UTIME_NOW = (1 << 30) - 1
const UTIME_OMIT = (1 << 30) - 2
const AT_SYMLINK_NOFOLLOW = 0x100
const AT_EMPTY_PATH = 0x1000
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
/** A struct timespec in nanoseconds, or -1 when timespec64_valid refuses it (EINVAL). */
function timespecNs(ctx: SyscallContext, ts: number): number {
  const sec = readUserU64(ctx.task.mm, ts)
  const nsec = readUserU64(ctx.task.mm, ts + 8)
  return sec < 0 || nsec < 0 || nsec >= 1e9 ? -1 : sec * 1e9 + nsec
}

/** clockid_to_kclock's clocks (a negative id is a pid's or a thread's CPU clock: none here), and those with nsleep. */
const CLOCKS = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11])
const NSLEEP_CLOCKS = new Set([0, 1, 2, 7, 8, 9, 11])
const CLOCK_REALTIME_ALARM = 8
const CLOCK_BOOTTIME_ALARM = 9
const EOPNOTSUPP = 95
const GRND_NONBLOCK = 1
const GRND_RANDOM = 2
const GRND_INSECURE = 4

export function registerTimeSyscalls(def: SyscallDef): void {
  def(228, 'clock_gettime', (ctx, clock, tp) => {
    if (!CLOCKS.has(clock | 0)) return -EINVAL
    // The alarm clocks read the RTC, and there is none (alarm_clock_get_timespec).
    if ((clock | 0) === CLOCK_REALTIME_ALARM || (clock | 0) === CLOCK_BOOTTIME_ALARM) return -EINVAL
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
   * times NULL or UTIME_NOW is the virtual clock's now. As Linux: both
   * timespecs are copied in first (EFAULT), both UTIME_OMIT is done; then
   * futimens takes no flags (EINVAL) and a descriptor (EBADF), the path form
   * AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH only (EINVAL) and a name; then an
   * nsec out of range is EINVAL, a read-only mount EROFS.
   */
  def(280, 'utimensat', (ctx, dirfd, path, times, flags) => {
    const mm = ctx.task.mm
    let ts: { sec: number; nsec: number }[] | null = null
    if (times) {
      ts = [0, 16].map((o) => ({ sec: readUserU64(mm, times + o), nsec: readUserU64(mm, times + o + 8) }))
      if (ts[0].nsec === UTIME_OMIT && ts[1].nsec === UTIME_OMIT) return 0
    }
    flags |= 0
    let node: Inode | number
    if (path === 0 && (dirfd | 0) !== AT_FDCWD) {
      if (flags !== 0) return -EINVAL
      const f = fileOf(ctx.task, dirfd)
      node = typeof f === 'number' ? f : f.inode
    } else {
      if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) !== 0) return -EINVAL
      const p = path === 0 ? -EFAULT : pathArg(ctx, path, (flags & AT_EMPTY_PATH) !== 0)
      if (typeof p === 'number') return p
      node = p === '' ? emptyPathAt(ctx, dirfd) : lookupAt(ctx, dirfd, p, (flags & AT_SYMLINK_NOFOLLOW) !== 0)
    }
    if (typeof node === 'number') return node
    const nsecValid = (n: number) => n === UTIME_OMIT || n === UTIME_NOW || (n >= 0 && n <= 999_999_999)
    if (ts && !(nsecValid(ts[0].nsec) && nsecValid(ts[1].nsec))) return -EINVAL
    if (node.readOnly) return -30 // EROFS
    const mtime = ts?.[1]
    if (mtime?.nsec === UTIME_OMIT) return 0
    node.mtime =
      mtime && mtime.nsec !== UTIME_NOW ? mtime.sec : CLOCK_EPOCH_SECONDS + Math.floor(nowNs(ctx) / 1e9)
    return 0
  })

  /** time(tloc): glibc calls it when there is no vDSO (there is none here). */
  def(201, 'time', (ctx, tloc) => {
    const sec = CLOCK_EPOCH_SECONDS + Math.floor(nowNs(ctx) / 1e9)
    if (tloc) writeUserU64(ctx.task.mm, tloc, sec)
    return sec
  })
  // gettimeofday(tv, tz): each pointer, when given, is written (tz: sys_tz, UTC, all zeros).
  def(96, 'gettimeofday', (ctx, tv, tz) => {
    if (tv) {
      const ns = nowNs(ctx)
      const b = new Uint8Array(16)
      const v = new DataView(b.buffer)
      v.setBigInt64(0, BigInt(CLOCK_EPOCH_SECONDS + Math.floor(ns / 1e9)), true)
      v.setBigInt64(8, BigInt(Math.floor((ns % 1e9) / 1000)), true)
      copyToUser(ctx.task.mm, tv, b)
    }
    if (tz) copyToUser(ctx.task.mm, tz, new Uint8Array(8))
    return 0
  })

  /** getrandom with a fixed seed per kernel: runs are reproducible. */
  def(318, 'getrandom', ({ kernel, task }, buf, len, flags) => {
    if ((flags & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) !== 0) return -EINVAL
    if ((flags & (GRND_RANDOM | GRND_INSECURE)) === (GRND_RANDOM | GRND_INSECURE)) return -EINVAL
    // As get_random_bytes_user: at most INT_MAX bytes, a page at a time, the count copied until a fault.
    const total = Math.min(len < 0 ? 0x7fffffff : len, 0x7fffffff)
    let done = 0
    while (done < total) {
      const n = Math.min(4096 - ((buf + done) % 4096), total - done)
      try {
        copyToUser(task.mm, buf + done, kernel.randomBytes(n))
      } catch (e) {
        if (done === 0) throw e
        break
      }
      done += n
    }
    return done
  })

  def(35, 'nanosleep', (ctx, req) => {
    const ns = timespecNs(ctx, req)
    return ns < 0 ? -EINVAL : sleepUntil(ctx, 35, ns)
  })
  def(230, 'clock_nanosleep', (ctx, clock, flags, req) => {
    if (!CLOCKS.has(clock | 0)) return -EINVAL
    if (!NSLEEP_CLOCKS.has(clock | 0)) return -EOPNOTSUPP
    const ns = timespecNs(ctx, req)
    if (ns < 0) return -EINVAL
    return sleepUntil(ctx, 230, (flags & 1) !== 0 ? Math.max(0, ns - ctx.kernel.machine.cycles(0)) : ns)
  })
}
