// struct utrace_examiner: what utrace_prepare_examine saw of a stopped
// thread, so utrace_finish_examine can tell whether it ran in between.

import type { TaskState } from '@probekit/kernel'

export interface UtraceExaminer {
  state: TaskState | null
  /** wait_task_inactive's switch count (never 0 when it succeeded). */
  ncsw: number
}

export function newUtraceExaminer(): UtraceExaminer {
  return { state: null, ncsw: 0 }
}
