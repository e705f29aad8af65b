// The program the benchmark probes: the kernel package's fixture uprobed
// (uprobed.c), whose `uprobed loop N` calls the noinline ufunc(i) N times and
// prints `loop N: sum N*N`; where ufunc is (its symbol, and its file offset,
// what uprobe_events and the inode API name); and a guest kernel with it
// spawned, booted as the uprobes tests boot theirs.

import { fileURLToPath } from 'node:url'
import type { Kernel, Task } from '@probekit/kernel'
import { boot, fileOffset, fixture, symbol } from '../test/support/kernel.js'

export const UPROBED = fixture('uprobed')
/** The fixture on the host, for the native runs. */
export const UPROBED_HOST = fileURLToPath(new URL('../../kernel/fixtures/bin/uprobed', import.meta.url))
/** Where the guest has it. */
export const UPROBED_GUEST = '/bin/uprobed'
export const FUNCTION = 'ufunc'
export const UFUNC = symbol(UPROBED, FUNCTION)

export const UFUNC_OFFSET = fileOffset(UPROBED, UFUNC)

/** What `uprobed loop n` prints: the sum of 2i + 1 for i < n is n². */
export const loopOutput = (n: number): string => `loop ${n}: sum ${BigInt(n) * BigInt(n)}\n`

export interface LoopKernel {
  k: Kernel
  task: Task
  out: () => string
}

/** A kernel with `uprobed loop n` spawned (not yet run). */
export function loopKernel(n: number): LoopKernel {
  const { k, out } = boot({ [UPROBED_GUEST]: UPROBED })
  const task = k.spawn(UPROBED_GUEST, ['uprobed', 'loop', String(n)])
  return { k, task, out }
}
