// uprobes overhead on this machine, on the fixture `uprobed loop N` (ufunc
// called N times, programs.ts), as kprobes' bench measures its probes:
//   unprobed loop iteration: host ns and guest cycles per iteration
//   per hit of u (uprobe), r (uretprobe), ur (both) on ufunc, and of the inode
//   API (uprobe_register on /bin/uprobed at ufunc's file offset with handler
//   and ret_handler):
//     host ns/hit      = (run time with the probe - without) / hits
//     guest cycles/hit = (cost-model cycles with - without) / hits
//   each probed run checked to hit exactly N times (entry and return);
// and, in the same run, the peers, as ratios (absolute times drift on a
// shared machine; ratios much less):
//   a kprobe hit (kprobes' own bench, overhead.ts k: a kprobe on
//     do_syscall_64, boosting off);
//   the native binary on the host CPU, unprobed (the host baseline of an
//     iteration) and under the host kernel's own uprobes (tracefs
//     uprobe_events on ufunc's file offset), where this machine allows it
//     (native.ts; a missing peer is skipped with a line on stderr saying why).
// Each emulated kind is measured in a process of its own (overhead.ts), its
// probed runs paired with unprobed ones. `pnpm bench` prints a table; `pnpm
// bench --json` JSON lines. Notes (skipped peers, spreads, the 5 µs goal) go
// to stderr.

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { type Benchmark, report, runBenchmarks } from '@probekit/bench'
import {
  canRunNative,
  NATIVE_ITERATIONS,
  NATIVE_LOOP_ITERATIONS,
  nativeLoopNs,
  type RealUprobes,
  realKernelUprobes,
} from './native.js'
import { ITERATIONS, type Kind, LOOP_ITERATIONS, type Overhead } from './overhead.js'
import { FUNCTION } from './programs.js'

const here = fileURLToPath(new URL('.', import.meta.url))
/** The goal: a uprobe hit costs at most this much host time. */
const GOAL_NS = 5_000

const note = (line: string) => process.stderr.write(`uprobes bench: ${line}\n`)

/** A child process's JSON figures, or null (and a note) if it failed and may. */
function child<T>(file: string, arg: string, optional = false): T | null {
  const c = spawnSync(process.execPath, [...process.execArgv, `${here}${file}`, arg], { encoding: 'utf8' })
  if (c.status === 0) return JSON.parse(c.stdout) as T
  if (!optional) throw new Error(`${file} ${arg}: ${c.stderr}`)
  note(`${file} ${arg} failed, its rows skipped: ${c.stderr.trim().split('\n').slice(-3).join(' ')}`)
  return null
}

const kinds: [Kind, string][] = [
  ['u', 'u (uprobe)'],
  ['r', 'r (uretprobe)'],
  ['ur', 'ur (uprobe + uretprobe)'],
  ['inode', 'inode API (uprobe_register, handler + ret_handler)'],
]

/** kprobes' bench, overhead.ts k: a kprobe on do_syscall_64 hit once per getpid, boosting off. */
interface KprobeOverhead {
  noneNs: number
  noneCycles: number
  hitNs: number
  hitCycles: number
}
const KPROBE = 'kprobe (kprobes bench: k on do_syscall_64)'

// Measured first, one after another, in this order: the figures compared with each other most
// (a uprobe hit, a kprobe hit, a real kernel uprobe hit) close together in time.
const emulated = new Map<Kind, Overhead>()
const measureKind = (k: Kind) => emulated.set(k, child<Overhead>('overhead.ts', k) as Overhead)
measureKind('loop')
measureKind('u')
const kprobe = child<KprobeOverhead>('../../kprobes/bench/overhead.ts', 'k', true)
const real: RealUprobes = realKernelUprobes()
const native = canRunNative ? nativeLoopNs() : null
for (const [k] of kinds) if (!emulated.has(k)) measureKind(k)

const fig = (k: Kind) => emulated.get(k)!
const loop = fig('loop')
const bench = (name: string, unit: string, value: number): Benchmark => ({ name, unit, run: () => value })
const LOOP = `unprobed ${FUNCTION} loop iteration (uprobed loop ${LOOP_ITERATIONS} - loop 0)`
const ON = `on ${FUNCTION} (uprobed loop ${ITERATIONS})`

const benches: Benchmark[] = [
  bench(`${LOOP}: host time`, 'ns/iter', loop.ns),
  bench(`${LOOP}: guest cycles`, 'cycles/iter', loop.cycles),
  bench(`${LOOP}: guest instructions`, 'insns/iter', loop.instructions),
]
for (const [kind, label] of kinds) {
  const f = fig(kind)
  benches.push(
    bench(`${label} ${ON}: host time per hit`, 'ns/hit', f.ns),
    bench(`${label} ${ON}: guest cycles per hit`, 'cycles/hit', f.cycles),
    bench(`${label} ${ON}: guest instructions per hit`, 'insns/hit', f.instructions),
    bench(`${label} ${ON}: host time per hit / unprobed iteration`, 'ratio', f.ns / loop.ns),
    bench(`${label} ${ON}: guest cycles per hit / unprobed iteration`, 'ratio', f.cycles / loop.cycles),
  )
}

// The kprobe peer: skipped (with a note) if kprobes' bench cannot run.
if (kprobe !== null) {
  benches.push(
    bench(`${KPROBE}: host time per hit`, 'ns/hit', kprobe.hitNs),
    bench(`${KPROBE}: guest cycles per hit`, 'cycles/hit', kprobe.hitCycles),
  )
  for (const [kind, label] of kinds)
    benches.push(
      bench(`${label}: host time per hit / kprobe hit's`, 'ratio', fig(kind).ns / kprobe.hitNs),
      bench(`${label}: guest cycles per hit / kprobe hit's`, 'ratio', fig(kind).cycles / kprobe.hitCycles),
    )
}

// The native peers.
if (native === null) note(`native runs: not available here (${process.platform} ${process.arch})`)
else {
  const NATIVE = `native ${FUNCTION} loop iteration on the host CPU (uprobed loop ${NATIVE_LOOP_ITERATIONS} - loop 0)`
  benches.push(
    bench(`${NATIVE}: host time`, 'ns/iter', native),
    bench(`${LOOP}: host time / native iteration`, 'ratio', loop.ns / native),
  )
}
if ('unavailable' in real) note(`real kernel uprobes: not available here (${real.unavailable})`)
else {
  const REAL = `real kernel uprobe (tracefs uprobe_events) on native ${FUNCTION} (uprobed loop ${NATIVE_ITERATIONS})`
  benches.push(bench(`${REAL}: host time per hit`, 'ns/hit', real.ns))
  if (native !== null)
    benches.push(bench(`${REAL}: host time per hit / native iteration`, 'ratio', real.ns / native))
  benches.push(
    bench(`u (uprobe): host time per hit / real kernel uprobe hit's`, 'ratio', fig('u').ns / real.ns),
  )
}

const u = fig('u').ns
benches.push(bench(`u (uprobe): host time per hit / the ${GOAL_NS / 1000} µs goal`, 'ratio', u / GOAL_NS))

const results = await runBenchmarks(benches)
for (const [kind, label] of kinds) {
  const f = fig(kind)
  note(
    `${label}: ${f.hits} hits per run; host ns/hit over the pairs ${f.nsMin.toFixed(0)} .. ${f.nsMax.toFixed(0)}`,
  )
}
if (!('unavailable' in real))
  note(
    `real kernel uprobe via ${real.tracefs}: ${real.hits} hits per run; host ns/hit over the pairs ${real.nsMin.toFixed(0)} .. ${real.nsMax.toFixed(0)}`,
  )
note(
  `goal, a uprobe hit at most ${GOAL_NS / 1000} µs host time: ${u <= GOAL_NS ? 'met' : 'NOT met'} (${(u / 1000).toFixed(1)} µs)`,
)
report(results)
