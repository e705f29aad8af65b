// Prints results: a table for people, or with --json one JSON object per line
// (and nothing else on stdout) for scripts.

import type { BenchResult } from './benchmark.js'
import { toJsonLine } from './json-line.js'
import { renderTable } from './table.js'

export interface ReportOptions {
  /** JSON lines instead of a table; defaults to whether `--json` is on the command line. */
  json?: boolean
  /** Where to write; defaults to stdout. */
  out?: { write(chunk: string): unknown }
}

export function report(results: readonly BenchResult[], options: ReportOptions = {}): void {
  const { json = process.argv.includes('--json'), out = process.stdout } = options
  if (json) {
    for (const r of results) out.write(`${toJsonLine(r)}\n`)
  } else {
    out.write(`${renderTable(results)}\n`)
  }
}
