// Determinism, the long run (issue 17): the kernel's bash-static and
// busybox-static suites, each case run many times in this one process, in a
// different order every round (so each run meets a code cache that earlier,
// different runs filled), optionally while other processes load every host
// CPU. Every run of a case must print the same bytes, end with the same
// status and count the same guest instructions and cycles on every vCPU;
// otherwise the guest depends on something of the host's (time, load, what
// ran before), and that is a bug.
//
//   tools/determinism.sh [--runs N] [--load N] [--suite bash|busybox|all]
//
// Exit status 0 when every case was identical in every run, 1 otherwise.

import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { parseArgs } from 'node:util'
import * as bash from '../test/support/bash-suite.js'
import * as busybox from '../test/support/busybox-suite.js'

interface Case {
  name: string
  run: () => { stdout: string; stderr: string; status: number | null; instructions: number; cycles: number[] }
}

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    load: { type: 'string', default: '0' },
    suite: { type: 'string', default: 'all' },
  },
})
const runs = Number(values.runs)
const load = values.load === 'cpus' ? availableParallelism() : Number(values.load)

function kernelCounts(k: {
  machine: { totalInstructions(): number; cpus: unknown[]; cycles(i: number): number }
}) {
  return {
    instructions: k.machine.totalInstructions(),
    cycles: k.machine.cpus.map((_, i) => k.machine.cycles(i)),
  }
}

const cases: Case[] = []
if (values.suite !== 'busybox' && bash.available)
  for (const name of bash.scriptNames())
    cases.push({
      name: `bash ${name}`,
      run: () => {
        const { run, result } = bash.emulated(bash.scriptPath(name))
        return { ...result, ...kernelCounts(run.kernel) }
      },
    })
if (values.suite !== 'bash' && busybox.available)
  for (const c of busybox.cases)
    cases.push({
      name: `busybox ${c.name}`,
      run: () => {
        const { run, result } = busybox.emulated(c)
        return { ...result, ...kernelCounts(run.kernel) }
      },
    })
if (cases.length === 0) {
  console.error(
    'determinism: neither /bin/bash-static nor /bin/busybox is here (apt-get install bash-static busybox-static)',
  )
  process.exit(2)
}

// CPU load: busy host processes, one per requested CPU, for the whole run.
const hogs = Array.from({ length: load }, () =>
  spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
)
const stopHogs = () => {
  for (const h of hogs) h.kill('SIGKILL')
}
process.on('exit', stopHogs)

/** A fixed-seed shuffle (xorshift32), so each round's order differs and the whole run can be repeated. */
let seed = 0x9e3779b9
function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs]
  for (let i = out.length - 1; i > 0; i--) {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    const j = (seed >>> 0) % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

const digests = new Map<string, Map<string, number>>()
const counts = new Map<string, { instructions: number; cycles: number[] }>()
const started = performance.now()
for (let round = 1; round <= runs; round++) {
  for (const c of shuffled(cases)) {
    const r = c.run()
    const digest = createHash('sha256').update(JSON.stringify(r)).digest('hex').slice(0, 16)
    const seen = digests.get(c.name) ?? new Map<string, number>()
    seen.set(digest, (seen.get(digest) ?? 0) + 1)
    digests.set(c.name, seen)
    if (!counts.has(c.name)) counts.set(c.name, { instructions: r.instructions, cycles: r.cycles })
  }
  process.stderr.write(`\rround ${round}/${runs}`)
}
process.stderr.write('\n')
stopHogs()

let differing = 0
for (const c of cases) {
  const seen = digests.get(c.name) ?? new Map()
  const first = counts.get(c.name)
  const same = seen.size === 1
  if (!same) differing++
  console.log(
    `${same ? 'same' : 'DIFFERENT'}  ${c.name.padEnd(64)} ${String(first?.instructions ?? 0).padStart(12)} instructions` +
      (same ? '' : `  (${[...seen.values()].join('+')} runs gave ${seen.size} results)`),
  )
}
const seconds = ((performance.now() - started) / 1000).toFixed(0)
console.log(
  `${cases.length} cases x ${runs} runs in one process, ${load} CPU hog(s), ${seconds} s: ` +
    (differing === 0 ? 'every run identical' : `${differing} case(s) differed`),
)
process.exit(differing === 0 ? 0 : 1)
