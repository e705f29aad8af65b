// The machine-readable form of one result: a single JSON object on one line,
// keys exactly name, value, unit in that order, so tools can diff runs line by line.

import type { BenchResult } from './benchmark.js'

export function toJsonLine(result: BenchResult): string {
  // Rebuild the object rather than stringify `result`, so stray extra
  // properties on the caller's object never leak into the format.
  return JSON.stringify({ name: result.name, value: result.value, unit: result.unit })
}
