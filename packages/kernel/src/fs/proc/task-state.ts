// What /proc says of a task as a whole (fs/proc/array.c's helpers): its
// state letter (task_state_array), its thread group, the CPU time of the
// group, and its signal sets (collect_sigign_sigcatch).

import { TASK_INTERRUPTIBLE } from '../../abi.js'
import type { Kernel } from '../../kernel.js'
import type { Task } from '../../sched/task.js'
import { bit, SIG_DFL, SIG_IGN } from '../../signal/signals.js'

/** get_task_state: "R (running)" and so on. */
export function taskState(t: Task): string {
  switch (t.state) {
    case 'sleeping':
      return (t.sleepState & TASK_INTERRUPTIBLE) !== 0 ? 'S (sleeping)' : 'D (disk sleep)'
    case 'stopped':
      return 'T (stopped)'
    case 'traced':
      return 't (tracing stop)'
    case 'zombie':
      return 'Z (zombie)'
    case 'idle':
      return 'I (idle)'
    default:
      return 'R (running)'
  }
}

/** The live tasks of t's thread group. */
export function threadGroup(kernel: Kernel, t: Task): Task[] {
  return [...kernel.tasks.values()].filter((x) => x.tgid === t.tgid)
}

/** A task's CPU time in ns, the stretch it is on a CPU now included (as times() counts it). */
export function taskTime(kernel: Kernel, t: Task): number {
  return t.utime + (t.state === 'running' && t.cpu >= 0 ? kernel.machine.cycles(t.cpu) - t.runStart : 0)
}

/** USER_HZ clock ticks of ns. */
export const clockTicks = (ns: number): number => Math.floor(ns / 1e7)

/** The signals t ignores and catches (sigignore, sigcatch). */
export function signalSets(t: Task): { ignored: bigint; caught: bigint } {
  let ignored = 0n
  let caught = 0n
  t.sighand.actions.forEach((a, sig) => {
    if (sig === 0) return
    if (a.handler === SIG_IGN) ignored |= bit(sig)
    else if (a.handler !== SIG_DFL) caught |= bit(sig)
  })
  return { ignored, caught }
}

/** The pending set (sigpending's view of one task). */
export function pendingSet(t: Task): bigint {
  let set = 0n
  for (const sig of t.pending.keys()) set |= bit(sig)
  return set
}
