// The host's stdin as `probekit run` reads it for the guest. The run is one synchronous call, so a
// read of a terminal or a pipe that has nothing yet would block it - and a Ctrl-C with it, since
// the run looks for those only between guest instructions. So stdin is read without blocking, and
// while nothing is there the run waits in short slices, asking between them whether to give up (a
// Ctrl-C came). Only what the program asks for is read, when it asks; the guest's time stands still
// meanwhile, so its output does not depend on when the host's input came.
//
// Without blocking, but without changing fd 0's own file status flags either: a terminal or a FIFO
// shares its open file with the shell that started probekit, which must not find it non-blocking
// afterwards. So those are opened anew (/proc/self/fd/0: a file of their own, O_NONBLOCK). A socket
// (node's own child_process pipes) cannot be opened anew; its open file is probekit's alone, and
// node's socket handle makes it non-blocking. A regular file never blocks: it is read as it is. (A
// worker thread reading on the run's behalf would do as well, but a read still pending in it keeps
// node from exiting.)

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { Socket } from 'node:net'

/** How long the run waits for input before asking whether to give up (ms). */
const SLICE_MS = 10
/** The largest read made at once (the kernel asks for at most what the guest's buffer holds). */
const MAX_READ = 65536

export class HostStdin {
  /** The descriptor read: fd 0 itself, or its non-blocking reopening; null until the first read. */
  private fd: number | null = null
  private opened = false
  /** Keeps node's handle on a socket stdin (it set O_NONBLOCK). */
  private socket: Socket | null = null
  private readonly sleeper = new Int32Array(new SharedArrayBuffer(4))

  /**
   * Up to max bytes (an empty array at EOF or on an error), or null when interrupted() said to give
   * up before anything came.
   */
  read(max: number, interrupted: () => boolean): Uint8Array | null {
    const fd = this.open()
    const buf = new Uint8Array(Math.min(max, MAX_READ))
    for (;;) {
      try {
        return buf.subarray(0, readSync(fd, buf, 0, buf.length, null))
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return new Uint8Array(0)
      }
      // Nothing yet: wait a little, then look again (a Ctrl-C first).
      if (interrupted()) return null
      Atomics.wait(this.sleeper, 0, 0, SLICE_MS)
    }
  }

  /** Let go of the reopened descriptor. */
  close(): void {
    if (this.opened && this.fd !== null) closeSync(this.fd)
    this.opened = false
    this.fd = null
  }

  private open(): number {
    if (this.fd !== null) return this.fd
    this.fd = 0
    let st: ReturnType<typeof fstatSync>
    try {
      st = fstatSync(0)
    } catch {
      return this.fd // no stdin: reads fail with EBADF, taken as EOF
    }
    if (st.isFIFO() || st.isCharacterDevice()) {
      try {
        this.fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
        this.opened = true
      } catch {
        // No /proc: fd 0 as it is (a read that blocks cannot be interrupted then).
      }
    } else if (st.isSocket()) {
      try {
        // Not readable: node's handle must not start reading it itself.
        this.socket = new Socket({ fd: 0, readable: false, writable: false })
        this.socket.unref()
      } catch {
        // fd 0 as it is.
      }
    }
    return this.fd
  }
}
