// struct utrace: a thread's tracing state. The thread reports from the
// attached list; engines attached meanwhile wait on the attaching list and
// join the end of attached at the start of the next reporting pass, so
// callbacks go in attach order and a new engine does not see the event
// during which it was attached.

import type { Task } from '@probekit/kernel'
import { UTRACE_RESUME, type UtraceResumeAction } from './constants.js'
import type { UtraceEngine } from './engine.js'

export class TaskUtrace {
  attached: UtraceEngine[] = []
  attaching: UtraceEngine[] = []
  /** The engine whose callback is running (utrace_barrier and -EINPROGRESS look at it). */
  reporting: UtraceEngine | null = null
  /** The child while report_clone runs. */
  cloning: Task | null = null
  /** The resume action pending for the next pass (the smallest asked for). */
  resume: UtraceResumeAction = UTRACE_RESUME
  /** A handler's frame was set up and no report_signal has followed yet. */
  signalHandler = false
  /** In utrace_report_death now. */
  death = false
  /** release_task has run. */
  reap = false
  /** Engines wait on attaching. */
  pendingAttach = false
  /** task->utrace_flags: the union of the engines' events (REAP at least while any is attached) and ENGINE_STOP. */
  flags = 0
  /** The result of the last syscall-entry pass, kept across a stop there. */
  syscallEntryResult = 0
  /** The resume action of that pass (what utrace_stop was given). */
  syscallEntryResumeAction: UtraceResumeAction = UTRACE_RESUME

  constructor(readonly task: Task) {}

  /** splice_attaching */
  spliceAttaching(): void {
    this.attached.push(...this.attaching)
    this.attaching = []
    this.pendingAttach = false
  }
}
