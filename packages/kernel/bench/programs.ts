// Whole programs against the code issue 16 was filed on (its goal 4: bash-static running the
// script suite and busybox's applet cases at least 2x faster than then), side by side in one run:
// Debian's bash-static running each of test/bash/*.sh, and busybox-static each applet case of
// test/support/busybox-suite.ts, every one as the tests run it (a fresh Kernel, booted, the
// program spawned and run to its exit: test/support's emulated()).
//
// The base is a git worktree of the commit before the first one of issue 16's work (the parent of
// the commit that added x86-emu's native/workloads/calls.c), with node_modules linked from this
// checkout (see the kernel README, Benchmarks). Each side runs a whole suite in a fresh node
// process (this file run as `programs.ts --child KERNEL_DIR bash|busybox`, one JSON line per item);
// the sides alternate, ROUNDS times, and the medians are compared. Time is the process's CPU time
// (process.cpuUsage: user + system, every thread), not wall-clock time: the machine is shared.
// The two sides' outputs must be the same; the guest instruction counts are printed beside them
// (a count changes only where the kernel's own code changed).
//
//   tsx --conditions=@probekit/source bench/programs.ts [--base DIR] [--rounds N] [--json]
//
// Run by bench/index.ts too. Skipped (with a message on stderr) where bash-static or
// busybox-static is absent; only the current code is measured when there is no base tree.

import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type BenchResult, median, report } from '@probekit/bench'

const kernelDir = fileURLToPath(new URL('..', import.meta.url))
/** Where the base worktree is unless --base says otherwise (`git worktree add /tmp/wt-base REV`). */
const DEFAULT_BASE = '/tmp/wt-base'
const SUITES = ['bash', 'busybox'] as const
type Suite = (typeof SUITES)[number]

/** What a child prints per item. */
interface ItemRun {
  name: string
  cpuMs: number
  instructions: number
  /** stdout, stderr and status, hashed: the sides must agree. */
  output: string
}

/** What test/support's emulated() returns, as far as this file reads it. */
interface Emulated {
  run: { kernel: { machine: { totalInstructions(): number } } }
  result: unknown
}

/** Child: run one suite of the kernel package at `dir`, printing a JSON line per item. */
async function child(dir: string, suite: Suite): Promise<void> {
  // The outputs name the inputs' host paths (wc, a script's $0): the same in either tree.
  const root = join(dir, '../..')
  const emit = (name: string, run: () => Emulated) => {
    const before = process.cpuUsage()
    const r = run()
    const used = process.cpuUsage(before)
    const item: ItemRun = {
      name,
      cpuMs: (used.user + used.system) / 1000,
      instructions: r.run.kernel.machine.totalInstructions(),
      output: digest(JSON.stringify(r.result).replaceAll(root, '<root>')),
    }
    process.stdout.write(`${JSON.stringify(item)}\n`)
  }
  if (suite === 'bash') {
    const s = await import(pathToFileURL(join(dir, 'test/support/bash-suite.ts')).href)
    for (const name of s.scriptNames() as string[]) emit(name, () => s.emulated(s.scriptPath(name)))
  } else {
    const s = await import(pathToFileURL(join(dir, 'test/support/busybox-suite.ts')).href)
    for (const c of s.cases as { name: string }[]) emit(c.name, () => s.emulated(c))
  }
}

/** FNV-1a, 32 bits: enough to tell two outputs apart. */
function digest(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16).padStart(8, '0')
}

/** One suite of one side, in a fresh node (the same flags this one runs with). */
function runSide(dir: string, suite: Suite): ItemRun[] {
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--child', dir, suite],
    { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  )
  if (r.status !== 0) throw new Error(`programs bench: ${suite} suite in ${dir} failed: ${r.stderr}`)
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ItemRun)
}

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** The figures: per item and per suite, base and current CPU milliseconds and their ratio. */
export function programFigures(options: { base?: string; rounds?: number } = {}): BenchResult[] {
  const base = options.base ?? DEFAULT_BASE
  const rounds = options.rounds ?? 3
  const haveBase = existsSync(join(base, 'packages/kernel/test/support/bash-suite.ts'))
  if (!haveBase)
    process.stderr.write(
      `programs bench: no base tree at ${base} (git worktree add ${base} REV, see the kernel README): the current code only\n`,
    )
  const sides = haveBase
    ? { base: join(base, 'packages/kernel'), current: kernelDir }
    : { current: kernelDir }
  const results: BenchResult[] = []
  for (const suite of SUITES) {
    const program = suite === 'bash' ? '/bin/bash-static' : '/bin/busybox'
    if (!existsSync(program)) {
      process.stderr.write(`programs bench: ${program} is not installed: the ${suite} suite skipped\n`)
      continue
    }
    const runs: Record<string, ItemRun[][]> = {}
    // Alternating, so a change of load hits both sides alike.
    for (let i = 0; i < rounds; i++)
      for (const [side, dir] of Object.entries(sides)) (runs[side] ??= []).push(runSide(dir, suite))
    const names = runs.current[0].map((r) => r.name)
    const ms = (side: string, name: string) =>
      median(runs[side].map((round) => round.find((r) => r.name === name)?.cpuMs ?? Number.NaN))
    const first = (side: string, name: string) => runs[side][0].find((r) => r.name === name)
    for (const name of names) {
      const cur = ms('current', name)
      const insns = first('current', name)?.instructions ?? Number.NaN
      results.push({ name: `${suite}: ${name}: current`, value: cur, unit: 'ms CPU' })
      if (!runs.base) {
        results.push({ name: `${suite}: ${name}: guest instructions`, value: insns, unit: 'insns' })
        continue
      }
      const b = ms('base', name)
      results.push({ name: `${suite}: ${name}: base`, value: b, unit: 'ms CPU' })
      results.push({ name: `${suite}: ${name}: base / current`, value: b / cur, unit: 'x' })
      const bi = first('base', name)
      if (bi?.output !== first('current', name)?.output)
        process.stderr.write(`programs bench: ${suite}: ${name}: the output differs from the base's\n`)
      // The kernel's own code paths changed since the base in places (errno checks): a count may move a little.
      if (bi && bi.instructions !== insns)
        results.push({
          name: `${suite}: ${name}: guest instructions, current / base`,
          value: insns / bi.instructions,
          unit: 'x',
        })
    }
    // A whole suite: the sum over its items, per round, then the median.
    const total = (side: string) => median(runs[side].map((round) => round.reduce((s, r) => s + r.cpuMs, 0)))
    results.push({ name: `${suite} suite: current`, value: total('current'), unit: 'ms CPU' })
    if (runs.base) {
      results.push({ name: `${suite} suite: base`, value: total('base'), unit: 'ms CPU' })
      results.push({
        name: `${suite} suite: base / current`,
        value: total('base') / total('current'),
        unit: 'x',
      })
    }
  }
  return results
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const childAt = process.argv.indexOf('--child')
  if (childAt >= 0) await child(process.argv[childAt + 1], process.argv[childAt + 2] as Suite)
  else {
    const rounds = option('--rounds')
    report(programFigures({ base: option('--base'), rounds: rounds ? Number(rounds) : undefined }))
  }
}
