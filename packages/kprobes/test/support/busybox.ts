// A booted kernel with Debian's busybox-static at /bin/busybox and the
// guest's stdout collected, for tests that probe real shell pipelines.

import { existsSync, readFileSync } from 'node:fs'
import { Kernel, type Task } from '@probekit/kernel'
import { Kprobes } from '../../src/index.js'
import { guestImage } from './kernel.js'

export const BUSYBOX = '/bin/busybox'

/** Debian's busybox-static on an x86-64 Linux host (a dynamically linked busybox would not run). */
export const busyboxAvailable =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

export interface BusyboxKernel {
  k: Kernel
  kp: Kprobes
  /** What the guest wrote to stdout so far. */
  out: () => string
  /** The task a probe handler runs for (current on the handler's CPU). */
  current: () => Task
}

export function bootBusybox(cpus = 1): BusyboxKernel {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    cpus,
    memorySize: 128 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
  })
  k.vfs.writeFile(BUSYBOX, new Uint8Array(readFileSync(BUSYBOX)), 0o755)
  k.boot()
  const kp = new Kprobes(k)
  return { k, kp, out: () => out, current: () => k.current(k.machine.cpus[kp.smp_processor_id()]) }
}
