// Futexes (kernel/futex/): tasks waiting on a user word, keyed by address
// space and address, woken in the order they came.

import type { Mm } from '../mm/mm.js'
import { readUserU32 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallResult } from '../syscalls.js'

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

/** FUTEX_WAIT / FUTEX_WAKE (private or shared: one address space per key here). */
export function futex(
  ctx: SyscallContext,
  uaddr: number,
  op: number,
  val: number,
  val2 = 0,
  uaddr2 = 0,
  val3 = 0,
): SyscallResult {
  const { task } = ctx
  const futexes = ctx.kernel.futex
  const cmd = op & 0x7f
  if (cmd === 0 || cmd === 9) {
    // FUTEX_WAIT(_BITSET)
    if (task.restart?.nr === 202 && task.restart.woken) {
      task.restart = null
      return 0
    }
    if (readUserU32(task.mm, uaddr) !== val) return -11 // EAGAIN
    task.restart = { nr: 202, woken: false }
    futexes.waiters.push({ task, mm: task.mm, uaddr })
    const me = task
    return {
      wouldBlock: true,
      ready: () => me.restart?.woken === true,
      // A signal ends the wait: this waiter must not take a later wake-up.
      cancel: () => {
        const i = futexes.waiters.findIndex((w) => w.task === me)
        if (i >= 0) futexes.waiters.splice(i, 1)
      },
    }
  }
  if (cmd === 1 || cmd === 10) return futexes.wake(task.mm, uaddr, val)
  if (cmd === 3 || cmd === 4) {
    // FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake val waiters, move up to val2 (the timeout slot) to uaddr2.
    if (cmd === 4 && readUserU32(task.mm, uaddr) !== val3) return -11
    const woken = futexes.wake(task.mm, uaddr, val)
    let moved = 0
    for (const w of futexes.waiters) {
      if (moved >= val2) break
      if (w.mm === task.mm && w.uaddr === uaddr) {
        w.uaddr = uaddr2
        moved++
      }
    }
    return woken + moved
  }
  return -38 // ENOSYS: the PI variants are not implemented
}
