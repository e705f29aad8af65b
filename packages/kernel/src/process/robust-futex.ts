// Robust futexes (kernel/futex/core.c): a thread registers the head of its
// list of held robust mutexes (set_robust_list); when it exits or execs, the
// kernel walks the list and marks every futex word still owned by the thread
// FUTEX_OWNER_DIED, waking one waiter, so the next locker gets EOWNERDEAD
// instead of waiting forever.

import { EINVAL, ESRCH } from '../errno.js'
import type { Kernel } from '../kernel.js'
import { BadAddress, readUserU32, readUserU64, writeUserU32, writeUserU64 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext } from '../syscalls.js'

/** sizeof(struct robust_list_head): { list.next, futex_offset, list_op_pending }. */
const ROBUST_LIST_HEAD_SIZE = 24
const ROBUST_LIST_LIMIT = 2048
const FUTEX_WAITERS = 0x80000000
const FUTEX_OWNER_DIED = 0x40000000
const FUTEX_TID_MASK = 0x3fffffff

/** set_robust_list(head, len). */
export function sysSetRobustList({ task }: SyscallContext, head: number, len: number): number {
  if (len !== ROBUST_LIST_HEAD_SIZE) return -EINVAL
  task.robustList = head
  return 0
}

/** get_robust_list(pid, head_ptr, len_ptr). */
export function sysGetRobustList(ctx: SyscallContext, pid: number, headPtr: number, lenPtr: number): number {
  pid |= 0 // pid_t
  const t = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!t || t.state === 'zombie') return -ESRCH
  writeUserU64(ctx.task.mm, lenPtr, ROBUST_LIST_HEAD_SIZE)
  writeUserU64(ctx.task.mm, headPtr, t.robustList)
  return 0
}

/** handle_futex_death: the word at uaddr, if the dying thread owns it, becomes OWNER_DIED (waking a waiter). */
function handleFutexDeath(kernel: Kernel, task: Task, uaddr: number, pi: boolean, pending: boolean): void {
  const uval = readUserU32(task.mm, uaddr) >>> 0
  // A pending, not yet taken lock (uval 0): the dying thread may have been woken to take it; pass the wake on.
  if (pending && !pi && uval === 0) {
    kernel.futex.wake(task.mm, uaddr, 1)
    return
  }
  if ((uval & FUTEX_TID_MASK) !== task.pid) return
  writeUserU32(task.mm, uaddr, (uval & FUTEX_WAITERS) | FUTEX_OWNER_DIED)
  if (!pi && (uval & FUTEX_WAITERS) !== 0) kernel.futex.wake(task.mm, uaddr, 1)
}

/** exit_robust_list: at exit or exec, release every robust futex the thread still holds. */
export function exitRobustList(kernel: Kernel, task: Task): void {
  const head = task.robustList
  task.robustList = 0
  if (head === 0) return
  try {
    const fetch = (addr: number) => {
      const v = readUserU64(task.mm, addr)
      return { entry: v - (v & 1), pi: (v & 1) !== 0 }
    }
    let { entry, pi } = fetch(head)
    const futexOffset = readUserU64(task.mm, head + 8)
    const pending = fetch(head + 16)
    for (let limit = ROBUST_LIST_LIMIT; entry !== head && limit > 0; limit--) {
      const next = fetch(entry)
      if (entry !== pending.entry) handleFutexDeath(kernel, task, entry + futexOffset, pi, false)
      entry = next.entry
      pi = next.pi
    }
    if (pending.entry !== 0) handleFutexDeath(kernel, task, pending.entry + futexOffset, pending.pi, true)
  } catch (e) {
    // A list in memory the thread cannot read any more ends the walk, as in Linux.
    if (!(e instanceof BadAddress)) throw e
  }
}
