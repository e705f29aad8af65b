// The emulator's peers on the same work, measured in the same bench run so
// that the ratio survives the tens-of-percent drift of a shared machine:
//
// - Unicorn 2 (QEMU's TCG as a library, Debian's python3-unicorn), on the
//   very same bytes: the bare workload, driven by bench/unicorn-peer.py.
// - qemu-user (Debian's qemu-user), on the native build of the same source.
//   Its figure includes process start-up and the C library's start, a few
//   milliseconds and a few thousand instructions that the workloads' sizes
//   make negligible; the instruction count used is the emulator's for the
//   bare build.
//
// Neither has an instruction counter that costs nothing, so each peer's MIPS
// is the emulator's instruction count for the run divided by the peer's time.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from '@probekit/bench'

/** Debian's interpreter: python3-unicorn installs into its dist-packages, not a pyenv's. */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
const QEMU = 'qemu-x86_64'
const here = new URL('.', import.meta.url).pathname

function succeeds(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0
}

export const haveUnicorn = succeeds(PYTHON, ['-c', 'import unicorn'])
export const haveQemuUser = succeeds(QEMU, ['--version'])

export interface PeerRun {
  ms: number
  status: number
  stdout: string
}

/** Runs a (patched) bare ELF under Unicorn `runs` times; the median time, with one run's output. */
export function unicornRun(elf: Uint8Array, runs = 3): PeerRun {
  const dir = mkdtempSync(join(tmpdir(), 'x86-emu-unicorn-'))
  try {
    const path = join(dir, 'workload')
    writeFileSync(path, elf)
    const samples: PeerRun[] = []
    for (let k = 0; k < runs; k++) {
      const child = spawnSync(PYTHON, [`${here}unicorn-peer.py`, path], { encoding: 'utf8' })
      if (child.status !== 0) throw new Error(`unicorn-peer.py: ${child.stderr}`)
      samples.push(JSON.parse(child.stdout) as PeerRun)
    }
    return { ...samples[0], ms: median(samples.map((s) => s.ms)) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Runs a native build under qemu-user with its iteration count as argv[1]; the median wall time. */
export function qemuUserRun(path: string, iterations: number, runs = 3): PeerRun {
  const samples: PeerRun[] = []
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now()
    const child = spawnSync(QEMU, [path, String(iterations)], { encoding: 'latin1' })
    const ms = performance.now() - t0
    if (child.error) throw child.error
    samples.push({ ms, status: child.status ?? -1, stdout: child.stdout })
  }
  return { ...samples[0], ms: median(samples.map((s) => s.ms)) }
}

/**
 * Run directly (`tsx --conditions=@probekit/source bench/peers.ts`): only the
 * issue-16 comparison, the rows the full bench starts with: per workload the
 * emulator's warm MIPS (bench/mips.ts in a child), Unicorn's and qemu-user's,
 * and the ratio to Unicorn, as one JSON line each.
 */
if (process.argv[1]?.endsWith('peers.ts')) {
  const { readFileSync } = await import('node:fs')
  const { patchGlobal32 } = await import('../test/support/elf.js')
  const workloads = [
    ['calls', 10_000_000],
    ['crcloop', 64],
    ['fpmix', 60],
  ] as const
  for (const [name, iterations] of workloads) {
    const path = `${here}../native/workloads/${name}-bare`
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, `${here}mips.ts`, path, String(iterations), 'default', '3'],
      { encoding: 'utf8' },
    )
    if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`)
    const emu = JSON.parse(child.stdout) as { warm: number; instructions: number }
    const mips = (run: PeerRun) => emu.instructions / run.ms / 1000
    const row: Record<string, number | string> = { workload: name, probekit: emu.warm }
    if (haveUnicorn) {
      const u = mips(unicornRun(patchGlobal32(new Uint8Array(readFileSync(path)), 'iterations', iterations)))
      row.unicorn = u
      row.ratio = emu.warm / u
    }
    if (haveQemuUser)
      row.qemuUser = mips(qemuUserRun(`${here}../native/workloads/${name}-native`, iterations))
    for (const k of Object.keys(row))
      if (typeof row[k] === 'number') row[k] = Math.round((row[k] as number) * 100) / 100
    process.stdout.write(`${JSON.stringify(row)}\n`)
  }
}
