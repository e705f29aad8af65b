// Memory benchmark: what the emulator process holds while running a
// workload, against the memory the guest itself uses.
//
// Host side: deltas of process.memoryUsage() (resident set, V8 heap,
// ArrayBuffers) from before the machine exists to after the run, both taken
// after a full GC with the machine still alive, in a fresh process (run this
// file with the workload path: it prints the figures as JSON), so nothing an
// earlier benchmark grew is already resident. Guest side: the pages the
// guest touched, i.e. mapped pages whose accessed bit the MMU set (plus the
// page-table frames), and all mapped pages.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { settledMemory } from '@probekit/bench'
import { AddressSpace } from '../src/index.js'
import { loadBare } from '../test/support/bare.js'
import { patchGlobal32 } from '../test/support/elf.js'

export interface MemoryFigures {
  /** Resident set growth, bytes. */
  rss: number
  heap: number
  arrayBuffers: number
  /** Guest pages with the accessed bit set, bytes. */
  guestTouched: number
  /** All guest-mapped pages, bytes. */
  guestMapped: number
  instructions: number
}

/** Run a bare workload to its exit and measure. */
export function measureMemory(elf: Uint8Array): MemoryFigures {
  const before = settledMemory()
  const { machine, out } = loadBare(elf)
  machine.run({ maxInstructions: 10_000_000_000 })
  if (out.exitCode === null) throw new Error('workload did not exit')
  const after = settledMemory()
  const space = new AddressSpace(machine.memory, machine.frames, machine.cpus[0].cr3)
  let touched = 0
  let mapped = 0
  const tables = new Set<number>()
  space.forEachMapping((_va, m) => {
    mapped++
    if (m.flags.accessed) touched++
    tables.add(Math.floor(m.ptePhys / 4096))
  })
  const figures = {
    rss: after.rss - before.rss,
    heap: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    guestTouched: (touched + tables.size) * 4096,
    guestMapped: (mapped + tables.size) * 4096,
    instructions: machine.totalInstructions(),
  }
  // Keep the machine alive until after the measurement.
  if (machine.codeCache.size < 0) throw new Error('unreachable')
  return figures
}

// Entry point of the child process: memory.ts <workload ELF> <iterations>.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const elf = patchGlobal32(readFileSync(process.argv[2]), 'iterations', Number(process.argv[3]))
  process.stdout.write(`${JSON.stringify(measureMemory(elf))}\n`)
}
