// Spawn a command whose stdout or stderr is a pipe with no reader, so its
// first write there gets EPIPE - no race with a `head` that may not have
// exited yet. Its stdin gets one line once the read end is closed: a command
// that reads a line first (`sh -c 'read x; ...'`) is sure to write after.

import { spawn } from 'node:child_process'
import { constants } from 'node:os'

export interface ClosedPipeRun {
  /** As a shell reports it: the exit code, or 128 + the signal that killed it. */
  status: number
  /** What arrived on the other of stdout and stderr. */
  other: string
}

export function runWithClosed(closed: 'stdout' | 'stderr', argv: readonly string[]): Promise<ClosedPipeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    // A command that never reads its stdin may be gone before the line is sent.
    child.stdin.on('error', () => {})
    child[closed].on('close', () => child.stdin.end('go\n'))
    child[closed].destroy()
    const chunks: Buffer[] = []
    child[closed === 'stdout' ? 'stderr' : 'stdout'].on('data', (d: Buffer) => chunks.push(d))
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const status = signal ? 128 + constants.signals[signal] : (code ?? -1)
      resolve({ status, other: Buffer.concat(chunks).toString('utf8') })
    })
  })
}
