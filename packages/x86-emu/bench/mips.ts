// Emulated MIPS of one workload, measured in a process of its own: run this
// file with the workload path, the `iterations` to patch in (0: as built)
// and the JIT threshold ('default' or a number, Infinity for the
// interpreter); it prints the median MIPS. A fresh process per figure keeps
// one benchmark's V8 state (inline caches made megamorphic by the decoder
// sweep, heap grown by another workload) out of the next one's figure.

import { readFileSync } from 'node:fs'
import { median } from '@probekit/bench'
import { loadBare } from '../test/support/bare.js'
import { patchGlobal32 } from '../test/support/elf.js'

/** Median MIPS over full runs of a program (machine setup excluded from the timing; the first run warms up V8). */
export function mips(elf: Uint8Array, jitThreshold?: number, runs = 3): number {
  const samples: number[] = []
  for (let k = 0; k <= runs; k++) {
    const { machine, out } = loadBare(elf)
    if (jitThreshold !== undefined) machine.jitThreshold = jitThreshold
    const t0 = performance.now()
    const r = machine.run({ maxInstructions: 10_000_000_000 })
    const ms = performance.now() - t0
    if (out.exitCode === null) throw new Error(`workload did not exit: ${r.reason} ${r.detail}`)
    if (k > 0) samples.push(machine.totalInstructions() / ms / 1000)
  }
  return median(samples)
}

if (process.argv[1]?.endsWith('mips.ts')) {
  const [path, iterations, threshold] = process.argv.slice(2)
  let elf: Uint8Array = new Uint8Array(readFileSync(path))
  if (Number(iterations) > 0) elf = patchGlobal32(elf, 'iterations', Number(iterations))
  const jit = threshold === undefined || threshold === 'default' ? undefined : Number(threshold)
  process.stdout.write(`${JSON.stringify(mips(elf, jit))}\n`)
}
