// One kind of probe's overhead, measured in a process of its own (run by
// index.ts as `overhead.ts <kind>`; prints JSON): a fresh process per kind
// keeps one kind's V8 state (call sites made polymorphic, code optimised for
// another probe layout) out of the next kind's figure.

import { fileURLToPath } from 'node:url'
import { medianOf, pairedRuns } from '@probekit/bench'
import type { Kernel } from '@probekit/kernel'
import { Kprobes } from '../src/index.js'
import { bootKernel } from '../test/support/kernel.js'
import { getpidLoop } from './programs.js'

export const FUNCTION = 'do_syscall_64' // entered once per getpid
const ITERATIONS = 20_000
const SAMPLES = 5
const program = getpidLoop(ITERATIONS)

export type Kind = 'none' | 'k' | 'j' | 'r' | 'kr' | 'jr' | 'b' | 'rb'

/** Attach probes of this kind; returns a hit counter (hits of the probe, each kind counted once per entry). */
function attach(k: Kernel, kind: Kind): () => number {
  // b and rb are the boosted kprobe and kretprobe; the others run with boosting off, as the seeds' table.
  const boosted = kind === 'b' || kind === 'rb'
  const kp = new Kprobes(k, { boost: boosted })
  if (kind === 'b') kind = 'k'
  if (kind === 'rb') kind = 'r'

  let hits = 0
  const count = () => {
    hits++
    return 0
  }
  if (kind.includes('k') && kp.register_kprobe({ symbol_name: FUNCTION, pre_handler: count }) !== 0)
    throw new Error('register_kprobe failed')
  if (
    kind.includes('j') &&
    kp.register_jprobe({ kp: { symbol_name: FUNCTION }, entry: () => void count() }) !== 0
  )
    throw new Error('register_jprobe failed')
  if (kind.includes('r') && kp.register_kretprobe({ kp: { symbol_name: FUNCTION }, handler: count }) !== 0)
    throw new Error('register_kretprobe failed')
  // kr and jr: one "hit" is the pair (entry + return), as in kprobes.txt.
  return () => (kind.length === 2 ? hits / 2 : hits)
}

interface Sample {
  ms: number
  cycles: number
  hits: number
}

function runOnce(kind: Kind): Sample {
  const k = bootKernel(1, [program])
  const hits = kind === 'none' ? () => ITERATIONS + 2 : attach(k, kind)
  const c0 = k.machine.cycles(0)
  // CPU time, not wall time: the machine is shared, and a run that waits for a core is not slower.
  const t0 = process.cpuUsage()
  const r = k.run()
  const used = process.cpuUsage(t0)
  const ms = (used.user + used.system) / 1000
  if (r.exit?.status !== 0) throw new Error(`program did not exit cleanly: ${r.result.detail}`)
  return { ms, cycles: k.machine.cycles(0) - c0, hits: hits() }
}

/**
 * Two warm-up pairs, then SAMPLES pairs of an unprobed run followed by a
 * probed one; medians over the pairs. V8 keeps optimising the emulator and
 * sharing block functions across runs, so later runs are faster: pairing
 * keeps that drift out of the difference.
 */
export interface Overhead {
  /** Unprobed run, per loop iteration: host ns and guest cycles. */
  noneNs: number
  noneCycles: number
  /** Per hit of the probe: host ns and guest cycles. */
  hitNs: number
  hitCycles: number
}

function measure(kind: Kind): Overhead {
  const pairs = pairedRuns(
    2,
    SAMPLES,
    () => runOnce('none'),
    () => runOnce(kind),
  )
  const med = (f: (none: Sample, probed: Sample) => number) => medianOf(pairs, (p) => f(p.baseline, p.probed))
  return {
    noneNs: med((none) => (none.ms * 1e6) / (ITERATIONS + 2)),
    noneCycles: med((none) => none.cycles / (ITERATIONS + 2)),
    hitNs: med((none, probed) => ((probed.ms - none.ms) * 1e6) / probed.hits),
    hitCycles: med((none, probed) => (probed.cycles - none.cycles) / probed.hits),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(measure(process.argv[2] as Kind))}\n`)
}
