// Memory figures for the memory benchmarks: process.memoryUsage() after two
// full garbage collections, so what is counted is what is still referenced.

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let gc: (() => void) | null = null

/** process.memoryUsage() after full GCs (exposes gc on first use). */
export function settledMemory(): NodeJS.MemoryUsage {
  if (gc === null) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
  gc()
  return process.memoryUsage()
}
