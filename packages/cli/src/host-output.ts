// probekit's own stdout or stderr (help, decode's table, demo, messages).
// Node's process.stdout reports a write to a pipe whose reader has gone as
// an 'error' event that crashes the process with a stack trace; this
// writes synchronously instead and remembers the first failure, so the exit
// code can say what happened (main.ts) and later writes are dropped.

import { writeHost } from './host-write.js'

const encoder = new TextEncoder()

export class HostOutput {
  /** The first failed write's -errno, 0 while every write succeeded. */
  error = 0

  constructor(readonly fd: number) {}

  write(chunk: string): boolean {
    if (this.error !== 0) return false
    let data = encoder.encode(chunk)
    // A partial write means the rest failed: the next try says why.
    while (data.length > 0) {
      const n = writeHost(this.fd, data)
      if (n < 0) {
        this.error = n
        return false
      }
      data = data.subarray(n)
    }
    return true
  }
}
