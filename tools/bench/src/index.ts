// @probekit/bench: what every package's bench/index.ts uses to time things and print results.
export type { Benchmark, BenchResult } from './benchmark.js'
export { toJsonLine } from './json-line.js'
export { type MeasureOptions, measure, median, medianOf, pairedRuns } from './measure.js'
export { type ReportOptions, report } from './report.js'
export { runBenchmarks } from './run-benchmarks.js'
export { settledMemory } from './settled-memory.js'
export { renderTable } from './table.js'
