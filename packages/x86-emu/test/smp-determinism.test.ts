// On several vCPUs each runs a quantum at a time, and where the quantum
// ends must depend on the guest's instructions alone: the pure interpreter,
// the block compiler for everything and any mix must interleave the vCPUs
// the same. A soft quantum lets its last block run whole; a compiled chain
// once kept that extra room and ran on into the next blocks after a side
// exit (a loop's branch out mid-way, as in a table search), where the
// interpreter stops: compiling moved the interleaving.

import { describe, expect, it } from 'vitest'
import { Rig, USER_CODE } from './support/rig.js'

const NOP = 0x90

/**
 * top:  inc eax; test al, 7; jne skip; nop x10
 * skip: inc ecx; jmp top
 * The block at top is a compiled self-loop that leaves by a side exit after
 * 3 instructions 7 times in 8; the block at skip chains back to it.
 */
const SIDE_EXIT_LOOP = [
  0xff,
  0xc0,
  0xa8,
  0x07,
  0x75,
  10,
  ...new Array(10).fill(NOP),
  0xff,
  0xc1,
  0xeb,
  -20 & 0xff,
]

/** Side exits out of a block that is no loop: 0: inc eax; test al, 3; jne far; nop x8; jmp far+2. far: inc ecx; jmp 0 */
const SIDE_EXIT_CHAIN = [
  0xff,
  0xc0,
  0xa8,
  0x03,
  0x75,
  10,
  ...new Array(8).fill(NOP),
  0xeb,
  0x02,
  0xff,
  0xc1,
  0xeb,
  -20 & 0xff,
]

function run(code: number[], cpus: number, quantum: number, jitThreshold: number, codeCacheSize?: number) {
  const r = new Rig({ cpus, quantum, jitThreshold, codeCacheSize })
  r.load(USER_CODE, code, { user: true })
  for (let i = 0; i < cpus; i++) r.enterUser(i, USER_CODE)
  // vCPUs after the first start a few instructions apart, so their quanta end at different points of the loop.
  for (let i = 1; i < cpus; i++) r.machine.runCpu(r.machine.cpus[i], 5 * i)
  const res = r.machine.run({ maxInstructions: 100_000 })
  return {
    reason: res.reason,
    cpus: r.machine.cpus.map((c) => ({
      instructions: c.instructions,
      rip: c.rip,
      eax: c.getReg(0),
      ecx: c.getReg(1),
    })),
  }
}

describe('where a vCPU quantum ends does not depend on which blocks are compiled', () => {
  for (const [shape, code] of [
    ['a compiled loop with a side exit', SIDE_EXIT_LOOP],
    ['a chain with side exits', SIDE_EXIT_CHAIN],
  ] as const) {
    for (const cpus of [2, 3]) {
      for (const quantum of [7, 13, 50]) {
        it(`${shape}, ${cpus} vCPUs, quantum ${quantum}`, () => {
          const want = run(code, cpus, quantum, Number.POSITIVE_INFINITY)
          expect(want.reason).toBe('budget')
          // Every vCPU took its turns and went round the loop.
          for (const c of want.cpus) expect(c.ecx).toBeGreaterThan(100n)
          for (const threshold of [0, 2, 32]) {
            expect(run(code, cpus, quantum, threshold), `threshold ${threshold}`).toEqual(want)
          }
          // A cache of a block or two: emptied and compiled again all the time.
          expect(run(code, cpus, quantum, 0, 600), 'tiny code cache').toEqual(want)
        })
      }
    }
  }
})
