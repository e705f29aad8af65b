// CPU time accounting as the process sees it: times() and getrusage().
// A task's time is virtual-clock time (guest cycles at a nominal 1 GHz)
// while it is on a CPU; it is all counted as user time (the host side of a
// syscall costs no guest cycles). Children's time is added when they are
// waited for, as Linux does in wait_task_zombie.

import { EINVAL } from '../errno.js'
import type { Kernel } from '../kernel.js'
import { copyToUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import type { Task } from './task.js'

/** USER_HZ: the unit of clock_t. */
const USER_HZ = 100
const NS_PER_TICK = 1e9 / USER_HZ

const RUSAGE_SELF = 0
const RUSAGE_CHILDREN = -1
const RUSAGE_THREAD = 1

/** A task's CPU time so far in ns, including the current stretch if it is on a CPU. */
export function taskCputime(kernel: Kernel, t: Task): number {
  return t.utime + (t.state === 'running' && t.cpu >= 0 ? kernel.machine.cycles(t.cpu) - t.runStart : 0)
}

/** nsec_to_clock_t: ns in USER_HZ ticks. */
export function clockTicks(ns: number): number {
  return Math.floor(ns / NS_PER_TICK)
}

function taskTime(ctx: SyscallContext, t: Task): number {
  return taskCputime(ctx.kernel, t)
}

/** The time of every live thread of the caller's process. */
function groupTime(ctx: SyscallContext): number {
  let ns = 0
  for (const t of ctx.kernel.tasks.values()) if (t.tgid === ctx.task.tgid) ns += taskTime(ctx, t)
  return ns
}

function groupLeader(ctx: SyscallContext): Task {
  return ctx.kernel.tasks.get(ctx.task.tgid) ?? ctx.task
}

export function sysTimes(ctx: SyscallContext, buf: number): number {
  if (buf) {
    const b = new Uint8Array(32)
    const v = new DataView(b.buffer)
    v.setBigInt64(0, BigInt(Math.floor(groupTime(ctx) / NS_PER_TICK)), true) // tms_utime
    v.setBigInt64(16, BigInt(Math.floor(groupLeader(ctx).cutime / NS_PER_TICK)), true) // tms_cutime
    copyToUser(ctx.task.mm, buf, b)
  }
  // Ticks since boot (an arbitrary but monotonic point, as on Linux).
  return Math.floor(ctx.kernel.machine.cycles(ctx.cpu.id) / NS_PER_TICK)
}

export function sysGetrusage(ctx: SyscallContext, who: number, ru: number): number {
  const w = who | 0
  const ns =
    w === RUSAGE_SELF
      ? groupTime(ctx)
      : w === RUSAGE_CHILDREN
        ? groupLeader(ctx).cutime
        : w === RUSAGE_THREAD
          ? taskTime(ctx, ctx.task)
          : -1
  if (ns < 0) return -EINVAL
  // struct rusage: ru_utime, ru_stime (timevals), then 14 longs (not tracked: zero).
  const b = new Uint8Array(144)
  const v = new DataView(b.buffer)
  const us = Math.floor(ns / 1000)
  v.setBigInt64(0, BigInt(Math.floor(us / 1e6)), true)
  v.setBigInt64(8, BigInt(us % 1e6), true)
  copyToUser(ctx.task.mm, ru, b)
  return 0
}
