// The line strace prints when a traced task is gone:
// '+++ exited with 0 +++' or '+++ killed by SIGSEGV (core dumped) +++'.

import { signalText } from './signals.js'

export interface ExitStatus {
  /** The exit code, for a task that exited. */
  code?: number
  /** The signal that killed it. */
  signal?: number
  /** The kill left a core dump. */
  core?: boolean
}

export function formatExit(status: ExitStatus): string {
  if (status.signal !== undefined)
    return `+++ killed by ${signalText(status.signal)}${status.core ? ' (core dumped)' : ''} +++`
  return `+++ exited with ${status.code ?? 0} +++`
}
