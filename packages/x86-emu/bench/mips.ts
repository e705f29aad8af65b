// Emulated MIPS of one workload, measured in a process of its own: run this
// file with the workload path, the `iterations` to patch in (0: as built)
// and the JIT threshold ('default' or a number, Infinity for the
// interpreter); it prints { cold, warm } as JSON. A fresh process per figure
// keeps one benchmark's V8 state (inline caches made megamorphic by the
// decoder sweep, heap grown by another workload) out of the next one's
// figure.
//
// cold: the first run in the process: V8 has compiled nothing, and every
// block is interpreted, compiled and warmed up from V8's interpreter during
// the timed run. warm: the median of the next runs, each on a fresh machine
// (its own memory, code cache and blocks), while V8 has optimised the
// emulator and the block compiler's functions are shared across machines
// (block-compiler.ts): what a second process running the same program, or a
// long-running one, sees. A fourth argument sets the number of warm runs
// (0: the cold run only).

import { readFileSync } from 'node:fs'
import { median } from '@probekit/bench'
import { loadBare } from '../test/support/bare.js'
import { patchGlobal32 } from '../test/support/elf.js'

export interface Mips {
  cold: number
  warm: number
  /** Guest instructions one run retires (the same in every run: the emulator is deterministic). */
  instructions: number
}

/** MIPS over full runs of a program on fresh machines (machine setup excluded from the timing). */
export function mips(elf: Uint8Array, jitThreshold?: number, runs = 3): Mips {
  const samples: number[] = []
  let cold = 0
  let instructions = 0
  for (let k = 0; k <= runs; k++) {
    const { machine, out } = loadBare(elf)
    if (jitThreshold !== undefined) machine.jitThreshold = jitThreshold
    const t0 = performance.now()
    const r = machine.run({ maxInstructions: 10_000_000_000 })
    const ms = performance.now() - t0
    if (out.exitCode === null) throw new Error(`workload did not exit: ${r.reason} ${r.detail}`)
    instructions = machine.totalInstructions()
    const rate = instructions / ms / 1000
    if (k === 0) cold = rate
    else samples.push(rate)
  }
  return { cold, warm: runs > 0 ? median(samples) : Number.NaN, instructions }
}

if (process.argv[1]?.endsWith('mips.ts')) {
  const [path, iterations, threshold, runs] = process.argv.slice(2)
  let elf: Uint8Array = new Uint8Array(readFileSync(path))
  if (Number(iterations) > 0) elf = patchGlobal32(elf, 'iterations', Number(iterations))
  const jit = threshold === undefined || threshold === 'default' ? undefined : Number(threshold)
  process.stdout.write(`${JSON.stringify(mips(elf, jit, runs === undefined ? 3 : Number(runs)))}\n`)
}
