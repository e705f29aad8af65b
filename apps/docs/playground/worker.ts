// The playground's Web Worker: the guest kernel runs here, off the page's
// thread, one run per request. A mistake the user can fix (a bad definition,
// an unknown symbol) is answered with its one-line error; anything else is
// a bug, said as one.

import { CliError } from '../../../packages/cli/src/cli-error.js'
import type { RunRequest, WorkerReply } from './protocol.js'
import { playgroundRun } from './run.js'

/** The part of DedicatedWorkerGlobalScope used here (the docs typecheck with the DOM library). */
interface WorkerScope {
  onmessage: ((e: MessageEvent<RunRequest>) => void) | null
  postMessage(reply: WorkerReply): void
}
const scope = self as unknown as WorkerScope

scope.onmessage = async (e) => {
  let reply: WorkerReply
  try {
    reply = { type: 'result', report: await playgroundRun(e.data) }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    reply = {
      type: 'error',
      message:
        err instanceof CliError
          ? message
          : `internal error: ${message} (a bug in probekit: please report it)`,
    }
  }
  scope.postMessage(reply)
}
