// Start-up of `probekit run` (issue 16, goal 4: boot, load and first instruction under 150 ms):
// `probekit run hello` (the kernel package's static hello: 20 k guest instructions, most of them
// the guest kernel's boot) spawned as a user runs it, against `node -e 0` (node's own start, paid
// twice: bin/probekit.js starts a child node), three ways side by side: the bundle
// (bin/bundle.js, the default in a checkout), the sources through tsx (PROBEKIT_BUNDLE=0, how
// every run went before), and, when a base worktree is there (the kernel README, Benchmarks), the
// code issue 16 was filed on. Interleaved, RUNS times; medians of wall-clock time and of CPU time
// (user + system of the whole command, from /usr/bin/time), which is what to read on a shared
// machine.
//
//   tsx --conditions=@probekit/source bench/startup.ts [--base DIR] [--json]

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchResult, median } from '@probekit/bench'

const RUNS = 9
const TIME = '/usr/bin/time'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const hello = fileURLToPath(new URL('../../kernel/fixtures/bin/hello', import.meta.url))

interface Timing {
  wallMs: number
  /** user + system, or NaN without /usr/bin/time. */
  cpuMs: number
}

function timed(argv: string[], env: NodeJS.ProcessEnv): Timing {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-startup-'))
  try {
    const out = join(dir, 'time')
    const withTime = existsSync(TIME) ? [TIME, '-f', '%U %S', '-o', out, ...argv] : argv
    const t0 = process.hrtime.bigint()
    const r = spawnSync(withTime[0], withTime.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env })
    const wallMs = Number(process.hrtime.bigint() - t0) / 1e6
    if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status}: ${r.stderr}`)
    const [user, sys] = existsSync(out) ? readFileSync(out, 'utf8').trim().split(/\s+/).map(Number) : []
    return { wallMs, cpuMs: user === undefined ? Number.NaN : (user + sys) * 1000 }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The start-up figures; `base` is a worktree of the code issue 16 was filed on, if there is one. */
export function startupFigures(base = '/tmp/wt-base'): BenchResult[] {
  const env = { ...process.env, NO_COLOR: '1' }
  const baseBin = join(base, 'packages/cli/bin/probekit.js')
  const variants: Record<string, { argv: string[]; env: NodeJS.ProcessEnv }> = {
    'node -e 0': { argv: [process.execPath, '-e', '0'], env },
    'probekit run hello (bundle)': { argv: [process.execPath, bin, 'run', hello], env },
    'probekit run hello (tsx)': {
      argv: [process.execPath, bin, 'run', hello],
      env: { ...env, PROBEKIT_BUNDLE: '0' },
    },
    ...(existsSync(baseBin)
      ? { 'probekit run hello (base)': { argv: [process.execPath, baseBin, 'run', hello], env } }
      : {}),
  }
  // Once each first: the bundle and its code cache are made by the first run after a change.
  for (const v of Object.values(variants)) timed(v.argv, v.env)
  const times: Record<string, Timing[]> = {}
  for (let i = 0; i < RUNS; i++)
    for (const [name, v] of Object.entries(variants)) (times[name] ??= []).push(timed(v.argv, v.env))
  return Object.entries(times).flatMap(([name, t]) => [
    { name: `start-up: ${name}: wall`, value: median(t.map((x) => x.wallMs)), unit: 'ms' },
    { name: `start-up: ${name}: CPU`, value: median(t.map((x) => x.cpuMs)), unit: 'ms' },
  ])
}
