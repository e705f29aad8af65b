// Start-up of dynamically linked programs (the dynamic-programs issue's
// "Speed"): the host's /usr/bin/ls / and /bin/bash -c 'echo hi' under
// probekit, against the same commands natively and against a static program
// of about the same size run the same way (Debian's bash-static for bash,
// busybox-static's `ls /` for ls). The bar: a dynamic program's start-up
// within 3 times a static one's.
//
// (a) End to end: `probekit run PROGRAM ARGS` spawned as a user runs it
//     (node packages/cli/bin/probekit.js, which starts a node with tsx),
//     median of several runs, interleaved so load hits every command alike;
//     the native run is spawned from here too (so it includes a spawn).
// (b) Guest instructions, each in a fresh process (this file run as
//     `dynamic.ts emulate ARGV-JSON ENV-JSON`): the whole run, and ld.so's
//     part, from exec to the program's own entry point (AT_ENTRY: e_entry
//     plus 0x555555554000 for a PIE). An int3 is written at AT_ENTRY in the
//     new process's private copy of that page after exec and a host die
//     notifier catches it, notes the instruction count (to within the
//     block the notifier runs in), puts the byte back and resumes: the run
//     itself takes the normal path. With the same process's host time to
//     that point and to the end (cold: the first run of a fresh node). Then
//     ld.so's own account (LD_DEBUG=statistics: relocations, the share of
//     start-up it spent relocating and loading, in rdtsc cycles, which the
//     emulator makes guest cycles) natively and emulated side by side, and
//     ls with LD_BIND_NOW=1 (ls binds lazily; bash is linked with -z now).
// (c) The ratio dynamic / static, three ways: end-to-end wall time, the
//     emulated run's host time (without node's and the kernel's start),
//     and guest instructions.
//
// Run by bench/index.ts (`pnpm bench`), or alone: `tsx
// --conditions=@probekit/source bench/dynamic.ts [--json]`. Skipped (with a
// message on stderr) where the programs or ld.so are absent.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type BenchResult, median, report, runBenchmarks } from '@probekit/bench'
import { DIE_INT3, Kernel, NOTIFY_DONE, NOTIFY_STOP } from '../src/index.js'
import { nodeHostDirectory } from '../test/support/host-directory.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const CLI = fileURLToPath(new URL('../../cli/bin/probekit.js', import.meta.url))
const LDSO = '/lib64/ld-linux-x86-64.so.2'
/** The same environment natively, under the CLI and in-process (HOME nowhere: bash reads no rc file). */
const ENV = ['PATH=/usr/bin:/bin', 'LC_ALL=C', 'HOME=/nonexistent']
const AT_ENTRY = 9
/** End-to-end runs per command (median). */
const E2E_RUNS = 5
/** Fresh-process emulated runs per command (median host time; the instruction counts are exact). */
const CHILD_RUNS = 3

interface Case {
  name: string
  argv: string[]
  /** The static program of about the same size it is held against (null: it is the static one). */
  peer: string | null
}

const CASES: Case[] = [
  { name: 'ls /', argv: ['/usr/bin/ls', '/'], peer: 'busybox ls /' },
  { name: 'bash -c echo', argv: ['/bin/bash', '-c', 'echo hi'], peer: 'bash-static -c echo' },
  { name: 'busybox ls /', argv: ['/bin/busybox', 'ls', '/'], peer: null },
  { name: 'bash-static -c echo', argv: ['/bin/bash-static', '-c', 'echo hi'], peer: null },
]

/** What one emulated run measured (a child process prints it as JSON). */
export interface EmulatedRun {
  status: number
  /** Guest instructions from spawn (exec) to the last task's exit, kernel included. */
  instructions: number
  /** From exec to the first instruction at AT_ENTRY (ld.so's part); null for a static program. */
  toEntry: number | null
  /** Host milliseconds of kernel.run (boot and exec's loading before it excluded), and to AT_ENTRY. */
  ms: number
  msToEntry: number | null
  stdout: string
  stderr: string
}

/** Run argv under a fresh kernel with the host's tree under / (as `probekit run` does), catching AT_ENTRY. */
export function emulate(argv: readonly string[], env: readonly string[]): EmulatedRun {
  let stdout = ''
  let stderr = ''
  const dec = new TextDecoder()
  const image = new Uint8Array(readFileSync(new URL('../guest/vmlinux', import.meta.url)))
  const k = new Kernel({
    image,
    memorySize: 256 * 1024 * 1024,
    stdout: (d) => (stdout += dec.decode(d)),
    stderr: (d) => (stderr += dec.decode(d)),
  })
  const etc = k.vfs.lookup('/etc')
  if (typeof etc !== 'number' && etc.children) for (const n of ['passwd', 'group']) etc.children.delete(n)
  k.vfs.mountHost('/', nodeHostDirectory('/'), { readOnly: false, hide: ['/dev', '/proc', '/sys'] })
  k.boot()
  const before = k.machine.totalInstructions()
  const task = k.spawn(argv[0], argv, env)
  const auxv = task.mm.execLayout?.auxv ?? []
  let entry = 0
  for (let i = 0; i + 1 < auxv.length; i += 2) if (auxv[i] === AT_ENTRY) entry = auxv[i + 1]
  const dynamic = task.getReg('ip') !== entry
  let toEntry: number | null = null
  let msToEntry: number | null = null
  let t0 = 0
  if (dynamic) {
    const mm = task.mm
    // mm.write copies the page-cache page first: only this process sees the int3.
    const page = mm.space.lookup(entry - (entry % 4096))
    if (!page) throw new Error(`AT_ENTRY ${entry.toString(16)} is not mapped after exec`)
    const original = k.machine.memory.readBytes(page.frame * 4096 + (entry % 4096), 1)
    mm.write(entry, Uint8Array.of(0xcc))
    k.traps.registerDieNotifier((val, regs) => {
      const frame = k.frame(regs)
      if (val !== DIE_INT3 || toEntry !== null || frame.get('ip') !== entry + 1) return NOTIFY_DONE
      toEntry = k.machine.totalInstructions() - before
      msToEntry = performance.now() - t0
      mm.write(entry, original)
      frame.set('ip', entry)
      return NOTIFY_STOP
    })
  }
  t0 = performance.now()
  const { exit, result } = k.run(20_000_000_000)
  const ms = performance.now() - t0
  if (exit === null) throw new Error(`${argv.join(' ')} did not exit: ${result.detail}`)
  if (dynamic && toEntry === null)
    throw new Error(`${argv.join(' ')}: AT_ENTRY ${entry.toString(16)} never reached`)
  return {
    status: exit.status,
    instructions: k.machine.totalInstructions() - before,
    toEntry,
    ms,
    msToEntry,
    stdout,
    stderr,
  }
}

/** One emulated run in a fresh node (cold, as `probekit run` is). */
function emulateInChild(argv: readonly string[], env: readonly string[]): EmulatedRun {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, `${here}dynamic.ts`, 'emulate', JSON.stringify(argv), JSON.stringify(env)],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  )
  if (child.status !== 0) throw new Error(`emulated ${argv.join(' ')} failed: ${child.stderr}`)
  return JSON.parse(child.stdout) as EmulatedRun
}

const envObject = (env: readonly string[]) =>
  Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]))

/** Wall milliseconds of one spawn of argv, checked to succeed. */
function wall(argv: readonly string[], env: readonly string[]): number {
  const t0 = performance.now()
  const r = spawnSync(argv[0], argv.slice(1), { env: envObject(env), stdio: ['ignore', 'pipe', 'pipe'] })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}`)
  return ms
}

/**
 * ld.so's LD_DEBUG=statistics report. Cycle counts are as printed times 10:
 * glibc 2.36's ld.so prints them with the last digit dropped (natively too:
 * in gdb, a total of 494519655 cycles in rax printed as 49451965), which the
 * percentages, computed from the real values, are not.
 */
export interface LdStatistics {
  startupCycles: number
  relocationCycles: number
  relocationPercent: number
  relocations: number
  relocationsFromCache: number
  relativeRelocations: number
  loadCycles: number
  loadPercent: number
}

export function parseLdStatistics(text: string): LdStatistics | null {
  const num = (re: RegExp) => {
    const m = re.exec(text)
    return m ? Number(m[1]) : Number.NaN
  }
  const s: LdStatistics = {
    startupCycles: 10 * num(/total startup time in dynamic loader: (\d+) cycles/),
    relocationCycles: 10 * num(/time needed for relocation: (\d+) cycles/),
    relocationPercent: num(/time needed for relocation: \d+ cycles \(([\d.]+)%\)/),
    relocations: num(/\s number of relocations: (\d+)/),
    relocationsFromCache: num(/\s number of relocations from cache: (\d+)/),
    relativeRelocations: num(/number of relative relocations: (\d+)/),
    loadCycles: 10 * num(/time needed to load objects: (\d+) cycles/),
    loadPercent: num(/time needed to load objects: \d+ cycles \(([\d.]+)%\)/),
  }
  return Object.values(s).some(Number.isNaN) ? null : s
}

function nativeLdStatistics(argv: readonly string[], env: readonly string[]): LdStatistics | null {
  const r = spawnSync(argv[0], argv.slice(1), { env: envObject(env), encoding: 'utf8' })
  return parseLdStatistics(r.stderr)
}

const size = (p: string) => statSync(p).size
const KiB = 1024

/** The figures, as rows for the kernel's bench table. */
export async function dynamicFigures(): Promise<BenchResult[]> {
  const missing = [LDSO, ...CASES.map((c) => c.argv[0])].filter((p) => !existsSync(p))
  if (process.platform !== 'linux' || process.arch !== 'x64' || missing.length > 0) {
    process.stderr.write(
      `kernel bench: dynamic start-up needs x86-64 Linux with ${missing.join(', ') || 'its programs'}: skipped\n`,
    )
    return []
  }
  const rows: { name: string; unit: string; value: number }[] = []
  const row = (name: string, unit: string, value: number) =>
    rows.push({ name: `start-up: ${name}`, unit, value })

  // Sizes: the program file, and for a dynamic one with its libraries and ld.so (what gets mapped).
  const libs = (p: string): string[] => {
    const r = spawnSync(LDSO, ['--list', p], { encoding: 'utf8' })
    return [...r.stdout.matchAll(/=> (\/\S+)/g)].map((m) => m[1])
  }
  for (const c of CASES) {
    row(`${c.name}: ${c.argv[0]} size`, 'KiB', size(c.argv[0]) / KiB)
    if (c.peer !== null)
      row(
        `${c.name}: with its libraries and ld.so`,
        'KiB',
        [c.argv[0], ...libs(c.argv[0]), LDSO].reduce((n, p) => n + size(p), 0) / KiB,
      )
  }

  // (a) End to end, interleaved: probekit --version (node and tsx, no guest), probekit run of the
  // static hello fixture (plus the kernel's boot and a 20 k-instruction program), then each case under
  // probekit and natively.
  const hello = `${here}../fixtures/bin/hello`
  const floors = { version: [] as number[], hello: [] as number[] }
  const e2e = new Map(CASES.map((c) => [c.name, { probekit: [] as number[], native: [] as number[] }]))
  wall([process.execPath, CLI, '--version'], ENV) // warm the file cache
  for (let i = 0; i < E2E_RUNS; i++) {
    floors.version.push(wall([process.execPath, CLI, '--version'], ENV))
    floors.hello.push(wall([process.execPath, CLI, 'run', hello], ENV))
    for (const c of CASES) {
      const e = e2e.get(c.name)!
      e.probekit.push(wall([process.execPath, CLI, 'run', ...c.argv], ENV))
      e.native.push(wall(c.argv, ENV))
    }
  }
  row('probekit --version (node + tsx, no kernel): wall', 'ms', median(floors.version))
  row('probekit run hello (static fixture, 36 KiB): wall', 'ms', median(floors.hello))
  for (const c of CASES) {
    const e = e2e.get(c.name)!
    row(`${c.name}: probekit run, wall (median of ${E2E_RUNS})`, 'ms', median(e.probekit))
    row(`${c.name}: native, wall (spawned from node)`, 'ms', median(e.native))
  }

  // (b) Guest instructions and the emulated run's host time, each run in a fresh process.
  const runs = new Map<string, EmulatedRun[]>()
  for (let i = 0; i < CHILD_RUNS; i++)
    for (const c of CASES) {
      const list = runs.get(c.name) ?? []
      list.push(emulateInChild(c.argv, ENV))
      runs.set(c.name, list)
    }
  const emu = (name: string) => {
    const list = runs.get(name)!
    const insns = list.map((r) => r.instructions)
    if (new Set(insns).size !== 1)
      process.stderr.write(`kernel bench: ${name}: instruction counts vary: ${insns}\n`)
    return {
      instructions: median(insns),
      toEntry: list[0].toEntry,
      ms: median(list.map((r) => r.ms)),
      msToEntry: list[0].msToEntry === null ? null : median(list.map((r) => r.msToEntry ?? 0)),
      status: list[0].status,
    }
  }
  for (const c of CASES) {
    const e = emu(c.name)
    if (e.status !== 0) throw new Error(`${c.name} exited with ${e.status} under the kernel`)
    row(`${c.name}: guest instructions, whole run`, 'M insns', e.instructions / 1e6)
    row(`${c.name}: emulated run's host time (fresh process, kernel.run only)`, 'ms', e.ms)
    if (e.toEntry !== null && e.msToEntry !== null) {
      row(`${c.name}: guest instructions, exec to AT_ENTRY (ld.so)`, 'M insns', e.toEntry / 1e6)
      row(`${c.name}: exec to AT_ENTRY / whole run (instructions)`, '%', (100 * e.toEntry) / e.instructions)
      row(`${c.name}: host time, exec to AT_ENTRY`, 'ms', e.msToEntry)
    }
  }
  // ls binds lazily; LD_BIND_NOW=1 moves every PLT relocation before AT_ENTRY.
  const ls = CASES[0]
  const bindNow = emulateInChild(ls.argv, [...ENV, 'LD_BIND_NOW=1'])
  if (bindNow.toEntry !== null)
    row(
      `${ls.name}: guest instructions, exec to AT_ENTRY with LD_BIND_NOW=1`,
      'M insns',
      bindNow.toEntry / 1e6,
    )
  // ld.so's own account, natively and emulated (emulated cycles are guest cycles: instructions plus
  // charged events, so the emulated relocation time is close to its guest instructions).
  for (const c of CASES.filter((x) => x.peer !== null)) {
    for (const bind of c === ls ? [[], ['LD_BIND_NOW=1']] : [[]]) {
      const env = [...ENV, 'LD_DEBUG=statistics', ...bind]
      const label = `${c.name}${bind.length > 0 ? ' (LD_BIND_NOW=1)' : ''}: LD_DEBUG=statistics`
      const nat = nativeLdStatistics(c.argv, env)
      const em = parseLdStatistics(emulateInChild(c.argv, env).stderr)
      if (nat === null || em === null) {
        process.stderr.write(
          `kernel bench: ${label}: no statistics (native ${nat !== null}, emulated ${em !== null})\n`,
        )
        continue
      }
      for (const [key, unit] of [
        ['relocations', 'count'],
        ['relativeRelocations', 'count'],
        ['startupCycles', 'k cycles'],
        ['relocationCycles', 'k cycles'],
        ['relocationPercent', '%'],
        ['loadPercent', '%'],
      ] as const) {
        const scale = unit === 'k cycles' ? 1e-3 : 1
        row(`${label}: ${key}, native`, unit, nat[key] * scale)
        row(`${label}: ${key}, emulated`, unit, em[key] * scale)
      }
    }
  }

  // (c) Dynamic / static, against the bar of 3.
  for (const c of CASES.filter((x) => x.peer !== null)) {
    const peer = c.peer!
    const d = emu(c.name)
    const s = emu(peer)
    row(
      `${c.name} / ${peer}: end-to-end wall`,
      'ratio',
      median(e2e.get(c.name)!.probekit) / median(e2e.get(peer)!.probekit),
    )
    row(`${c.name} / ${peer}: emulated run's host time`, 'ratio', d.ms / s.ms)
    row(`${c.name} / ${peer}: guest instructions`, 'ratio', d.instructions / s.instructions)
    row(
      `${c.name} / ${peer}: native wall`,
      'ratio',
      median(e2e.get(c.name)!.native) / median(e2e.get(peer)!.native),
    )
  }
  return runBenchmarks(rows.map((r) => ({ name: r.name, unit: r.unit, run: () => r.value })))
}

const self = process.argv[1] === fileURLToPath(import.meta.url)
if (self && process.argv[2] === 'emulate') {
  const r = emulate(JSON.parse(process.argv[3]) as string[], JSON.parse(process.argv[4]) as string[])
  process.stdout.write(`${JSON.stringify(r)}\n`)
} else if (self) {
  report(await dynamicFigures())
}
