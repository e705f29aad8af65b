// The scheduler's costs (issue: tasks that sleep in the guest kernel): a
// syscall that never sleeps (getpid in a loop) and a pipe ping-pong between
// two processes (each side sleeps in read until the other writes, so every
// round trip is two sleeps, two wake-ups and two task switches), in host
// microseconds and guest instructions per iteration, on one vCPU. Run as
// `tsx bench/sched.ts` (prints JSON lines); bench/index.ts reports it.

import { readFileSync } from 'node:fs'
import { Kernel } from '../src/index.js'

const image = new Uint8Array(readFileSync(new URL('../guest/vmlinux', import.meta.url)))
const program = new Uint8Array(readFileSync(new URL('../fixtures/bin/pingpong', import.meta.url)))

export interface SchedFigure {
  name: string
  usPerIteration: number
  instructionsPerIteration: number
}

function once(mode: string, n: number): { ms: number; instructions: number } {
  const kernel = new Kernel({ image, cpus: 1 })
  kernel.vfs.writeFile('/bin/pingpong', program)
  kernel.boot()
  const before = kernel.machine.totalInstructions()
  kernel.spawn('/bin/pingpong', ['pingpong', mode, String(n)])
  const t0 = performance.now()
  const { exit, result } = kernel.run(5_000_000_000)
  const ms = performance.now() - t0
  if (exit?.status !== 0) throw new Error(`pingpong ${mode} failed: ${result.detail}`)
  return { ms, instructions: kernel.machine.totalInstructions() - before }
}

/** Per iteration: the difference between a long and a short run (start-up and exit cancel out), median of 3. */
export function schedFigures(): SchedFigure[] {
  const out: SchedFigure[] = []
  for (const [mode, small, large] of [
    ['getpid', 2_000, 40_000],
    ['pipe', 200, 4_000],
  ] as const) {
    once(mode, small) // warm-up
    const samples: { us: number; insns: number }[] = []
    for (let i = 0; i < 3; i++) {
      const a = once(mode, small)
      const b = once(mode, large)
      samples.push({
        us: ((b.ms - a.ms) * 1000) / (large - small),
        insns: (b.instructions - a.instructions) / (large - small),
      })
    }
    samples.sort((x, y) => x.us - y.us)
    out.push({
      name: mode === 'getpid' ? 'getpid (no sleep)' : 'pipe ping-pong round trip',
      usPerIteration: samples[1].us,
      instructionsPerIteration: samples[1].insns,
    })
  }
  return out
}

if (import.meta.url === `file://${process.argv[1]}`)
  for (const f of schedFigures()) console.log(JSON.stringify(f))
