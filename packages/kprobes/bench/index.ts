// kprobes overhead on this machine, as in Documentation/kprobes.txt section 6:
// per hit of k (kprobe), j (jprobe), r (kretprobe), kr (kprobe + kretprobe),
// jr (jprobe + kretprobe) on one function, hit once per loop iteration of a user
// program that calls getpid N times then exits; b and rb are the boosted
// kprobe and kretprobe (the others run with boosting off).
//   host ns/hit     = (run time with the probe - without) / hits
//   guest cycles/hit = (cost-model cycles with - without) / hits
// Each kind is measured in a process of its own (overhead.ts), its probed
// runs paired with unprobed ones. `pnpm bench` prints a table; `pnpm bench
// --json` JSON lines.

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { report, runBenchmarks } from '@probekit/bench'
import { FUNCTION, type Kind, type Overhead } from './overhead.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const measured = new Map<Kind, Overhead>()
/** One kind's figures, from a child process (overhead.ts). */
function overhead(kind: Kind): Overhead {
  let o = measured.get(kind)
  if (o === undefined) {
    const child = spawnSync(process.execPath, [...process.execArgv, `${here}overhead.ts`, kind], {
      encoding: 'utf8',
    })
    if (child.status !== 0) throw new Error(`overhead of ${kind}: ${child.stderr}`)
    o = JSON.parse(child.stdout) as Overhead
    measured.set(kind, o)
  }
  return o
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
    run: () => overhead('k').noneNs,
  },
  {
    name: 'unprobed getpid iteration: guest cycles',
    unit: 'cycles/iter',
    run: () => overhead('k').noneCycles,
  },
  ...kinds.flatMap(([kind, label]) => [
    {
      name: `${kind} (${label}) on ${FUNCTION}: host time per hit`,
      unit: 'ns/hit',
      run: () => overhead(kind).hitNs,
    },
    {
      name: `${kind} (${label}) on ${FUNCTION}: guest cycles per hit`,
      unit: 'cycles/hit',
      run: () => overhead(kind).hitCycles,
    },
  ]),
])
report(results)
