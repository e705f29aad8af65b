// Kernel benchmarks: emulated MIPS (guest instructions per host second) of a
// whole real program, Debian's bash-static running a loop script (counting,
// arithmetic and string operations) from exec to exit, kernel and all. The
// kernel's construction and boot are outside the timing; the first run
// warms up V8 and the block compiler. Skipped (with a message on stderr)
// where /bin/bash-static is absent. Then the memory benchmark (memory.ts):
// the emulator's resident set running hello (the fixed cost), the compute
// fixture, and bigmem (a guest using 32 MiB), against the guest's own
// memory, emulated and native; with the node flags the probekit command
// uses and with node's defaults. And the scheduler's costs (sched.ts), and
// the start-up of dynamically linked programs against static ones
// (dynamic.ts: probekit run end to end, ld.so's guest instructions).
// `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchResult, median, report, runBenchmarks } from '@probekit/bench'
import { Kernel } from '../src/index.js'
import { dynamicFigures } from './dynamic.js'
import type { KernelMemoryFigures } from './memory.js'
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

const here = fileURLToPath(new URL('.', import.meta.url))
const fixture = (name: string) => `${here}../fixtures/bin/${name}`

/**
 * The node flags the probekit command runs the emulator with
 * (packages/cli/bin/probekit.js): V8's young generation capped at 4 MiB per
 * semi-space instead of growing to 16.
 */
const PROBEKIT_NODE_FLAGS = ['--max-semi-space-size=4']

/** Memory figures of a fixture under the emulator, in a fresh process (with node's defaults, or as probekit runs). */
function emulatedMemory(name: string, flags: string[]): KernelMemoryFigures {
  const child = spawnSync(
    process.execPath,
    [...flags, ...process.execArgv, `${here}memory.ts`, fixture(name)],
    {
      encoding: 'utf8',
    },
  )
  if (child.status !== 0) throw new Error(`memory benchmark of ${name} failed: ${child.stderr}`)
  return JSON.parse(child.stdout) as KernelMemoryFigures
}

/**
 * Peak RSS (bytes) of native runs of the fixtures, through maxrss.c built
 * here; null (with a message) where no compiler or not x86-64 Linux.
 */
function nativeMaxRss(names: string[]): Map<string, number> | null {
  if (process.platform !== 'linux' || process.arch !== 'x64') return null
  const dir = mkdtempSync(join(tmpdir(), 'probekit-maxrss-'))
  try {
    const exe = join(dir, 'maxrss')
    const built = ['musl-gcc', 'gcc'].some(
      (cc) => spawnSync(cc, ['-static', '-O2', '-o', exe, `${here}maxrss.c`]).status === 0,
    )
    if (!built) {
      process.stderr.write('kernel bench: no musl-gcc or gcc to build maxrss.c: native memory skipped\n')
      return null
    }
    const out = new Map<string, number>()
    for (const name of names) {
      const r = spawnSync(exe, [fixture(name)], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] })
      if (r.status !== 0) throw new Error(`native ${name} failed: ${r.stderr}`)
      out.set(name, Number(r.stderr.trim()) * 1024)
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const MiB = 1024 * 1024
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

// hello shows the fixed cost: a program of 20 k instructions and 36 KiB.
const MEMORY_FIXTURES = ['hello', 'compute', 'bigmem']
const native = nativeMaxRss(MEMORY_FIXTURES)
for (const name of MEMORY_FIXTURES) {
  const m = emulatedMemory(name, PROBEKIT_NODE_FLAGS)
  const d = emulatedMemory(name, [])
  const rows = [
    {
      name: `${name} memory: guest pages mapped (peak, with page tables)`,
      unit: 'MiB',
      run: () => m.guestMapped / MiB,
    },
    {
      name: `${name} memory: emulator RSS growth (probekit's node flags)`,
      unit: 'MiB',
      run: () => m.rss / MiB,
    },
    { name: `${name} memory: emulator RSS growth (node defaults)`, unit: 'MiB', run: () => d.rss / MiB },
    { name: `${name} memory: emulator V8 heap growth`, unit: 'MiB', run: () => m.heap / MiB },
    { name: `${name} memory: emulator peak RSS (whole process)`, unit: 'MiB', run: () => m.maxRss / MiB },
    {
      name: `${name} memory: RSS growth (probekit) / guest pages mapped`,
      unit: 'ratio',
      run: () => m.rss / m.guestMapped,
    },
  ]
  const nat = native?.get(name)
  if (nat !== undefined)
    rows.push({ name: `${name} memory: native peak RSS (ru_maxrss)`, unit: 'MiB', run: () => nat / MiB })
  // ru_maxrss of a tiny program can read 0 (see the README): no ratio then.
  if (nat !== undefined && nat > 0)
    rows.push({
      name: `${name} memory: RSS growth (probekit) / native peak RSS`,
      unit: 'ratio',
      run: () => m.rss / nat,
    })
  results.push(...(await runBenchmarks(rows)))
}
report(results)
