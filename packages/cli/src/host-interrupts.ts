// Ctrl-C while `probekit run` runs the guest. The run is one long synchronous
// call, so a SIGINT handler would only run after it; instead bin/probekit.js
// appends a byte per Ctrl-C to an unlinked file passed as PROBEKIT_INTERRUPT_FD,
// and the run looks at its size from the guest's timer tick. While it listens,
// this process ignores the SIGINT a terminal sends it too.

import { fstatSync } from 'node:fs'

export class HostInterrupts {
  private seen = 0
  private readonly ignore = () => undefined

  private constructor(private readonly fd: number | null) {
    if (fd !== null) this.seen = this.size()
  }

  /** The wrapper's file, or none (probekit run in-process, or started without bin/probekit.js). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): HostInterrupts {
    const fd = Number(env.PROBEKIT_INTERRUPT_FD)
    if (!Number.isInteger(fd) || fd < 3) return new HostInterrupts(null)
    try {
      fstatSync(fd)
      return new HostInterrupts(fd)
    } catch {
      return new HostInterrupts(null)
    }
  }

  /** Ctrl-Cs since the last look. */
  poll(): number {
    if (this.fd === null) return 0
    const size = this.size()
    const n = size - this.seen
    this.seen = size
    return n
  }

  /** Listen (the run's SIGINT comes through poll) until the returned function is called. */
  listen(): () => void {
    if (this.fd === null) return () => undefined
    process.on('SIGINT', this.ignore)
    return () => process.off('SIGINT', this.ignore)
  }

  private size(): number {
    try {
      return fstatSync(this.fd as number).size
    } catch {
      return this.seen
    }
  }
}
