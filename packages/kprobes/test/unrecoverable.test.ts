// "Unrecoverable kprobe detected." (reenter_kprobe's KPROBE_REENTER case, issue 17): a probe hit on
// the way to or from the single-step of a probe that was itself reentered. Linux prints it, dumps the
// probe (dump_kprobe) and BUG()s: an oops. Here it is the oops a faulting handler makes: the report
// in the kernel log, the run stopped with reason 'oops' for good, no host exception.
//
// How it happens: a kernel whose blacklist misses do_debug (the #DB path, as Linux's has missed
// functions before). A probe on do_syscall_64 with a post_handler single-steps; the #DB of that step
// reaches do_debug's int3 while the probe is current (KPROBE_HIT_SS): reentered, counted, stepped;
// the #DB of that step reaches do_debug's int3 again, now in KPROBE_REENTER. (A probe there without
// a post_handler is boosted: its reentered copy runs without a #DB, and all goes on.)

import { oopsReports } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes } from '../src/index.js'
import { bootKernel } from './support/kernel.js'

describe('Unrecoverable kprobe detected', () => {
  it('a probe on the #DB path: the second reentry is an oops with dump_kprobe, the guest stack, reason oops', () => {
    const k = bootKernel(1)
    const doDebug = k.symbol('do_debug')
    // The broken kernel: do_debug left out of _kprobe_blacklist (read when Kprobes starts).
    const blacklist = k.image.blacklist
    expect(blacklist).toContain(doDebug)
    blacklist.splice(blacklist.indexOf(doDebug), 1)
    const kp = new Kprobes(k)
    let posts = 0
    const stepped: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => 0,
      post_handler: () => void posts++,
    }
    let debugHandlerRuns = 0
    // A post_handler: single-stepped, not boosted (a boosted reentry runs its copy without a #DB).
    const onDebugPath: Kprobe = {
      symbol_name: 'do_debug',
      pre_handler: () => (debugHandlerRuns++, 0),
      post_handler: () => void debugHandlerRuns++,
    }
    expect(kp.register_kprobe(stepped)).toBe(0)
    expect(kp.register_kprobe(onDebugPath)).toBe(0)
    const { result } = k.run(1_000_000)
    expect(result.reason).toBe('oops')
    expect(result.detail).toMatch(/^Unrecoverable kprobe detected at do_debug\+0x0\/0x[0-9a-f]+$/)
    // The first hit of do_debug was a reentry (no handler, one miss); the second the oops.
    expect(debugHandlerRuns).toBe(0)
    expect(onDebugPath.nmissed).toBe(1)
    expect(posts).toBe(0)
    const [report] = oopsReports(k)
    expect(report.slice(0, 6)).toEqual([
      'Unrecoverable kprobe detected.',
      'Dumping kprobe:',
      'Name: do_debug',
      'Offset: 0',
      `Address: ${k.kallsyms.format(doDebug)}`,
      'kernel BUG at arch/x86/kernel/kprobes/core.c (reenter_kprobe)!',
    ])
    expect(report[6]).toBe('invalid opcode: 0000 [#1] SMP')
    expect(report[7]).toMatch(/^CPU: 0 PID: 1 Comm: p0$/)
    expect(report[8]).toMatch(/^RIP: 0010:do_debug\+0x0\/0x[0-9a-f]+$/)
    // The Call Trace is the guest's: do_debug was called from the #DB entry (exc_debug).
    const trace = report.slice(report.indexOf('Call Trace:') + 1, report.indexOf(' </TASK>'))
    expect(trace[0]).toBe(' <TASK>')
    expect(trace[1]).toMatch(/^ exc_debug\+0x[0-9a-f]+\/0x[0-9a-f]+$/)
    expect(report.at(-1)).toBe('Kernel panic - not syncing: Fatal exception')
    const log = k.printk.lines.map((l) => l.text)
    expect(log.slice(log.indexOf(report[0]), log.indexOf(report[0]) + report.length)).toEqual(report)
    // For good; and the probes still come out, every byte put back.
    expect(k.run(1_000_000).result).toEqual({ reason: 'oops', detail: result.detail, instructions: 0 })
    kp.unregister_kprobes([stepped, onDebugPath])
    expect(k.readKernel(doDebug, 1)[0]).not.toBe(0xcc)
  })
})
