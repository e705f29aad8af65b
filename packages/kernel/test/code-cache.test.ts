// The emulator's code cache is bounded (issue 16): a program that executes
// a million distinct instructions (fixtures/jitgen.c writes them into an
// RWX mapping and calls them) runs as it does natively while the cache
// stays within its budget, emptying itself when full; and how often it is
// emptied changes nothing the guest sees: a fixture run with a budget of a
// few dozen blocks prints the same, runs the same number of instructions
// and is charged the same cycles as with one it never fills, whole kernel
// included.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Block } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import type { Kernel } from '../src/index.js'
import { runGuest } from './support/run.js'

const fixturePath = (name: string) => fileURLToPath(new URL(`../fixtures/bin/${name}`, import.meta.url))
const fixture = (name: string) => new Uint8Array(readFileSync(fixturePath(name)))
const onHost = process.platform === 'linux' && process.arch === 'x64'

/** Run a fixture with a code cache budget (undefined: the default); what the guest can observe, and the cache's figures. */
function run(name: string, args: string[], budget: number | undefined, cpus = 1, jitThreshold?: number) {
  let peak = 0
  const r = runGuest(fixture(name), [name, ...args], {
    cpus,
    maxInstructions: 5_000_000_000,
    setup: (k: Kernel) => {
      if (jitThreshold !== undefined) k.machine.jitThreshold = jitThreshold
      const cache = k.machine.codeCache
      if (budget !== undefined) cache.budget = budget
      const insert = cache.insert.bind(cache)
      cache.insert = (b: Block) => {
        insert(b)
        peak = Math.max(peak, cache.bytes)
      }
    },
  })
  const m = r.kernel.machine
  return {
    observed: {
      stdout: r.stdout,
      stderr: r.stderr,
      status: r.status,
      instructions: m.cpus.map((c) => c.instructions),
      cycles: m.cpus.map((_c, i) => m.cycles(i)),
      counters: m.counters.map((k) => ({ ...k })),
    },
    budget: m.codeCache.budget,
    flushes: m.codeCache.flushes,
    peak,
  }
}

function native(name: string, args: string[]) {
  const r = spawnSync(fixturePath(name), args, { encoding: 'utf8' })
  return { stdout: r.stdout, stderr: r.stderr, status: r.status }
}

describe('a million distinct instructions', () => {
  it.skipIf(!onHost)(
    'jitgen prints what it prints natively, the code cache within its budget',
    { timeout: 300_000 },
    () => {
      const want = native('jitgen', [])
      expect(want.stdout).toMatch(
        /^jitgen: 1000 chunks, 1000000 distinct instructions, 1 calls each, checksum [0-9a-f]{16}\n$/,
      )
      const r = run('jitgen', [], undefined)
      expect({ stdout: r.observed.stdout, stderr: r.observed.stderr, status: r.observed.status }).toEqual(
        want,
      )
      // The million instructions are ~300 MiB decoded: the cache was emptied, and never held more than its budget.
      expect(r.flushes).toBeGreaterThan(0)
      expect(r.peak).toBeLessThanOrEqual(r.budget)
    },
  )
})

describe('the code cache budget changes nothing the guest sees', () => {
  // [fixture, arguments, budget, vCPUs, block compiler threshold]: compute (4.5 MiB of code by the
  // cache's estimate) and jitgen's compiled blocks (40 calls of 20 chunks: 20,000 instructions, each
  // block past the compile threshold) with a fraction of what they need; proctree's processes on two
  // vCPUs, interleaved by quanta, with room for a few dozen blocks (a flush changes when blocks get
  // compiled, which must not move where a quantum ends).
  const cases: [string, string[], number, number, number | undefined][] = [
    ['compute', [], 1024 * 1024, 1, undefined],
    ['jitgen', ['40', '20'], 1024 * 1024, 1, undefined],
    ['proctree', [], 64 * 1024, 2, undefined],
  ]
  for (const [name, args, budget, cpus, threshold] of cases) {
    const how = cpus > 1 ? `${cpus} vCPUs` : '1 vCPU'
    it(`${[name, ...args].join(' ')} (${how}): a ${budget / 1024} KiB budget runs it as a 1 GiB one does`, {
      timeout: 300_000,
    }, () => {
      const big = run(name, args, 1 << 30, cpus, threshold)
      const tiny = run(name, args, budget, cpus, threshold)
      expect(big.observed.status).toBe(0)
      expect(big.observed.stdout.length).toBeGreaterThan(0)
      expect(big.flushes).toBe(0)
      expect(tiny.flushes).toBeGreaterThan(3)
      expect(tiny.observed).toEqual(big.observed)
    })
  }
  it.skipIf(!onHost)('jitgen 40 20 prints what it prints natively', () => {
    const r = run('jitgen', ['40', '20'], undefined)
    expect({ stdout: r.observed.stdout, stderr: r.observed.stderr, status: r.observed.status }).toEqual(
      native('jitgen', ['40', '20']),
    )
  })
})
