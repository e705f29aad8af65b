// struct utrace_report: the local state of one reporting pass - the action
// the engines chose so far (the smallest wins), the resume action among
// those that did not stop, the last callback's result bits (signal or
// syscall action), and whether anything detached or nothing was called.

import { UTRACE_RESUME, type UtraceResumeAction } from './constants.js'

export interface UtraceReport {
  result: number
  action: UtraceResumeAction
  resumeAction: UtraceResumeAction
  detaches: boolean
  spurious: boolean
}

/** INIT_REPORT */
export function initReport(): UtraceReport {
  return { result: 0, action: UTRACE_RESUME, resumeAction: UTRACE_RESUME, detaches: false, spurious: true }
}
