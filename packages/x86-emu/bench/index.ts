// x86-emu benchmarks: emulated MIPS (guest instructions per host second) on
// integer and floating-point workloads built from C (native/workloads), run
// under the bare vmcall ABI, and the emulator's resident memory against the
// guest's own (memory.ts). `pnpm bench` prints a table; `pnpm bench --json`
// JSON lines.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { measure, report, runBenchmarks } from '@probekit/bench'
import { tryDecode } from '../src/index.js'
import { patchGlobal32, readElf } from '../test/support/elf.js'
import type { MemoryFigures } from './memory.js'
import type { Mips } from './mips.js'
import { haveQemuUser, haveUnicorn, type PeerRun, qemuUserRun, unicornRun } from './peers.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const workloadPath = (name: string) => `${here}../native/workloads/${name}-bare`
const workload = (name: string) => readFileSync(workloadPath(name))

const measured = new Map<string, Mips>()
/**
 * MIPS of a workload in a fresh process (bench/mips.ts), cold and warm (see
 * there); one child per workload and mode, both figures from it. intmix runs
 * 60 iterations (~108 M guest instructions; 240 for one long cold run, where
 * warm-up weighs as it does on a long program), fpmix 60 (~34 M); selfcheck
 * as built.
 */
function mips(name: string, iterations = 0, jitThreshold: number | 'default' = 'default', runs = 3): Mips {
  const key = `${name} ${iterations} ${jitThreshold} ${runs}`
  let m = measured.get(key)
  if (m === undefined) {
    const child = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        `${here}mips.ts`,
        workloadPath(name),
        String(iterations),
        String(jitThreshold),
        String(runs),
      ],
      { encoding: 'utf8' },
    )
    if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`)
    m = JSON.parse(child.stdout) as Mips
    measured.set(key, m)
  }
  return m
}

/** Decoder throughput: a linear sweep over the workload's executable segment. */
function decodeNsPerInstruction(): number {
  const text = readElf(workload('intmix')).segments.find((s) => s.flags.x)!
  let count = 0
  const sweep = () => {
    count = 0
    for (let off = 0; off < text.data.length; ) {
      const r = tryDecode(text.data, text.vaddr + off, off)
      off += r instanceof Error ? 1 : r.length
      count++
    }
  }
  const ms = measure(sweep, { warmup: 20, samples: 15 })
  return (ms * 1e6) / count
}

let memory: MemoryFigures | null = null
/** Memory figures of intmix (10 iterations), measured once in a fresh process. */
function intmixMemory(): MemoryFigures {
  if (memory === null) {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, `${here}memory.ts`, `${here}../native/workloads/intmix-bare`, '10'],
      { encoding: 'utf8' },
    )
    if (child.status !== 0) throw new Error(`memory benchmark failed: ${child.stderr}`)
    memory = JSON.parse(child.stdout) as MemoryFigures
  }
  return memory
}
const MiB = 1024 * 1024

/**
 * The issue-16 comparison: the emulator (warm, as in mips()), Unicorn on the
 * same bare bytes and qemu-user on the native build, one workload at a time
 * so each ratio comes from neighbouring measurements. calls: 10 M iterations
 * of 8 instructions; crcloop: 64 refills and CRCs of 64 KiB (about 9.5
 * instructions a byte); fpmix: 60 iterations.
 */
const PEER_WORKLOADS = [
  { name: 'calls', iterations: 10_000_000, what: 'call-heavy loop' },
  { name: 'crcloop', iterations: 64, what: 'xorshift refill + CRC-32' },
  { name: 'fpmix', iterations: 60, what: 'SSE2 doubles' },
] as const
const peerRuns = new Map<string, { unicorn?: PeerRun; qemu?: PeerRun }>()
function peers(name: string, iterations: number): { unicorn?: PeerRun; qemu?: PeerRun } {
  let p = peerRuns.get(name)
  if (p === undefined) {
    p = {}
    if (haveUnicorn) p.unicorn = unicornRun(patchGlobal32(workload(name), 'iterations', iterations))
    if (haveQemuUser) p.qemu = qemuUserRun(`${here}../native/workloads/${name}-native`, iterations)
    if (p.unicorn && p.qemu && p.unicorn.stdout !== p.qemu.stdout)
      throw new Error(`${name}: Unicorn and qemu-user printed different output`)
    peerRuns.set(name, p)
  }
  return p
}
const peerBenchmarks = PEER_WORKLOADS.flatMap(({ name, iterations, what }) => {
  const emulated = () => mips(name, iterations)
  const peerMips = (run: PeerRun | undefined) => emulated().instructions / run!.ms / 1000
  return [
    { name: `${name} (${what}): probekit, warm`, unit: 'MIPS', run: () => emulated().warm },
    ...(haveUnicorn
      ? [
          {
            name: `${name} (${what}): Unicorn, same bytes`,
            unit: 'MIPS',
            run: () => peerMips(peers(name, iterations).unicorn),
          },
          {
            name: `${name} (${what}): probekit / Unicorn`,
            unit: 'ratio',
            run: () => emulated().warm / peerMips(peers(name, iterations).unicorn),
          },
        ]
      : []),
    ...(haveQemuUser
      ? [
          {
            name: `${name} (${what}): qemu-user, native build`,
            unit: 'MIPS',
            run: () => peerMips(peers(name, iterations).qemu),
          },
        ]
      : []),
  ]
})
if (!haveUnicorn)
  console.error('[bench] Unicorn not found (apt-get install python3-unicorn): no Unicorn figures')
if (!haveQemuUser)
  console.error('[bench] qemu-x86_64 not found (apt-get install qemu-user): no qemu-user figures')

const results = await runBenchmarks([
  ...peerBenchmarks,
  { name: 'decode: intmix text, linear sweep', unit: 'ns/insn', run: decodeNsPerInstruction },
  {
    name: 'intmix (crc, sort, hash): block compiler, warm',
    unit: 'MIPS',
    run: () => mips('intmix', 60).warm,
  },
  {
    name: 'intmix (crc, sort, hash): block compiler, cold',
    unit: 'MIPS',
    run: () => mips('intmix', 60).cold,
  },
  {
    name: 'intmix x240 (430 M insns): block compiler, cold',
    unit: 'MIPS',
    run: () => mips('intmix', 240, 'default', 0).cold,
  },
  {
    name: 'intmix (crc, sort, hash): interpreter only, warm',
    unit: 'MIPS',
    run: () => mips('intmix', 60, Number.POSITIVE_INFINITY).warm,
  },
  {
    name: 'selfcheck (division, bit scans, rep strings), warm',
    unit: 'MIPS',
    run: () => mips('selfcheck').warm,
  },
  {
    name: 'fpmix (SSE2 -O3, vectorised doubles): block compiler, warm',
    unit: 'MIPS',
    run: () => mips('fpmix', 60).warm,
  },
  {
    name: 'fpmix (SSE2 -O3, vectorised doubles): block compiler, cold',
    unit: 'MIPS',
    run: () => mips('fpmix', 60).cold,
  },
  { name: 'intmix memory: guest pages touched', unit: 'MiB', run: () => intmixMemory().guestTouched / MiB },
  { name: 'intmix memory: host RSS growth', unit: 'MiB', run: () => intmixMemory().rss / MiB },
  { name: 'intmix memory: host V8 heap growth', unit: 'MiB', run: () => intmixMemory().heap / MiB },
  {
    name: 'intmix memory: RSS growth / guest touched',
    unit: 'ratio',
    run: () => intmixMemory().rss / intmixMemory().guestTouched,
  },
])
report(results)
