// x86-emu benchmarks: emulated MIPS (guest instructions per host second) on
// integer workloads built from C (native/workloads), run under the bare
// vmcall ABI. `pnpm bench` prints a table; `pnpm bench --json` JSON lines.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { median, report, runBenchmarks } from '@probekit/bench'
import { loadBare } from '../test/support/bare.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const workload = (name: string) => readFileSync(`${here}../native/workloads/${name}-bare`)

/** Median MIPS over several full runs of a program (machine setup excluded from the timing). */
function mips(elf: Uint8Array, runs = 5): number {
  const samples: number[] = []
  for (let k = 0; k < runs + 1; k++) {
    const { machine, out } = loadBare(elf)
    const t0 = performance.now()
    const r = machine.run({ maxInstructions: 10_000_000_000 })
    const ms = performance.now() - t0
    if (out.exitCode === null) throw new Error(`workload did not exit: ${r.reason} ${r.detail}`)
    if (k > 0) samples.push(machine.totalInstructions() / ms / 1000) // first run warms the JIT
  }
  return median(samples)
}

const results = await runBenchmarks([
  { name: 'intmix: integer workload (crc, sort, hash)', unit: 'MIPS', run: () => mips(workload('intmix')) },
  { name: 'selfcheck: division, bit scans, rep strings', unit: 'MIPS', run: () => mips(workload('selfcheck')) },
  {
    name: 'intmix: guest instructions per run',
    unit: 'insns',
    run: () => {
      const { machine } = loadBare(workload('intmix'))
      machine.run({ maxInstructions: 10_000_000_000 })
      return machine.totalInstructions()
    },
  },
])
report(results)
