// Futexes (kernel/futex/): tasks waiting on a user word, keyed by address
// space and address, woken in the order they came.

import { EAGAIN, EFAULT, EINVAL, ENOSYS, ETIMEDOUT } from '../errno.js'
import type { Mm } from '../mm/mm.js'
import { accessOk, readUserU32, readUserU64 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallResult } from '../syscalls.js'
import { CLOCK_EPOCH_SECONDS } from '../time/clock.js'

export interface FutexWaiter {
  task: Task
  mm: Mm
  uaddr: number
}

/** The futex hash: every waiter, in the order it came. */
export class Futexes {
  readonly waiters: FutexWaiter[] = []

  /** futex_wake: wake up to n waiters on (mm, uaddr); how many woke. */
  wake(mm: Mm, uaddr: number, n: number): number {
    let woken = 0
    for (let i = 0; i < this.waiters.length && woken < n; ) {
      const w = this.waiters[i]
      if (w.mm === mm && w.uaddr === uaddr) {
        this.waiters.splice(i, 1)
        if (w.task.restart?.nr === 202) w.task.restart.woken = true
        woken++
      } else i++
    }
    return woken
  }

  /** A task that exits waits no more. */
  forget(task: Task): void {
    for (let i = this.waiters.length - 1; i >= 0; i--)
      if (this.waiters[i].task === task) this.waiters.splice(i, 1)
  }
}

const FUTEX_WAIT = 0
const FUTEX_WAKE = 1
const FUTEX_REQUEUE = 3
const FUTEX_CMP_REQUEUE = 4
const FUTEX_LOCK_PI = 6
const FUTEX_WAIT_BITSET = 9
const FUTEX_WAKE_BITSET = 10
const FUTEX_WAIT_REQUEUE_PI = 11
const FUTEX_LOCK_PI2 = 13
const FUTEX_PRIVATE_FLAG = 128
const FUTEX_CLOCK_REALTIME = 256
/** The calls whose fourth argument is a timeout (futex_cmd_has_timeout). */
const HAS_TIMEOUT = new Set([
  FUTEX_WAIT,
  FUTEX_LOCK_PI,
  FUTEX_LOCK_PI2,
  FUTEX_WAIT_BITSET,
  FUTEX_WAIT_REQUEUE_PI,
])

/**
 * The futex system call (kernel/futex/syscalls.c): a timeout is copied in
 * (EFAULT) and checked (EINVAL) first, FUTEX_WAIT's relative, the others'
 * absolute (CLOCK_MONOTONIC, or CLOCK_REALTIME with FUTEX_CLOCK_REALTIME,
 * which only the bitset wait may take: ENOSYS); then do_futex: FUTEX_WAIT,
 * FUTEX_WAKE (and their bitset forms: an empty bitset is EINVAL), the two
 * requeues; an address not 4-aligned is EINVAL, a shared futex's word that
 * is not mapped EFAULT. The PI calls and FUTEX_WAKE_OP are ENOSYS here.
 */
export function futex(
  ctx: SyscallContext,
  uaddr: number,
  opArg: number,
  val: number,
  utime = 0,
  uaddr2 = 0,
  val3 = 0,
): SyscallResult {
  const { kernel, task } = ctx
  const futexes = kernel.futex
  const op = opArg | 0
  const cmd = op & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
  val >>>= 0
  let deadline: number | undefined
  if (utime && HAS_TIMEOUT.has(cmd) && task.restart?.nr !== 202) {
    const ns = timespecNs(ctx, utime)
    if (ns < 0) return -EINVAL
    const now = kernel.machine.cycles(0)
    if (cmd === FUTEX_WAIT) deadline = now + ns
    else deadline = (op & FUTEX_CLOCK_REALTIME) !== 0 ? ns - CLOCK_EPOCH_SECONDS * 1e9 : ns
  }
  if (
    (op & FUTEX_CLOCK_REALTIME) !== 0 &&
    cmd !== FUTEX_WAIT_BITSET &&
    cmd !== FUTEX_WAIT_REQUEUE_PI &&
    cmd !== FUTEX_LOCK_PI2
  )
    return -ENOSYS
  // get_futex_key: a u32-aligned address; a shared futex's word must be mapped, a private one's in user space.
  const key = (): number => {
    if (uaddr % 4 !== 0) return -EINVAL
    if ((op & FUTEX_PRIVATE_FLAG) !== 0) return accessOk(uaddr, 4) ? 0 : -EFAULT
    readUserU32(task.mm, uaddr)
    return 0
  }
  if (cmd === FUTEX_WAIT || cmd === FUTEX_WAIT_BITSET) {
    const restarted = task.restart?.nr === 202 ? task.restart : null
    if (restarted) {
      task.restart = null
      if (restarted.woken) return 0
      const i = futexes.waiters.findIndex((w) => w.task === task)
      if (i >= 0) futexes.waiters.splice(i, 1)
      // Woken by the clock, not by a FUTEX_WAKE; else a restart after a signal waits again, to the same deadline.
      deadline = restarted.deadline
      if (deadline !== undefined && kernel.machine.cycles(0) >= deadline) return -ETIMEDOUT
    }
    if (cmd === FUTEX_WAIT_BITSET && val3 === 0) return -EINVAL
    const bad = key()
    if (bad) return bad
    if (readUserU32(task.mm, uaddr) >>> 0 !== val) return -EAGAIN
    if (deadline !== undefined && kernel.machine.cycles(0) >= deadline) return -ETIMEDOUT
    task.restart = { nr: 202, woken: false, deadline }
    futexes.waiters.push({ task, mm: task.mm, uaddr })
    const me = task
    return {
      wouldBlock: true,
      ready: () =>
        me.restart?.woken === true || (deadline !== undefined && kernel.machine.cycles(0) >= deadline),
      // A signal ends the wait: this waiter must not take a later wake-up.
      cancel: () => {
        const i = futexes.waiters.findIndex((w) => w.task === me)
        if (i >= 0) futexes.waiters.splice(i, 1)
      },
    }
  }
  if (cmd === FUTEX_WAKE || cmd === FUTEX_WAKE_BITSET) {
    if (cmd === FUTEX_WAKE_BITSET && val3 === 0) return -EINVAL
    const bad = key()
    return bad || futexes.wake(task.mm, uaddr, val)
  }
  if (cmd === FUTEX_REQUEUE || cmd === FUTEX_CMP_REQUEUE) {
    // FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake val waiters, move up to val2 (the timeout slot) to uaddr2.
    const bad = key()
    if (bad) return bad
    if (cmd === FUTEX_CMP_REQUEUE && readUserU32(task.mm, uaddr) !== (val3 | 0)) return -EAGAIN
    const woken = futexes.wake(task.mm, uaddr, val)
    let moved = 0
    for (const w of futexes.waiters) {
      if (moved >= utime) break
      if (w.mm === task.mm && w.uaddr === uaddr) {
        w.uaddr = uaddr2
        moved++
      }
    }
    return woken + moved
  }
  return -ENOSYS // the PI calls and FUTEX_WAKE_OP are not implemented
}

/** A struct timespec in nanoseconds, or -1 when timespec64_valid refuses it. */
function timespecNs(ctx: SyscallContext, ts: number): number {
  const sec = readUserU64(ctx.task.mm, ts)
  const nsec = readUserU64(ctx.task.mm, ts + 8)
  return sec < 0 || nsec < 0 || nsec >= 1e9 ? -1 : sec * 1e9 + nsec
}
