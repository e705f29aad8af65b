// Emulated MIPS by CPU time (process.cpuUsage: user + system of this process)
// rather than wall-clock time, for A/B comparisons on a shared machine where
// other processes' load stretches wall time but not much the CPU time a
// single-threaded run consumes. Run with the workload path, the iterations
// to patch in (0: as built) and the number of runs; prints one JSON line:
// the first run's figure (cold), the median of the others (warm) and each.

import { readFileSync } from 'node:fs'
import { median } from '@probekit/bench'
import { loadBare } from '../test/support/bare.js'
import { patchGlobal32 } from '../test/support/elf.js'

function cpuMs(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const [path, iterations, runsArg] = process.argv.slice(2)
if (path === undefined) throw new Error('usage: cpu-mips.ts <workload> [iterations] [runs]')
let elf: Uint8Array = new Uint8Array(readFileSync(path))
if (Number(iterations) > 0) elf = patchGlobal32(elf, 'iterations', Number(iterations))
const runs = runsArg === undefined ? 4 : Number(runsArg)
const rates: number[] = []
let instructions = 0
for (let k = 0; k < runs; k++) {
  const { machine, out } = loadBare(elf)
  const t0 = cpuMs()
  const r = machine.run({ maxInstructions: 10_000_000_000 })
  const ms = cpuMs() - t0
  if (out.exitCode === null) throw new Error(`workload did not exit: ${r.reason} ${r.detail}`)
  instructions = machine.totalInstructions()
  rates.push(instructions / ms / 1000)
}
const round = (v: number) => Math.round(v * 10) / 10
process.stdout.write(
  `${JSON.stringify({ cold: round(rates[0]), warm: round(median(rates.slice(1))), runs: rates.map(round), instructions })}\n`,
)
