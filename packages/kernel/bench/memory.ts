// Memory benchmark: the emulator process running a static fixture under the
// kernel, against the guest's own memory use, in a fresh process (run this
// file with a fixture path: it prints the figures as JSON, so nothing an
// earlier benchmark grew is already resident).
//
// Host side: deltas of process.memoryUsage() from before the Kernel exists to
// the guest's exit (both after a full GC, the kernel still alive), and the
// process's peak resident set (getrusage maxRSS) in absolute terms. Guest
// side: the most user pages the process had mapped at once (demand paging
// maps a page only when the guest touches it; the ELF loader maps the file's
// pages) and the page-table frames of its user half, counted before every
// unmap and before exit frees them.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { settledMemory } from '@probekit/bench'
import { Kernel } from '../src/index.js'

export interface KernelMemoryFigures {
  /** Resident set growth from before the kernel to the guest's exit, bytes. */
  rss: number
  heap: number
  arrayBuffers: number
  /** Resident set of the process before the kernel existed (Node, modules), bytes. */
  baseRss: number
  /** Peak resident set of the whole emulator process, bytes. */
  maxRss: number
  /** The guest's user pages plus their page tables at exit, bytes. */
  guestMapped: number
  instructions: number
}

/** Run a static program to its exit under a fresh kernel and measure. */
export function measureKernelMemory(program: Uint8Array, image: Uint8Array): KernelMemoryFigures {
  const before = settledMemory()
  const kernel = new Kernel({ image, memorySize: 256 * 1024 * 1024, stdout: () => {} })
  kernel.vfs.writeFile('/bin/prog', program)
  kernel.boot()
  const task = kernel.spawn('/bin/prog', ['/bin/prog'], [])
  // The peak: counted before every unmap (munmap, brk shrinking, exit), since free() may give pages back.
  let guestMapped = 0
  const mm = task.mm
  const count = () => {
    const tables = new Set<number>()
    let pages = 0
    mm.space.forEachMapping((_va, m) => {
      pages++
      tables.add(Math.floor(m.ptePhys / 4096))
    })
    guestMapped = Math.max(guestMapped, (pages + tables.size) * 4096)
  }
  const { release, unmapRange } = mm
  mm.release = () => {
    count()
    release.call(mm)
  }
  mm.unmapRange = (start, end) => {
    count()
    unmapRange.call(mm, start, end)
  }
  const { exit, result } = kernel.run(20_000_000_000)
  if (exit?.status !== 0) throw new Error(`program did not exit cleanly: ${result.detail}`)
  const after = settledMemory()
  return {
    rss: after.rss - before.rss,
    baseRss: before.rss,
    heap: after.heapUsed - before.heapUsed,
    arrayBuffers: after.arrayBuffers - before.arrayBuffers,
    maxRss: process.resourceUsage().maxRSS * 1024,
    guestMapped,
    instructions: kernel.machine.totalInstructions(),
  }
}

// Entry point of the child process: memory.ts <static program>.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const image = new Uint8Array(readFileSync(new URL('../guest/vmlinux', import.meta.url)))
  const figures = measureKernelMemory(new Uint8Array(readFileSync(process.argv[2])), image)
  process.stdout.write(`${JSON.stringify(figures)}\n`)
}
