/// <reference types="node" />
// The code cache's budget: past it the cache is emptied (tb_flush), and
// nothing of what it dropped stays reachable, so V8 can collect it. The
// guest cannot tell: a workload prints the same, runs the same number of
// instructions and is charged the same cycles with a budget of a few
// blocks as with the default, through the interpreter and through the
// block compiler.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { type Block, blockBytes, DEFAULT_CODE_CACHE_SIZE, Machine } from '../src/index.js'
import { loadBare } from './support/bare.js'
import { NATIVE_DIR } from './support/native.js'

const bareElf = (name: string) => new Uint8Array(readFileSync(join(NATIVE_DIR, 'workloads', `${name}-bare`)))

/** Run a bare workload with a code cache budget; the figures the guest can observe, and the cache's. */
function runWorkload(name: string, budget: number | undefined, jitThreshold: number) {
  const { machine, out } = loadBare(bareElf(name))
  machine.jitThreshold = jitThreshold
  const cache = machine.codeCache
  if (budget !== undefined) cache.budget = budget
  // The most the cache held after any insertion, by its own estimate.
  let peak = 0
  const insert = cache.insert.bind(cache)
  cache.insert = (b: Block) => {
    insert(b)
    peak = Math.max(peak, cache.bytes)
  }
  const result = machine.run({ maxInstructions: 200_000_000 })
  return {
    observed: {
      stdout: out.stdout,
      exitCode: out.exitCode,
      reason: result.reason,
      instructions: machine.totalInstructions(),
      cycles: machine.cycles(0),
      counters: { ...machine.counters[0] },
      rip: machine.cpus[0].rip,
      registers: [...machine.cpus[0].r],
    },
    flushes: cache.flushes,
    peak,
  }
}

/** The largest block there is: 64 instructions, compiled. */
const LARGEST_BLOCK = blockBytes({ length: 64, jit: () => 0 } as unknown as Block)

describe('a code cache budget changes nothing the guest sees', () => {
  // selfcheck and intmix have code enough for a fifth of it to be a budget; crcloop and calls are
  // a few loops: they get 1 byte, the cache then holds one block at a time.
  for (const [name, fraction] of [
    ['selfcheck', 5],
    ['intmix', 5],
    ['crcloop', Number.POSITIVE_INFINITY],
    ['calls', Number.POSITIVE_INFINITY],
  ] as const) {
    for (const [path, threshold] of [
      ['interpreter', Number.POSITIVE_INFINITY],
      ['block compiler (threshold 2)', 2],
    ] as const) {
      const what = Number.isFinite(fraction) ? `a 1/${fraction} budget` : 'a 1-byte budget'
      it(`${name}, ${path}: ${what} runs it as the default does`, () => {
        const big = runWorkload(name, undefined, threshold)
        expect(big.observed.exitCode).not.toBeNull()
        expect(big.observed.stdout.length).toBeGreaterThan(0)
        // The default holds the whole program: never emptied.
        expect(big.flushes).toBe(0)
        const budget = Math.max(1, Math.floor(big.peak / fraction))
        const tiny = runWorkload(name, budget, threshold)
        // Emptied again and again, never holding more than its budget (or one block, which is cached alone).
        expect(tiny.flushes).toBeGreaterThan(3)
        expect(tiny.peak).toBeLessThanOrEqual(Math.max(budget, LARGEST_BLOCK))
        expect(tiny.observed).toEqual(big.observed)
      })
    }
  }
})

describe('the budget', () => {
  it('is the machine option codeCacheSize, 8 MiB by default', () => {
    expect(new Machine({ memorySize: 1 << 20 }).codeCache.budget).toBe(DEFAULT_CODE_CACHE_SIZE)
    expect(DEFAULT_CODE_CACHE_SIZE).toBe(8 * 1024 * 1024)
    expect(new Machine({ memorySize: 1 << 20, codeCacheSize: 12345 }).codeCache.budget).toBe(12345)
  })

  it('must be a positive number of bytes', () => {
    for (const bad of [0, -1, Number.NaN])
      expect(() => new Machine({ memorySize: 1 << 20, codeCacheSize: bad })).toThrow(
        /code cache budget must be a positive number of bytes/,
      )
  })

  it('counts a compiled block at more than its decoded form', () => {
    const { machine } = loadBare(bareElf('crcloop'))
    machine.jitThreshold = 1
    machine.run({ maxInstructions: 100_000 })
    const cache = machine.codeCache
    let compiled = 0
    let sum = 0
    // Every block is in the cache and accounted for; the compiled ones at their compiled size.
    for (const b of cachedBlocks(machine)) {
      sum += blockBytes(b)
      if (b.jit !== null) {
        compiled++
        expect(blockBytes(b)).toBeGreaterThan(blockBytes({ ...b, jit: null }))
      }
    }
    expect(compiled).toBeGreaterThan(0)
    expect(cache.bytes).toBe(sum)
  })
})

const cachedBlocks = (machine: Machine): Block[] => [...machine.codeCache.values()]

describe('what a flush drops, V8 can collect', () => {
  it('blocks, their chain links and their compiled functions are unreachable after a flush', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { machine } = loadBare(bareElf('selfcheck'))
    machine.jitThreshold = 2
    machine.run({ maxInstructions: 2_000_000 })
    const refs = weakRefs(machine)
    expect(refs.blocks.length).toBeGreaterThan(10)
    expect(refs.chained).toBeGreaterThan(0)
    expect(refs.functions.length).toBeGreaterThan(0)
    const before = machine.codeCache.flushes
    machine.codeCache.flush()
    expect(machine.codeCache.flushes).toBe(before + 1)
    expect(machine.codeCache.size).toBe(0)
    expect(machine.codeCache.bytes).toBe(0)
    // The guest goes on from where it was, building new blocks.
    machine.run({ maxInstructions: 1_000_000 })
    expect(machine.codeCache.size).toBeGreaterThan(0)
    // A WeakRef keeps its target for the rest of the job that made it: collect in a later one.
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
    gc()
    expect(refs.blocks.filter((r) => r.deref() !== undefined)).toHaveLength(0)
    expect(refs.functions.filter((r) => r.deref() !== undefined)).toHaveLength(0)
  })

  it('a flushed block is invalid and links to nothing', () => {
    const { machine } = loadBare(bareElf('selfcheck'))
    machine.run({ maxInstructions: 200_000 })
    const blocks = cachedBlocks(machine)
    expect(blocks.some((b) => b.succ !== null)).toBe(true)
    const frames = new Set(blocks.flatMap((b) => b.frames))
    machine.codeCache.flush()
    for (const b of blocks) {
      expect(b.valid).toBe(false)
      expect(b.succ).toBeNull()
      expect(b.succ2).toBeNull()
    }
    // Its frames are ordinary memory again: written without a detour through the cache.
    for (const f of frames) expect(machine.memory.codeFrames[f]).toBe(0)
  })
})

/** Weak references to a machine's cached blocks and compiled functions (made in a function of their own: no strong local survives). */
function weakRefs(machine: Machine) {
  const blocks = cachedBlocks(machine)
  return {
    blocks: blocks.map((b) => new WeakRef(b)),
    chained: blocks.filter((b) => b.succ !== null).length,
    functions: [...new Set(blocks.flatMap((b) => (b.jit === null ? [] : [b.jit])))].map(
      (f) => new WeakRef(f),
    ),
  }
}
