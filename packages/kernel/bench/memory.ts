// Memory benchmark: the emulator process running a program under the
// kernel, against the guest's own memory use, each case in a fresh process
// (this file run with `--case NAME` prints the figures as JSON, so nothing
// an earlier case grew is already resident), and issue 16's goal checked
// per case: RSS growth at most 16 MiB plus 1.5 times the guest's pages.
//
// Host side: deltas of process.memoryUsage() from before the Kernel exists to
// the guest's exit (both after a full GC, the kernel still alive), and the
// process's peak resident set (getrusage maxRSS) in absolute terms. Guest
// side: the most user pages its processes had mapped at once, each frame
// counted once however many processes map it (fork's copy-on-write, the page
// cache), plus the page-table frames of their user halves, counted before
// every unmap and before exit or exec frees them. Demand paging maps a page
// only when the guest touches it, so these are the pages it touched.
//
//   tsx --conditions=@probekit/source bench/memory.ts   every case, the goal's table
//   ... bench/memory.ts --case NAME [--code-cache BYTES] one case, JSON

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchResult, runBenchmarks, settledMemory } from '@probekit/bench'
import { Kernel, Mm } from '../src/index.js'
import { nodeHostDirectory } from '../test/support/host-directory.js'

const MiB = 1024 * 1024
const here = fileURLToPath(new URL('.', import.meta.url))
const fixtureBin = fileURLToPath(new URL('../fixtures/bin', import.meta.url))
const scripts = fileURLToPath(new URL('../test/bash', import.meta.url))
const BASH = '/bin/bash-static'

/** A program run for the memory figures. */
export interface MemoryCase {
  name: string
  /** The program on the host; it is written to `path` in the guest (default /bin/prog). */
  program: string
  path?: string
  args: string[]
  env?: string[]
  /** Host directories visible at the same path in the guest (read-only). */
  mounts?: string[]
  /** Guest physical memory (default 256 MiB). */
  memorySize?: number
  /** What it is, for the table. */
  size: 'fixed cost' | 'small' | 'medium' | 'large' | 'code cache'
}

const fixture = (name: string) => `${fixtureBin}/${name}`
const bashCase = (script: string): MemoryCase => ({
  name: `bash-static ${script}`,
  program: BASH,
  path: BASH,
  args: [`${scripts}/${script}`],
  env: [`PATH=${fixtureBin}`, 'WORK=/tmp', 'LC_ALL=C'],
  mounts: [fixtureBin, scripts],
  size: 'medium',
})

export const MEMORY_CASES: readonly MemoryCase[] = [
  // hello shows the fixed cost: a program of 20 k instructions and 36 KiB.
  { name: 'hello', program: fixture('hello'), args: [], size: 'fixed cost' },
  { name: 'compute', program: fixture('compute'), args: [], size: 'small' },
  bashCase('loops.sh'),
  bashCase('pipelines.sh'),
  { name: 'bigmem 32', program: fixture('bigmem'), args: ['32'], size: 'large' },
  { name: 'bigmem 256', program: fixture('bigmem'), args: ['256'], memorySize: 512 * MiB, size: 'large' },
  // A million distinct instructions, each run once; then each run 40 times, so every block is compiled.
  { name: 'jitgen', program: fixture('jitgen'), args: [], size: 'code cache' },
  { name: 'jitgen 40', program: fixture('jitgen'), args: ['40'], size: 'code cache' },
]

export interface KernelMemoryFigures {
  /** Resident set growth from before the kernel to the guest's exit, bytes. */
  rss: number
  heap: number
  arrayBuffers: number
  /** Resident set of the process before the kernel existed (Node, modules), bytes. */
  baseRss: number
  /** Peak resident set of the whole emulator process, bytes. */
  maxRss: number
  /** The most user pages (distinct frames) plus their page tables the guest's processes had at once, bytes. */
  guestMapped: number
  instructions: number
  /** The code cache's estimate of what it held at the end, its budget, and how often it was emptied. */
  codeCacheBytes: number
  codeCacheBudget: number
  codeCacheFlushes: number
}

/** User pages (distinct frames) and their page tables of every live process, bytes. */
function guestPages(kernel: Kernel): number {
  const frames = new Set<number>()
  const tables = new Set<number>()
  const seen = new Set<Mm>()
  for (const task of kernel.tasks.values()) {
    const mm = task.mm
    // users 0: released, its tables freed.
    if (seen.has(mm) || mm.users <= 0) continue
    seen.add(mm)
    mm.space.forEachMapping((_va, m) => {
      frames.add(m.frame)
      tables.add(Math.floor(m.ptePhys / 4096))
    })
  }
  return (frames.size + tables.size) * 4096
}

/**
 * process.memoryUsage() after full GCs, once what they freed has left the
 * resident set: V8 gives freed heap pages back from a background thread,
 * which takes some milliseconds (measured at once, the growth read up to
 * 40 MiB more on a run that had emptied its code cache).
 */
async function settledUsage(): Promise<NodeJS.MemoryUsage> {
  settledMemory()
  await new Promise((resolve) => setTimeout(resolve, 250))
  return settledMemory()
}

/** Run a case to its exit under a fresh kernel and measure. */
export async function measureKernelMemory(
  c: MemoryCase,
  image: Uint8Array,
  codeCacheSize?: number,
): Promise<KernelMemoryFigures> {
  const program = new Uint8Array(readFileSync(c.program))
  const before = await settledUsage()
  let out = ''
  const kernel = new Kernel({
    image,
    memorySize: c.memorySize ?? 256 * MiB,
    stdout: (d) => {
      out += new TextDecoder().decode(d)
    },
  })
  const cache = kernel.machine.codeCache
  if (codeCacheSize !== undefined) cache.budget = codeCacheSize
  const path = c.path ?? '/bin/prog'
  kernel.vfs.writeFile(path, program)
  for (const dir of c.mounts ?? []) kernel.vfs.mountHost(dir, nodeHostDirectory(dir))
  kernel.boot()
  kernel.spawn(path, [path, ...c.args], c.env ?? [])
  // The peak: counted before every unmap (munmap, brk shrinking, exit, exec), since pages may be given back.
  let guestMapped = 0
  const count = () => {
    guestMapped = Math.max(guestMapped, guestPages(kernel))
  }
  const { release, unmapRange } = Mm.prototype
  Mm.prototype.release = function (this: Mm) {
    count()
    release.call(this)
  }
  Mm.prototype.unmapRange = function (this: Mm, start: number, end: number) {
    count()
    unmapRange.call(this, start, end)
  }
  try {
    const { exit, result } = kernel.run(50_000_000_000)
    if (exit?.status !== 0 || out === '') throw new Error(`${c.name} did not exit cleanly: ${result.detail}`)
  } finally {
    Mm.prototype.release = release
    Mm.prototype.unmapRange = unmapRange
  }
  const after = await settledUsage()
  return {
    rss: after.rss - before.rss,
    baseRss: before.rss,
    heap: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    maxRss: process.resourceUsage().maxRSS * 1024,
    guestMapped,
    instructions: kernel.machine.totalInstructions(),
    codeCacheBytes: cache.bytes,
    codeCacheBudget: cache.budget,
    codeCacheFlushes: cache.flushes,
  }
}

/** Issue 16's memory goal: RSS growth at most 16 MiB fixed plus 1.5 times the guest's touched pages. */
export const goalBound = (f: KernelMemoryFigures): number => 16 * MiB + 1.5 * f.guestMapped

/**
 * The node flags the probekit command runs the emulator with
 * (packages/cli/bin/probekit.js): V8's young generation capped at 4 MiB per
 * semi-space instead of growing to 16; and no compilation cache: V8 keeps
 * every `new Function` source it compiled there, with its bytecode and
 * baseline code, for as long as the function's code is not flushed, which
 * Sparkplug's code never is, so each block function the code cache dropped
 * stayed (5 MiB on bash-static loops.sh; the block compiler has a cache of
 * its own).
 */
export const PROBEKIT_NODE_FLAGS = ['--max-semi-space-size=4', '--no-compilation-cache']

/**
 * And its environment: glibc's malloc gives each thread an arena of its
 * own, and V8's background compiler threads leave theirs fragmented and
 * resident (5-10 MiB of growth); two arenas in all keep that down.
 */
export const PROBEKIT_ENV = { MALLOC_ARENA_MAX: '2' }

/** Whether a case can run here (bash-static is Debian's package, not ours). */
export const runnable = (c: MemoryCase): boolean => existsSync(c.program)

/** A case's figures under the emulator, in a fresh process (as probekit runs, or with node's defaults). */
export function emulatedMemory(
  c: MemoryCase,
  probekit: boolean,
  codeCacheSize?: number,
): KernelMemoryFigures {
  const extra = codeCacheSize === undefined ? [] : ['--code-cache', String(codeCacheSize)]
  const child = spawnSync(
    process.execPath,
    [
      ...(probekit ? PROBEKIT_NODE_FLAGS : []),
      ...process.execArgv,
      `${here}memory.ts`,
      '--case',
      c.name,
      ...extra,
    ],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
      env: probekit ? { ...process.env, ...PROBEKIT_ENV } : process.env,
    },
  )
  if (child.status !== 0) throw new Error(`memory benchmark of ${c.name} failed: ${child.stderr}`)
  return JSON.parse(child.stdout) as KernelMemoryFigures
}

/**
 * Peak RSS (bytes) of native runs of the cases, through maxrss.c built
 * here; null (with a message) where no compiler or not x86-64 Linux.
 */
export function nativeMaxRss(cases: readonly MemoryCase[]): Map<string, number> | null {
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
    for (const c of cases) {
      const env = Object.fromEntries((c.env ?? []).map((e) => e.split(/=(.*)/s).slice(0, 2)))
      const r = spawnSync(exe, [c.program, ...c.args], {
        encoding: 'utf8',
        env,
        cwd: '/',
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      if (r.status !== 0) throw new Error(`native ${c.name} failed: ${r.stderr}`)
      out.set(c.name, Number(r.stderr.trim().split('\n').pop()) * 1024)
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The kernel bench's memory rows: each case as probekit runs it, the
 * original three also with node's defaults (V8 grows the young generation
 * to 16 MiB per semi-space while the code cache is being built), the goal's
 * bound and whether the growth is within it.
 */
export async function memoryBenchmarks(): Promise<BenchResult[]> {
  const cases = MEMORY_CASES.filter((c) => {
    if (runnable(c)) return true
    process.stderr.write(`kernel bench: ${c.program} is not installed: memory of ${c.name} skipped\n`)
    return false
  })
  const native = nativeMaxRss(cases)
  const results: BenchResult[] = []
  for (const c of cases) {
    const m = emulatedMemory(c, true)
    const rows = [
      {
        name: `${c.name} memory: guest pages touched (peak, with page tables)`,
        unit: 'MiB',
        run: () => m.guestMapped / MiB,
      },
      {
        name: `${c.name} memory: emulator RSS growth (probekit's node flags)`,
        unit: 'MiB',
        run: () => m.rss / MiB,
      },
      {
        name: `${c.name} memory: goal bound (16 MiB + 1.5 x guest pages)`,
        unit: 'MiB',
        run: () => goalBound(m) / MiB,
      },
      {
        name: `${c.name} memory: within the goal`,
        unit: '1 = yes',
        run: () => (m.rss <= goalBound(m) ? 1 : 0),
      },
      { name: `${c.name} memory: emulator V8 heap growth`, unit: 'MiB', run: () => m.heap / MiB },
      { name: `${c.name} memory: emulator peak RSS (whole process)`, unit: 'MiB', run: () => m.maxRss / MiB },
      { name: `${c.name} memory: code cache flushes`, unit: 'flushes', run: () => m.codeCacheFlushes },
      {
        name: `${c.name} memory: RSS growth (probekit) / guest pages touched`,
        unit: 'ratio',
        run: () => m.rss / m.guestMapped,
      },
    ]
    if (c.name === 'hello' || c.name === 'compute' || c.name === 'bigmem 32') {
      const d = emulatedMemory(c, false)
      rows.push({
        name: `${c.name} memory: emulator RSS growth (node defaults)`,
        unit: 'MiB',
        run: () => d.rss / MiB,
      })
    }
    const nat = native?.get(c.name)
    if (nat !== undefined)
      rows.push({ name: `${c.name} memory: native peak RSS (ru_maxrss)`, unit: 'MiB', run: () => nat / MiB })
    // ru_maxrss of a tiny program can read 0 (see the README): no ratio then.
    if (nat !== undefined && nat > 0)
      rows.push({
        name: `${c.name} memory: RSS growth (probekit) / native peak RSS`,
        unit: 'ratio',
        run: () => m.rss / nat,
      })
    results.push(...(await runBenchmarks(rows)))
  }
  return results
}

/** The goal's table: one line per case, as probekit runs it. */
function goalTable(codeCacheSize?: number): boolean {
  const f = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`
  const lines = [
    '| case | size | guest pages touched | RSS growth | bound (16 MiB + 1.5 x pages) | within | V8 heap growth | peak RSS | code cache at exit | flushes | guest instructions |',
    '| ---- | ---- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  let ok = true
  process.stdout.write(`${lines.join('\n')}\n`)
  for (const c of MEMORY_CASES) {
    if (!runnable(c)) {
      process.stdout.write(`| ${c.name} | ${c.size} | (${c.program} is not installed) |\n`)
      continue
    }
    const m = emulatedMemory(c, true, codeCacheSize)
    const within = m.rss <= goalBound(m)
    ok &&= within
    const cells = [
      c.name,
      c.size,
      f(m.guestMapped),
      f(m.rss),
      f(goalBound(m)),
      within ? 'yes' : '**no**',
      f(m.heap),
      f(m.maxRss),
      f(m.codeCacheBytes),
      String(m.codeCacheFlushes),
      `${(m.instructions / 1e6).toFixed(1)} M`,
    ]
    process.stdout.write(`| ${cells.join(' | ')} |\n`)
  }
  return ok
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name)
    return i < 0 ? undefined : process.argv[i + 1]
  }
  const cacheArg = arg('--code-cache')
  const codeCacheSize = cacheArg === undefined ? undefined : Number(cacheArg)
  if (codeCacheSize !== undefined && !(codeCacheSize > 0))
    throw new Error(`--code-cache: not a size: ${cacheArg}`)
  const name = arg('--case')
  if (name !== undefined) {
    // A child: one case, figures as JSON.
    const c = MEMORY_CASES.find((x) => x.name === name)
    if (c === undefined) throw new Error(`no memory case named '${name}'`)
    const image = new Uint8Array(readFileSync(new URL('../guest/vmlinux', import.meta.url)))
    process.stdout.write(`${JSON.stringify(await measureKernelMemory(c, image, codeCacheSize))}\n`)
  } else if (!goalTable(codeCacheSize)) process.exitCode = 1
}
