// Runs benchmarks one after another: never concurrently, since they would
// compete for the same two cores and distort each other's timings.

import type { Benchmark, BenchResult } from './benchmark.js'

export async function runBenchmarks(benches: readonly Benchmark[]): Promise<BenchResult[]> {
  const results: BenchResult[] = []
  for (const bench of benches) {
    const value = await bench.run()
    // A NaN or Infinity would serialise as null and silently poison comparisons.
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new TypeError(`benchmark '${bench.name}' returned ${String(value)}, not a finite number`)
    }
    results.push({ name: bench.name, value, unit: bench.unit })
  }
  return results
}
