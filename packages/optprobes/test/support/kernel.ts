// A booted guest kernel with user programs that keep entering it, Kprobes
// with Optprobes plugged in, and the helpers the tests share (the kprobes
// package's test programs: getpid and open loops).

import type { Kernel } from '@probekit/kernel'
import { Kprobes } from '@probekit/kprobes'
import { bootKernel } from '../../../kprobes/test/support/kernel.js'
import { Optprobes, type OptprobesOptions } from '../../src/index.js'

export {
  BAD_OPENER,
  BAD_WRITER,
  bootKernel,
  SPINNER,
  textSnapshot,
} from '../../../kprobes/test/support/kernel.js'

export interface Booted {
  k: Kernel
  kp: Kprobes
  op: Optprobes
}

export function bootOpt(cpus = 1, programs?: Uint8Array[], options: OptprobesOptions = {}): Booted {
  const k = bootKernel(cpus, programs)
  const kp = new Kprobes(k)
  const op = new Optprobes(kp, options)
  return { k, kp, op }
}

/** Kernel text as it is now (kprobes' readText). */
export { readText as text } from '@probekit/kprobes'
