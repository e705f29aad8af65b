// utrace's cost on this machine, as its issue asks:
// (a) a getpid loop (programs.ts: getpidLoop, ITERATIONS + 2 syscalls) untraced, with one engine
//     attached and no events, and with one engine asking for SYSCALL_ENTRY | SYSCALL_EXIT whose
//     callbacks just return UTRACE_RESUME (and, as the floor under it, a bare kernel tracehook
//     with syscall callbacks and no utrace; and a control, untraced paired with untraced, for
//     the noise of the difference):
//       host ns/syscall      = run time / syscalls; the difference: (traced - untraced) / syscalls
//       guest cycles/syscall = the same of the cost-model cycles (instructions + charged events)
//     and, counted in an untimed run, the kernel's calls into the tracer per syscall (for the
//     engine with no events, the one call it makes, timed alone in a hot loop).
// (b) Debian's bash-static running a script of the kernel's bash tests (programs.ts: SCRIPT)
//     untraced and with a syscall-reporting engine on every task (attached in report_clone): host
//     time ratio, guest instruction ratio, syscalls reported. (`probekit run --strace` is measured
//     by the CLI's bench, above this package.)
// Each tracer is measured in a process of its own (syscalls.ts, bash.ts), its runs paired with
// untraced ones, medians over the pairs. `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { type Benchmark, report, runBenchmarks } from '@probekit/bench'
import type { BashCost, BashTracerKind } from './bash.js'
import { haveBash, SCRIPT } from './programs.js'
import { SYSCALLS, type TracerCost, type TracerKind } from './syscalls.js'

const here = fileURLToPath(new URL('.', import.meta.url))

/** A child process's JSON figures, measured once. */
function child<T>(file: string, kind: string): () => T {
  let figures: T | undefined
  return () => {
    if (figures === undefined) {
      const c = spawnSync(process.execPath, [...process.execArgv, `${here}${file}`, kind], {
        encoding: 'utf8',
      })
      if (c.status !== 0) throw new Error(`${file} ${kind}: ${c.stderr}`)
      figures = JSON.parse(c.stdout) as T
    }
    return figures
  }
}

const loop = (kind: TracerKind) => child<TracerCost>('syscalls.ts', kind)
const control = loop('control')
const idle = loop('idle')
const syscall = loop('syscall')
const hook = loop('hook')
const bash = (kind: BashTracerKind) => child<BashCost>('bash.ts', kind)

const LOOP = `getpid loop (${SYSCALLS} syscalls)`
const bench = (name: string, unit: string, run: () => number): Benchmark => ({ name, unit, run })

const benches: Benchmark[] = [
  bench(`${LOOP} untraced: host time`, 'ns/syscall', () => idle().untracedNs),
  bench(`${LOOP} untraced: guest cycles`, 'cycles/syscall', () => idle().untracedCycles),
  bench(
    `${LOOP}, control (untraced paired with untraced): host time - untraced`,
    'ns/syscall',
    () => control().diffNs,
  ),
  bench(
    `${LOOP}, control (untraced paired with untraced): host time / untraced`,
    'ratio',
    () => control().timeRatio,
  ),
  bench(`${LOOP}, engine with no events: host time - untraced`, 'ns/syscall', () => idle().diffNs),
  bench(`${LOOP}, engine with no events: host time / untraced`, 'ratio', () => idle().timeRatio),
  bench(`${LOOP}, engine with no events: guest cycles - untraced`, 'cycles/syscall', () => idle().diffCycles),
  bench(
    `${LOOP}, engine with no events: guest instructions - untraced`,
    'insns/syscall',
    () => idle().diffInstructions,
  ),
  bench(
    `${LOOP}, engine with no events: kernel calls into utrace`,
    'per syscall',
    () => idle().callsPerSyscall,
  ),
  bench(
    `${LOOP}, engine with no events: host time of those calls - untraced, hot loop`,
    'ns/syscall',
    () => idle().sigpendingForcedNs,
  ),
  bench(`${LOOP}, SYSCALL_ENTRY|EXIT engine: host time`, 'ns/syscall', () => syscall().tracedNs),
  bench(`${LOOP}, SYSCALL_ENTRY|EXIT engine: host time - untraced`, 'ns/syscall', () => syscall().diffNs),
  bench(`${LOOP}, SYSCALL_ENTRY|EXIT engine: host time / untraced`, 'ratio', () => syscall().timeRatio),
  bench(`${LOOP}, SYSCALL_ENTRY|EXIT engine: guest cycles`, 'cycles/syscall', () => syscall().tracedCycles),
  bench(
    `${LOOP}, SYSCALL_ENTRY|EXIT engine: guest cycles - untraced`,
    'cycles/syscall',
    () => syscall().diffCycles,
  ),
  bench(
    `${LOOP}, SYSCALL_ENTRY|EXIT engine: guest instructions - untraced`,
    'insns/syscall',
    () => syscall().diffInstructions,
  ),
  bench(
    `${LOOP}, SYSCALL_ENTRY|EXIT engine: hypercalls - untraced`,
    'per syscall',
    () => syscall().diffHypercalls,
  ),
  bench(`${LOOP}, SYSCALL_ENTRY|EXIT engine: syscall entries reported`, 'per run', () => syscall().reported),
  bench(
    `${LOOP}, SYSCALL_ENTRY|EXIT engine: kernel calls into utrace`,
    'per syscall',
    () => syscall().callsPerSyscall,
  ),
  bench(`${LOOP}, bare tracehook (no utrace): host time - untraced`, 'ns/syscall', () => hook().diffNs),
  bench(`${LOOP}, bare tracehook (no utrace): host time / untraced`, 'ratio', () => hook().timeRatio),
  bench(
    `${LOOP}, bare tracehook (no utrace): guest cycles - untraced`,
    'cycles/syscall',
    () => hook().diffCycles,
  ),
]

/** The rows of a bash-static run under one tracer. */
function bashRows(kind: BashTracerKind, label: string): Benchmark[] {
  const b = bash(kind)
  const BASH = `bash-static ${SCRIPT}`
  return [
    bench(`${BASH}, ${label}: host time / untraced`, 'ratio', () => b().timeRatio),
    bench(`${BASH}, ${label}: host time / untraced, lowest pair`, 'ratio', () => b().timeRatioMin),
    bench(`${BASH}, ${label}: host time / untraced, highest pair`, 'ratio', () => b().timeRatioMax),
    bench(`${BASH}, ${label}: guest instructions / untraced`, 'ratio', () => b().instructionRatio),
    bench(`${BASH}, ${label}: syscall entries reported`, 'per run', () => b().reported),
    ...(kind === 'syscall'
      ? [
          bench(`${BASH} untraced: host time`, 'ms', () => b().untracedMs),
          bench(`${BASH} untraced: guest instructions`, 'M insns', () => b().untracedInstructions / 1e6),
          bench(`${BASH}, ${label}: tasks traced`, 'per run', () => b().tasks),
        ]
      : []),
  ]
}

if (!haveBash) {
  process.stderr.write(
    'utrace bench: /bin/bash-static is not installed (apt-get install bash-static): skipped\n',
  )
} else {
  benches.push(...bashRows('syscall', 'SYSCALL_ENTRY|EXIT engine on every task'))
}

const results = await runBenchmarks(benches)
// Which of the tracer's callbacks the kernel called, per syscall (the counts above, by name).
for (const [label, figures] of [
  ['engine with no events', idle()],
  ['SYSCALL_ENTRY|EXIT engine', syscall()],
  ['bare tracehook', hook()],
] as const) {
  const calls = Object.entries(figures.calls).map(([name, n]) => `${name} ${n.toFixed(4)}`)
  process.stderr.write(`utrace bench: ${label}: kernel calls per syscall: ${calls.join(', ')}\n`)
}
report(results)
