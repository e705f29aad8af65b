// probekit run --strace against the same run untraced, and the real strace
// -f against the same native run, side by side in one process (absolute
// times on a shared machine drift; the ratios are what to read): Debian's
// bash-static running the kernel package's loops.sh (a pure-bash script)
// and pipelines.sh (processes and pipes). Each command is spawned as a user
// runs it, 5 times, the variants interleaved; the medians are printed.
// Then the start-up of probekit run (startup.ts).
// `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchResult, median, report } from '@probekit/bench'
import { startupFigures } from './startup.js'

const BASH = '/bin/bash-static'
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p))
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const scripts = ['loops.sh', 'pipelines.sh'].map((s) =>
  fileURLToPath(new URL(`../../kernel/test/bash/${s}`, import.meta.url)),
)
const ROUNDS = 5
const dir = mkdtempSync(join(tmpdir(), 'probekit-strace-bench-'))

function timed(argv: string[]): number {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'ignore'], cwd: dir })
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: exit ${r.status}`)
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const results: BenchResult[] = []
if (!existsSync(BASH)) console.warn(`${BASH} is not installed: nothing to measure`)
else
  for (const script of scripts) {
    const name = script.slice(script.lastIndexOf('/') + 1)
    const trace = join(dir, 'trace')
    const variants: Record<string, string[]> = {
      plain: [process.execPath, bin, 'run', BASH, script],
      strace: [process.execPath, bin, 'run', '--strace-file', trace, BASH, script],
      ...(STRACE
        ? { native: [BASH, script], nativeStrace: [STRACE, '-f', '-q', '-o', trace, BASH, script] }
        : {}),
    }
    const times: Record<string, number[]> = {}
    for (let i = 0; i < ROUNDS; i++)
      for (const [k, argv] of Object.entries(variants)) (times[k] ??= []).push(timed(argv))
    const m = (k: string) => median(times[k])
    // How many lines --strace wrote (calls, signals and exits) on the last run.
    spawnSync(process.execPath, [bin, 'run', '--strace-file', trace, BASH, script], {
      stdio: 'ignore',
      cwd: dir,
    })
    const lines = readFileSync(trace, 'utf8').split('\n').length - 1
    results.push(
      { name: `${name}: probekit run, untraced`, value: m('plain'), unit: 'ms' },
      { name: `${name}: probekit run --strace`, value: m('strace'), unit: 'ms' },
      { name: `${name}: --strace / untraced`, value: m('strace') / m('plain'), unit: 'x' },
      { name: `${name}: --strace lines`, value: lines, unit: 'lines' },
      {
        name: `${name}: --strace cost per line`,
        value: ((m('strace') - m('plain')) * 1000) / lines,
        unit: 'µs',
      },
    )
    if (STRACE)
      results.push(
        { name: `${name}: native`, value: m('native'), unit: 'ms' },
        { name: `${name}: native strace -f`, value: m('nativeStrace'), unit: 'ms' },
        { name: `${name}: strace -f / native`, value: m('nativeStrace') / m('native'), unit: 'x' },
      )
  }

// Start-up: probekit run of a static hello, against node's own start (startup.ts).
results.push(...startupFigures())

report(results, { json: process.argv.includes('--json') })
