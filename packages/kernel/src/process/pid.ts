// Process ids and the limit on tasks (kernel/pid.c's alloc_pid, kernel/fork.c's
// max_threads): pids are handed out in turn up to pid_max, then from
// RESERVED_PIDS again, skipping those still in use (a task, live or zombie,
// or a process group or session that still has members); fork fails with
// EAGAIN when none is free or when there are threads-max tasks already.
// Both are sysctls (kernel.pid_max, kernel.threads-max). RLIMIT_NPROC does
// not stop a fork here: every task runs as root, which Linux exempts.

import { THREAD_SIZE } from '../abi.js'
import { EAGAIN, EINVAL } from '../errno.js'
import type { Task } from '../sched/task.js'
import type { Sysctls } from '../sysctl.js'

/** PID_MAX_DEFAULT: the default pid_max (0x8000), as on a machine with up to 32 CPUs. */
export const PID_MAX_DEFAULT = 0x8000
/** PID_MAX_LIMIT: the largest pid_max on 64-bit (4M). */
export const PID_MAX_LIMIT = 4 * 1024 * 1024
/** Pids below this are not reused after the first wrap-around (they belong to daemons). */
export const RESERVED_PIDS = 300
const MIN_THREADS = 20
const FUTEX_TID_MASK = 0x3fffffff

/** set_max_threads: as many tasks as fit with their kernel stacks in an eighth of memory. */
export function maxThreadsFor(memoryBytes: number): number {
  return Math.min(FUTEX_TID_MASK, Math.max(MIN_THREADS, Math.floor(memoryBytes / (THREAD_SIZE * 8))))
}

export class Pids {
  /** kernel.pid_max: pids are below it. */
  pidMax = PID_MAX_DEFAULT
  /** kernel.threads-max: fork fails with EAGAIN at this many tasks (zombies count until reaped). */
  maxThreads: number
  /** Where the next search starts (the idr's cursor: one past the last pid given). */
  private cursor = 1

  constructor(memoryBytes: number) {
    this.maxThreads = maxThreadsFor(memoryBytes)
  }

  /** alloc_pid: the next free pid, or -EAGAIN. tasks: every task that has not been reaped, by pid. */
  alloc(tasks: ReadonlyMap<number, Task>): number {
    // A pid that still names a process group or session stays taken (its struct pid lives on).
    const groups = new Set<number>()
    for (const t of tasks.values()) {
      groups.add(t.pgid)
      groups.add(t.sid)
    }
    // idr_alloc_cyclic: from the cursor up to pid_max, then from the bottom (RESERVED_PIDS once past it).
    const min = this.cursor > RESERVED_PIDS ? RESERVED_PIDS : 1
    let pid = Math.max(this.cursor, min)
    for (let tries = 0; tries < this.pidMax; tries++, pid++) {
      if (pid >= this.pidMax) pid = min
      if (!tasks.has(pid) && !groups.has(pid)) {
        this.cursor = pid + 1
        return pid
      }
    }
    return -EAGAIN
  }

  /** copy_process's nr_threads >= max_threads check. */
  tooMany(tasks: ReadonlyMap<number, Task>): boolean {
    return tasks.size >= this.maxThreads
  }

  /** kernel.pid_max and kernel.threads-max (proc_dointvec_minmax: a number within bounds, else EINVAL). */
  registerSysctls(sysctls: Sysctls): void {
    const intSetting = (get: () => number, set: (v: number) => void, lo: number, hi: number) => ({
      read: () => `${get()}\n`,
      write: (value: string) => {
        const v = value.trim()
        if (!/^-?\d+$/.test(v) || Number(v) < lo || Number(v) > hi) return -EINVAL
        set(Number(v))
        return 0
      },
    })
    sysctls.register(
      'kernel.pid_max',
      intSetting(
        () => this.pidMax,
        (v) => {
          this.pidMax = v
        },
        RESERVED_PIDS + 1,
        PID_MAX_LIMIT,
      ),
    )
    sysctls.register(
      'kernel.threads-max',
      intSetting(
        () => this.maxThreads,
        (v) => {
          this.maxThreads = v
        },
        MIN_THREADS,
        FUTEX_TID_MASK,
      ),
    )
  }
}
