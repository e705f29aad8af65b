// (b) Debian's bash-static running a script (programs.ts: SCRIPT, with the kernel's bash tests'
// setup), untraced and traced on every task, in a process of its own (run by index.ts as
// `bash.ts syscall`; prints JSON): one utrace engine reporting syscall entry and exit, attached
// to each new task in report_clone. (`probekit run --strace` on the same kind of run is measured
// by the CLI's bench, which sits above this package.) Whole runs, exec to the last exit, paired
// and medians taken as in syscalls.ts.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { median, settledMemory } from '@probekit/bench'
import { syscallEngine, type TracerSetup } from './engines.js'
import { BASH, bashKernel } from './programs.js'

const WARMUP_PAIRS = 1
const PAIRS = 7
const MAX_INSTRUCTIONS = 3_000_000_000

export type BashTracerKind = 'syscall'

interface Sample {
  ms: number
  instructions: number
  out: string
  reported: number
  tasks: number
}

const bash = new Uint8Array(readFileSync(BASH))

function runOnce(setup: TracerSetup | null): Sample {
  const { k, out } = bashKernel(bash)
  const task = k.init
  if (!task) throw new Error('no task spawned')
  const traced = setup?.(k)
  traced?.attach(task)
  const i0 = k.machine.totalInstructions()
  // The garbage of earlier runs (their kernels, the guest memory) is collected before the timing.
  settledMemory()
  const t0 = performance.now()
  const r = k.run(MAX_INSTRUCTIONS)
  const ms = performance.now() - t0
  if (r.exit?.status !== 0) throw new Error(`bash-static did not finish the script: ${r.result.detail}`)
  return {
    ms,
    instructions: k.machine.totalInstructions() - i0,
    out: out(),
    reported: traced?.syscalls() ?? 0,
    tasks: traced?.tasks?.() ?? 0,
  }
}

export interface BashCost {
  untracedMs: number
  tracedMs: number
  untracedInstructions: number
  /** Medians of the pairs' ratios (traced / untraced). */
  timeRatio: number
  instructionRatio: number
  /** The lowest and highest of the pairs' host time ratios: how noisy the machine was. */
  timeRatioMin: number
  timeRatioMax: number
  /** Syscall entries reported in a traced run, and the tasks traced (0 where the tracer does not say). */
  reported: number
  tasks: number
}

function measure(setup: TracerSetup): BashCost {
  const pair = (i: number) => {
    if (i % 2 === 0) {
      const none = runOnce(null)
      return { none, traced: runOnce(setup) }
    }
    const traced = runOnce(setup)
    return { none: runOnce(null), traced }
  }
  for (let w = 0; w < WARMUP_PAIRS; w++) pair(w)
  const pairs = Array.from({ length: PAIRS }, (_, i) => pair(i))
  for (const p of pairs)
    if (p.traced.out !== p.none.out || p.none.out === '')
      throw new Error(`traced run printed otherwise:\n${p.traced.out}\n--- untraced:\n${p.none.out}`)
  const med = (f: (p: { none: Sample; traced: Sample }) => number) => median(pairs.map(f))
  return {
    untracedMs: med((p) => p.none.ms),
    tracedMs: med((p) => p.traced.ms),
    untracedInstructions: med((p) => p.none.instructions),
    timeRatio: med((p) => p.traced.ms / p.none.ms),
    instructionRatio: med((p) => p.traced.instructions / p.none.instructions),
    timeRatioMin: Math.min(...pairs.map((p) => p.traced.ms / p.none.ms)),
    timeRatioMax: Math.max(...pairs.map((p) => p.traced.ms / p.none.ms)),
    reported: med((p) => p.traced.reported),
    tasks: med((p) => p.traced.tasks),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2]
  if (kind !== 'syscall') throw new Error('usage: bash.ts syscall')
  const setup = syscallEngine(true)
  process.stdout.write(`${JSON.stringify(measure(setup))}\n`)
}
