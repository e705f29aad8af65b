// Fuzz (issue 17): random register / unregister / disable / enable of
// kprobes, kretprobes (small maxactive) and jprobes, with jump optimization
// switched on and off through its sysctl, on 2-4 vCPUs while a program runs
// to its end (proctree: fork, vfork, execve, kill, wait4 across processes).
// Every probe gone, kernel text is byte-identical to the original; every
// syscall was a hit or a miss of the anchors; every random probe at an
// anchor's address saw the anchor's hits while it was enabled. Long runs
// (and the threads fixture): tools/fuzz/probe-sequences.ts.

import { describe, expect, it } from 'vitest'
import { type Jprobe, type Kprobe, Kprobes } from '../../kprobes/src/index.js'
import { bootKernel, SPINNER } from '../../kprobes/test/support/kernel.js'
import { fixture, probeSequence } from '../../kprobes/test/support/probe-sequence.js'
import { optimizerExtension } from './support/optimizer-extension.js'

const PROCTREE = {
  path: '/bin/proctree',
  bytes: fixture('proctree'),
  argv: ['/bin/proctree'],
  expectStdout: /ECHILD/,
}

describe('fuzz: random probe sequences while programs run', () => {
  for (const seed of [1, 2, 3]) {
    it(`every hit accounted for and the text restored (seed ${seed})`, () => {
      const report = probeSequence({
        seed,
        workload: PROCTREE,
        extensions: [optimizerExtension],
        minRun: 200,
        maxRun: 5_000,
      })
      expect(report.cpus).toBeGreaterThanOrEqual(2)
      expect(report.anchorHits).toBe(report.syscalls)
      expect(report.optimizedSeen).toBeGreaterThan(0)
    })
  }

  // Found by this fuzzer: a jprobe leaving its aggregate while a CPU was in its entry took the
  // aggregate's break_handler with it, and jprobe_return's int3 then oopsed.
  it('unregister_jprobe while a CPU is in its entry: the break still comes home', () => {
    const k = bootKernel(2, [SPINNER, SPINNER])
    const kp = new Kprobes(k)
    let entries = 0
    const other: Kprobe = { symbol_name: 'do_syscall_64', pre_handler: () => 0 }
    const jp: Jprobe = {
      kp: { symbol_name: 'do_syscall_64' },
      entry: () => {
        entries++
        k.machine.stop('in the jprobe entry')
      },
    }
    expect(kp.register_kprobe(other)).toBe(0)
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(k.run(1_000_000).result.reason).toBe('stopped')
    expect(entries).toBe(1)
    kp.unregister_jprobe(jp)
    const r = k.run(200_000)
    expect(r.result.reason, r.result.detail).toBe('budget')
    expect(k.printk.text()).not.toMatch(/oops|int3:/)
    kp.unregister_kprobe(other)
    expect(entries).toBe(1)
  })
})
