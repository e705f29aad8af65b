// Writing to a host descriptor (stdout, stderr, a trace file) as a program's
// write(2) sees it: a slow reader is waited for, and a failure is a negative
// errno returned, never thrown, so each caller decides what it means (the
// guest's write gets it; probekit's own output remembers it).

import { writeSync } from 'node:fs'
import { constants } from 'node:os'

const ERRNO: Record<string, number> = constants.errno
const NAMES = new Map(Object.entries(ERRNO).map(([name, n]) => [n, name]))

/** A one-slot buffer to sleep on: Atomics.wait blocks without spinning. */
const nap = new Int32Array(new SharedArrayBuffer(4))

/**
 * Write all of data to fd. A descriptor that is non-blocking (O_NONBLOCK
 * set by whoever shares it) gives EAGAIN when its reader is slow: wait and
 * retry, as a blocking write would, so no byte is lost. Returns the bytes
 * written, or -errno when none could be (after a partial write, the count:
 * the next write gets the error, as write(2) does).
 */
export function writeHost(fd: number, data: Uint8Array): number {
  let off = 0
  while (off < data.length) {
    try {
      off += writeSync(fd, data, off)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? ''
      if (code === 'EAGAIN') {
        Atomics.wait(nap, 0, 0, 10)
        continue
      }
      const errno = ERRNO[code]
      // Not an errno from the host's write: a bug, not an I/O outcome.
      if (errno === undefined) throw e
      return off > 0 ? off : -errno
    }
  }
  return off
}

/** What a failed host write means, for a one-line message: 'the reader has gone (EPIPE)'. */
export function describeWriteError(errno: number): string {
  const name = NAMES.get(Math.abs(errno)) ?? `errno ${Math.abs(errno)}`
  if (name === 'EPIPE') return 'the reader has gone (EPIPE)'
  if (name === 'ENOSPC') return 'no space left on device (ENOSPC)'
  return `write failed (${name})`
}

export const EPIPE = ERRNO.EPIPE
