// Kernel benchmarks: emulated MIPS (guest instructions per host second) of a
// whole real program, Debian's bash-static running a loop script (counting,
// arithmetic and string operations) from exec to exit, kernel and all. The
// kernel's construction and boot are outside the timing; the first run
// warms up V8 and the block compiler. Skipped (with a message on stderr)
// where /bin/bash-static is absent. Then the memory benchmark (memory.ts):
// the emulator's resident set running hello (the fixed cost), compute
// (small), bash-static scripts (medium), bigmem at 32 and 256 MiB (large)
// and jitgen (a million distinct instructions: the code cache's bound),
// against the guest's own memory, emulated and native, and issue 16's
// bound on it. And the scheduler's costs (sched.ts), and
// the start-up of dynamically linked programs against static ones
// (dynamic.ts: probekit run end to end, ld.so's guest instructions). Last,
// whole programs against the code issue 16 was filed on, side by side
// (programs.ts: the bash suite and busybox's applet cases, CPU time).
// `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { existsSync, readFileSync } from 'node:fs'
import { type BenchResult, median, report, runBenchmarks } from '@probekit/bench'
import { Kernel } from '../src/index.js'
import { dynamicFigures } from './dynamic.js'
import { memoryBenchmarks } from './memory.js'
import { programFigures } from './programs.js'
import { schedFigures } from './sched.js'

const BASH = '/bin/bash-static'
const ITERATIONS = 1000
const SAMPLES = 3

const LOOP = `
s=
total=0
for ((i = 0; i < ${ITERATIONS}; i++)); do
  total=$(( (total * 31 + i * i) % 1000003 ))
  word="item-$i"
  s+=\${word:5:1}
  case $word in *7) ((total ^= i)) ;; esac
done
echo "$total \${#s}"
`

const image = new Uint8Array(readFileSync(new URL('../guest/vmlinux', import.meta.url)))

/** One run of bash-static on the loop; returns guest instructions and host milliseconds. */
function runLoop(bash: Uint8Array): { instructions: number; ms: number } {
  let out = ''
  const kernel = new Kernel({ image, stdout: (d) => (out += new TextDecoder().decode(d)) })
  kernel.vfs.writeFile(BASH, bash)
  kernel.boot()
  const before = kernel.machine.totalInstructions()
  kernel.spawn(BASH, [BASH, '-c', LOOP], ['PATH=/bin', 'LC_ALL=C'])
  const t0 = performance.now()
  const { exit, result } = kernel.run(20_000_000_000)
  const ms = performance.now() - t0
  if (exit?.status !== 0 || out === '')
    throw new Error(`bash-static did not finish the loop: ${result.detail}`)
  return { instructions: kernel.machine.totalInstructions() - before, ms }
}

const results: BenchResult[] = []

if (!existsSync(BASH)) {
  process.stderr.write(`kernel bench: ${BASH} is not installed (apt-get install bash-static): skipped\n`)
} else {
  const bash = new Uint8Array(readFileSync(BASH))
  runLoop(bash) // warm-up
  const runs = Array.from({ length: SAMPLES }, () => runLoop(bash))
  results.push(
    ...(await runBenchmarks([
      {
        name: `bash-static loop script (${ITERATIONS} iterations): guest instructions`,
        unit: 'M insns',
        run: () => median(runs.map((r) => r.instructions)) / 1e6,
      },
      {
        name: `bash-static loop script (${ITERATIONS} iterations)`,
        unit: 'MIPS',
        run: () => median(runs.map((r) => r.instructions / r.ms / 1000)),
      },
    ])),
  )
}

// The scheduler: a syscall that never sleeps, and a pipe ping-pong (two sleeps, two wake-ups, two switches).
const sched = schedFigures()
results.push(
  ...(await runBenchmarks(
    sched.flatMap((f) => [
      { name: `sched: ${f.name}`, unit: 'µs', run: () => f.usPerIteration },
      { name: `sched: ${f.name}: guest instructions`, unit: 'insns', run: () => f.instructionsPerIteration },
    ]),
  )),
)

// Start-up of dynamically linked programs (the host's ls and bash) against static ones of about their size.
results.push(...(await dynamicFigures()))

// Memory (memory.ts): each case in a fresh process, against the guest's own pages and issue 16's bound.
results.push(...(await memoryBenchmarks()))
// Whole programs against the code issue 16 was filed on: the bash suite and busybox's applet cases (programs.ts).
results.push(...programFigures())
report(results)
