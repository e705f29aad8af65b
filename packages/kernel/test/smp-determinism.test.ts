// Issue 17's determinism on several vCPUs: where a vCPU's quantum ends must
// depend on the guest's instructions alone, never on which blocks happen to
// be compiled. The block compiler once moved it: a compiled chain kept the
// room a soft quantum gives its last block and ran on into the next blocks,
// and a compiled loop stopped before an iteration the interpreter would
// still start, so the vCPUs interleaved differently once code was hot, and
// counts then depended on the compile threshold, the code cache budget (a
// flush delays compiling) and what ran before in the process. Every way of
// running a program here must give the same output, status, and per-vCPU
// instruction and cycle counts.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Kernel } from '../src/index.js'
import { runGuest } from './support/run.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/bin/${name}`, import.meta.url)))

interface Mode {
  name: string
  /** Block compiler threshold (undefined: the machine's default). */
  threshold?: number
  /** Code cache budget in bytes (undefined: the default). */
  cacheBytes?: number
}

const INTERPRETER: Mode = { name: 'interpreter only', threshold: Number.POSITIVE_INFINITY }
const MODES: Mode[] = [
  { name: 'everything compiled at once', threshold: 0 },
  { name: 'the default threshold' },
  // A few hundred blocks: the cache is emptied over and over, so blocks are compiled again and again.
  { name: 'a 256 KiB code cache', cacheBytes: 256 * 1024 },
]

function observe(name: string, args: string[], cpus: number, mode: Mode) {
  let flushes = 0
  const r = runGuest(fixture(name), [name, ...args], {
    cpus,
    setup: (k: Kernel) => {
      if (mode.threshold !== undefined) k.machine.jitThreshold = mode.threshold
      if (mode.cacheBytes !== undefined) k.machine.codeCache.budget = mode.cacheBytes
    },
  })
  const m = r.kernel.machine
  flushes = m.codeCache.flushes
  return {
    observed: {
      stdout: r.stdout,
      stderr: r.stderr,
      status: r.status,
      detail: r.detail,
      instructions: m.cpus.map((c) => c.instructions),
      cycles: m.cpus.map((_c, i) => m.cycles(i)),
    },
    flushes,
  }
}

describe('on several vCPUs, instruction and cycle counts do not depend on the block compiler', () => {
  const cases: [string, string[], number][] = [
    ['threads', [], 2],
    ['threads', [], 3],
    ['proctree', [], 2],
    ['proctree', [], 3],
    ['pingpong', ['pipe', '200'], 2],
  ]
  for (const [name, args, cpus] of cases) {
    it(`${[name, ...args].join(' ')} on ${cpus} vCPUs`, { timeout: 300_000 }, () => {
      const want = observe(name, args, cpus, INTERPRETER).observed
      expect(want.status).toBe(0)
      expect(want.stdout.length).toBeGreaterThan(0)
      // Every vCPU did work: the interleaving is what is being checked.
      for (const n of want.instructions) expect(n).toBeGreaterThan(10_000)
      for (const mode of MODES) {
        const got = observe(name, args, cpus, mode)
        if (mode.cacheBytes !== undefined) expect(got.flushes, mode.name).toBeGreaterThan(0)
        expect(got.observed, mode.name).toEqual(want)
      }
      // After all of that in this process (block functions are shared by every machine): the same again.
      expect(observe(name, args, cpus, { name: 'the default threshold' }).observed).toEqual(want)
      expect(observe(name, args, cpus, INTERPRETER).observed).toEqual(want)
    })
  }
})
