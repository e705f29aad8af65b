// The human form of a set of results: a table drawn by cli-table3.

import Table from 'cli-table3'
import type { BenchResult } from './benchmark.js'

// Four significant digits: more is noise for wall-clock timings.
const numberFormat = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 4, useGrouping: true })

export function renderTable(results: readonly BenchResult[]): string {
  const table = new Table({
    head: ['benchmark', 'value', 'unit'],
    colAligns: ['left', 'right', 'left'],
    // Colour codes would end up in CI logs and redirected files.
    style: { head: [], border: [], compact: true },
  })
  for (const r of results) table.push([r.name, numberFormat.format(r.value), r.unit])
  return table.toString()
}
