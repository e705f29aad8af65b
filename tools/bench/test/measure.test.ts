import { describe, expect, it } from 'vitest'
import { measure, median, medianOf, pairedRuns, runBenchmarks } from '../src/index.js'

describe('measure', () => {
  it('warms up, then returns the median time per call', () => {
    let calls = 0
    // A fake clock: sample k takes k+1 ms per iteration, except one outlier.
    const durations = [5, 1, 2, 1000, 3]
    let t = 0
    let reads = 0
    const now = () => {
      const sample = reads >> 1
      if (reads++ % 2 === 1) t += durations[sample] * 2
      return t
    }
    const ms = measure(() => calls++, { warmup: 3, samples: 5, iterations: 2, now })
    expect(calls).toBe(3 + 5 * 2)
    expect(ms).toBe(3) // median of [5, 1, 2, 1000, 3]; the outlier does not move it
  })

  it('times real work with performance.now()', () => {
    const ms = measure(() => JSON.stringify({ a: [1, 2, 3] }), { samples: 5, iterations: 10 })
    expect(ms).toBeGreaterThanOrEqual(0)
    expect(Number.isFinite(ms)).toBe(true)
  })

  it('rejects nonsense options', () => {
    expect(() => measure(() => {}, { samples: 0 })).toThrow(RangeError)
  })
})

describe('median', () => {
  it('handles odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
  })
})

describe('runBenchmarks', () => {
  it('runs each benchmark in order and keeps name and unit', async () => {
    const order: string[] = []
    const results = await runBenchmarks([
      {
        name: 'a',
        unit: 'ms',
        run: () => {
          order.push('a')
          return 1
        },
      },
      {
        name: 'b',
        unit: 'ops/s',
        run: async () => {
          order.push('b')
          return 2
        },
      },
    ])
    expect(order).toEqual(['a', 'b'])
    expect(results).toEqual([
      { name: 'a', value: 1, unit: 'ms' },
      { name: 'b', value: 2, unit: 'ops/s' },
    ])
  })

  it('refuses a non-finite value', async () => {
    await expect(runBenchmarks([{ name: 'bad', unit: 'ms', run: () => Number.NaN }])).rejects.toThrow(/bad/)
  })
})

describe('pairedRuns', () => {
  it('throws the warm-up pairs away, then pairs each probed run with the baseline run just before it', () => {
    const calls: string[] = []
    let n = 0
    const pairs = pairedRuns(
      2,
      3,
      () => {
        calls.push('b')
        return n++
      },
      () => {
        calls.push('p')
        return n++
      },
    )
    expect(calls.join('')).toBe('bpbpbpbpbp')
    expect(pairs).toEqual([
      { baseline: 4, probed: 5 },
      { baseline: 6, probed: 7 },
      { baseline: 8, probed: 9 },
    ])
    expect(medianOf(pairs, (p) => p.probed - p.baseline)).toBe(1)
  })
})
