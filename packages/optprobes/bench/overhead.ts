// One kind of probe's overhead on sys_ni_host, measured in a process of its
// own (run by index.ts as `overhead.ts <kind>`; prints JSON), as the kprobes
// bench does: a fresh process per kind keeps one kind's V8 state out of the
// next kind's figure.
//
// The function is sys_ni_host, entered once per getpid by the kprobes
// bench's getpidLoop program (do_syscall_64, which that bench probes, has a
// jump table and so cannot be optimized). k, r: boosting off, no optimizer;
// b, rb: boosted; o, ro: Optprobes plugged in (boosting off, though an
// optimized probe never traps), the optimizer's work run at once with
// wait_for_kprobe_optimizer() before the run, and the jump checked in place.

import { fileURLToPath } from 'node:url'
import { medianOf, pairedRuns } from '@probekit/bench'
import type { Kernel } from '@probekit/kernel'
import { Kprobes } from '@probekit/kprobes'
import { getpidLoop } from '../../kprobes/bench/programs.js'
import { bootKernel } from '../../kprobes/test/support/kernel.js'
import { Optprobes } from '../src/index.js'

export const FUNCTION = 'sys_ni_host' // entered once per getpid
const ITERATIONS = 20_000
const WARMUP = 3
const SAMPLES = 15
const program = getpidLoop(ITERATIONS)

export type Kind = 'none' | 'k' | 'b' | 'o' | 'r' | 'rb' | 'ro'

/** Attach a probe of this kind; returns a hit counter (pre_handler calls, or kretprobe handler calls). */
function attach(k: Kernel, kind: Kind): () => number {
  const boosted = kind === 'b' || kind === 'rb'
  const optimized = kind === 'o' || kind === 'ro'
  const kp = new Kprobes(k, { boost: boosted })
  const op = optimized ? new Optprobes(kp) : null
  let hits = 0
  const count = () => {
    hits++
    return 0
  }
  if (kind === 'k' || kind === 'b' || kind === 'o') {
    if (kp.register_kprobe({ symbol_name: FUNCTION, pre_handler: count }) !== 0)
      throw new Error('register_kprobe failed')
  } else if (kp.register_kretprobe({ kp: { symbol_name: FUNCTION }, handler: count }) !== 0) {
    throw new Error('register_kretprobe failed')
  }
  if (op) {
    op.wait_for_kprobe_optimizer()
    const addr = k.symbol(FUNCTION)
    if (!op.isOptimized(addr))
      throw new Error(`${FUNCTION} not optimized: ${op.refused.get(addr) ?? 'still queued'}`)
  }
  return () => hits
}

interface Sample {
  ms: number
  cycles: number
  traps: number
  hypercalls: number
  hits: number
}

function runOnce(kind: Kind): Sample {
  const k = bootKernel(1, [program])
  const hits = kind === 'none' ? () => ITERATIONS + 2 : attach(k, kind)
  const counters = k.machine.counters[0]
  const c0 = k.machine.cycles(0)
  const { traps, hypercalls } = counters
  // CPU time, not wall time: the machine is shared, and a run that waits for a core is not slower.
  const t0 = process.cpuUsage()
  const r = k.run()
  const used = process.cpuUsage(t0)
  const ms = (used.user + used.system) / 1000
  if (r.exit?.status !== 0) throw new Error(`program did not exit cleanly: ${r.result.detail}`)
  const n = hits()
  if (kind !== 'none' && n < ITERATIONS) throw new Error(`${kind}: only ${n} hits`)
  // An optimized probe never traps: a trap per hit would mean the int3, not the jump, was hit.
  if ((kind === 'o' || kind === 'ro') && counters.traps - traps > n / 100)
    throw new Error(`${kind}: ${counters.traps - traps} traps in ${n} hits: not running through the jump`)
  return {
    ms,
    cycles: k.machine.cycles(0) - c0,
    traps: counters.traps - traps,
    hypercalls: counters.hypercalls - hypercalls,
    hits: n,
  }
}

/**
 * WARMUP pairs, then SAMPLES pairs of an unprobed run followed by a
 * probed one; medians over the pairs (pairing keeps V8's drift between runs
 * out of the difference).
 */
export interface Overhead {
  /** Unprobed run, per loop iteration: host ns and guest cycles. */
  noneNs: number
  noneCycles: number
  /** Per hit of the probe: host ns and guest cycles. */
  hitNs: number
  hitCycles: number
  /** Per hit: exceptions delivered (int3, #DB) and vmcalls (host handlers), beyond the unprobed run's. */
  hitTraps: number
  hitHypercalls: number
  /** Hits per probed run (one per getpid, plus whatever else enters the function). */
  hits: number
}

function measure(kind: Kind): Overhead {
  const pairs = pairedRuns(
    WARMUP,
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
    hitTraps: med((none, probed) => (probed.traps - none.traps) / probed.hits),
    hitHypercalls: med((none, probed) => (probed.hypercalls - none.hypercalls) / probed.hits),
    hits: med((_none, probed) => probed.hits),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(measure(process.argv[2] as Kind))}\n`)
}
