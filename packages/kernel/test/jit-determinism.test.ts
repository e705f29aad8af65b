// The instruction count of a run must not depend on which blocks happen to
// be compiled: the pure interpreter (jitThreshold Infinity), the block
// compiler for everything (0) and any mix (a block interpreted until it is
// hot, then compiled) count the same guest instructions. A compiled
// self-loop once left Cpu.ld (its completed iterations) set after it
// returned, and the next fault taken in an interpreted block added them
// again: the default threshold counted hundreds of instructions more than
// either pure mode, so where a timer tick landed depended on compile history.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/bin/${name}`, import.meta.url)))

describe('guest instruction counts do not depend on the block compiler threshold', () => {
  for (const name of ['hello', 'args', 'fileio']) {
    it(name, () => {
      const program = fixture(name)
      const counts = [Number.POSITIVE_INFINITY, 0, 2, 32].map((threshold) => {
        const r = runGuest(program, [name, 'a'], {
          setup: (k) => {
            k.machine.jitThreshold = threshold
          },
        })
        return { instructions: r.kernel.machine.totalInstructions(), stdout: r.stdout, status: r.status }
      })
      for (const c of counts.slice(1)) expect(c).toEqual(counts[0])
    })
  }
})
