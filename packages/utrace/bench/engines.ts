// The tracers the benchmark measures, each a function taking the kernel (before its first task
// runs) and returning what it attached: `attach` is given the first task, `syscalls` says how many
// syscall entries were reported. Every engine is a plain utrace engine from this package.

import type { Kernel, Task } from '@probekit/kernel'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_RESUME,
  type UtraceEngineOps,
  utraceOf,
} from '../src/index.js'

export interface Traced {
  /** Attach to a task that has not run yet (the program the run is for). */
  attach(task: Task): void
  /** Syscall entries reported so far, over every task traced. */
  syscalls(): number
  /** Tasks traced so far (the first and those followed from it), where the tracer counts them. */
  tasks?(): number
}

/** A tracer to measure: set up on a booted kernel whose first task has not run. */
export type TracerSetup = (k: Kernel) => Traced

const SYSCALL_EVENTS = UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT

function attachEngine(k: Kernel, task: Task, ops: UtraceEngineOps, events: number): void {
  const utrace = utraceOf(k)
  const engine = utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null)
  if (IS_ERR(engine)) throw new Error(`utrace_attach_task: ${engine}`)
  if (events !== 0) {
    const r = utrace.utrace_set_events(task, engine, events)
    if (r !== 0) throw new Error(`utrace_set_events: ${r}`)
  }
}

/** One engine attached, no events asked for (utrace_set_events is never called): ops with no callbacks. */
export const idleEngine: TracerSetup = (k) => ({
  attach: (task) => attachEngine(k, task, {}, 0),
  syscalls: () => 0,
})

/**
 * One engine with SYSCALL_ENTRY | SYSCALL_EXIT whose callbacks count and return UTRACE_RESUME.
 * follow: it also asks for CLONE and attaches the same engine to every new task in report_clone
 * (threads and processes), so every task of the run is traced from its first instruction.
 */
export function syscallEngine(follow: boolean): TracerSetup {
  return (k) => {
    let entries = 0
    let tasks = 0
    const events = follow ? SYSCALL_EVENTS | UTRACE_EVENT.CLONE : SYSCALL_EVENTS
    const ops: UtraceEngineOps = {
      report_syscall_entry: () => {
        entries++
        return UTRACE_RESUME
      },
      report_syscall_exit: () => UTRACE_RESUME,
      report_clone: (_action, _engine, _flags, child) => {
        attach(child)
        return UTRACE_RESUME
      },
    }
    const attach = (task: Task) => {
      attachEngine(k, task, ops, events)
      tasks++
    }
    return { attach, syscalls: () => entries, tasks: () => tasks }
  }
}

/**
 * No utrace: a bare kernel tracer (TaskTracer) on the tracehooks with syscall entry and exit
 * callbacks that only count, the floor under any engine: the guest's syscall_trace_enter/exit path
 * and its two hypercalls, without utrace's report passes.
 */
export const bareTracehook: TracerSetup = (k) => {
  let entries = 0
  return {
    attach: (task) =>
      k.tracehooks.attach(task, {
        reportSyscallEntry: () => {
          entries++
          return false
        },
        reportSyscallExit: () => {},
      }),
    syscalls: () => entries,
  }
}
