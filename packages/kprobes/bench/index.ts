// kprobes overhead on this machine, as in Documentation/kprobes.txt section 6:
// per hit of k (kprobe), j (jprobe), r (kretprobe), kr (kprobe + kretprobe),
// jr (jprobe + kretprobe) on one function, hit once per loop iteration of a user
// program that calls getpid N times then exits; b and rb are the boosted
// kprobe and kretprobe (the others run with boosting off).
//   host ns/hit     = (run time with the probe - without) / hits
//   guest cycles/hit = (cost-model cycles with - without) / hits
// `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { median, report, runBenchmarks } from '@probekit/bench'
import type { Kernel } from '@probekit/kernel'
import { Kprobes } from '../src/index.js'
import { bootKernel } from '../test/support/kernel.js'
import { getpidLoop } from './programs.js'

const FUNCTION = 'do_syscall_64' // entered once per getpid
const ITERATIONS = 20_000
const SAMPLES = 5
const program = getpidLoop(ITERATIONS)

type Kind = 'none' | 'k' | 'j' | 'r' | 'kr' | 'jr' | 'b' | 'rb'

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
  const t0 = performance.now()
  const r = k.run()
  const ms = performance.now() - t0
  if (r.exit?.status !== 0) throw new Error(`program did not exit cleanly: ${r.result.detail}`)
  return { ms, cycles: k.machine.cycles(0) - c0, hits: hits() }
}

/** Median time and cycles over SAMPLES runs (after one warm-up run). */
function sample(kind: Kind): Sample {
  runOnce(kind)
  const s = Array.from({ length: SAMPLES }, () => runOnce(kind))
  return { ms: median(s.map((x) => x.ms)), cycles: median(s.map((x) => x.cycles)), hits: s[0].hits }
}

const cache = new Map<Kind, Sample>()
const get = (kind: Kind): Sample => {
  let s = cache.get(kind)
  if (!s) cache.set(kind, (s = sample(kind)))
  return s
}

const kinds: [Kind, string][] = [
  ['k', 'kprobe'],
  ['j', 'jprobe'],
  ['r', 'kretprobe'],
  ['kr', 'kprobe + kretprobe'],
  ['jr', 'jprobe + kretprobe'],
  ['b', 'boosted kprobe'],
  ['rb', 'boosted kretprobe'],
]

const results = await runBenchmarks([
  {
    name: 'unprobed getpid iteration: host time',
    unit: 'ns/iter',
    run: () => (get('none').ms * 1e6) / (ITERATIONS + 2),
  },
  {
    name: 'unprobed getpid iteration: guest cycles',
    unit: 'cycles/iter',
    run: () => get('none').cycles / (ITERATIONS + 2),
  },
  ...kinds.flatMap(([kind, label]) => [
    {
      name: `${kind} (${label}) on ${FUNCTION}: host time per hit`,
      unit: 'ns/hit',
      run: () => ((get(kind).ms - get('none').ms) * 1e6) / get(kind).hits,
    },
    {
      name: `${kind} (${label}) on ${FUNCTION}: guest cycles per hit`,
      unit: 'cycles/hit',
      run: () => (get(kind).cycles - get('none').cycles) / get(kind).hits,
    },
  ]),
])
report(results)
