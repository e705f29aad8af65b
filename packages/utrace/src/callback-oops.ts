// An engine's callback is module code the traced thread runs in its own
// reports. One that throws is an oops, reported by the kernel's oops() as for
// probe handlers - which callback of an engine on which thread (and the
// function's name), the thread's registers, the JavaScript stack - and the
// machine stops for good. The report pass goes on as if the callback had
// answered nothing (UTRACE_RESUME, the signal left as it was), so utrace's
// bookkeeping stays whole; after an oops no more callbacks run.

import {
  describeException,
  type Kernel,
  kernelOopsed,
  oops,
  type PtRegsField,
  type PtRegsFrame,
  type Task,
} from '@probekit/kernel'
import { UTRACE_EVENT } from './constants.js'
import type { UtraceEngineOps } from './engine-ops.js'

/** The callback each event is reported with (report_quiesce comes before any of them). */
export const EVENT_CALLBACK: Readonly<Record<number, keyof UtraceEngineOps>> = {
  [UTRACE_EVENT.QUIESCE]: 'report_quiesce',
  [UTRACE_EVENT.REAP]: 'report_reap',
  [UTRACE_EVENT.CLONE]: 'report_clone',
  [UTRACE_EVENT.EXEC]: 'report_exec',
  [UTRACE_EVENT.EXIT]: 'report_exit',
  [UTRACE_EVENT.DEATH]: 'report_death',
  [UTRACE_EVENT.SYSCALL_ENTRY]: 'report_syscall_entry',
  [UTRACE_EVENT.SYSCALL_EXIT]: 'report_syscall_exit',
  [UTRACE_EVENT.JCTL]: 'report_jctl',
}

/**
 * Make one callback of an engine on task: what it returns, or undefined if it threw (reported as an
 * oops) or the kernel has already oopsed. regs: the thread's registers (default: its user pt_regs).
 */
export function callEngine<T>(
  kernel: Kernel,
  task: Task,
  ops: UtraceEngineOps,
  callback: keyof UtraceEngineOps,
  call: () => T,
  regs: PtRegsFrame | null = null,
): T | undefined {
  if (kernelOopsed(kernel)) return undefined
  try {
    return call()
  } catch (e) {
    const fn = ops[callback]
    // Its own name, not the field's (an arrow function in an object literal is named after the field).
    const name = typeof fn === 'function' && fn.name && fn.name !== callback ? fn.name : null
    oops(kernel, {
      bug: [
        `BUG: utrace engine ${callback} for pid ${task.pid} (${task.comm}) raised ${describeException(e)}`,
      ],
      info: name ? [`Handler: ${name}`] : [],
      regs: regs ?? { get: (f: PtRegsField) => task.getReg(f) },
      error: e,
    })
    return undefined
  }
}
