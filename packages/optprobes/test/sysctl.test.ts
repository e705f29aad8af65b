// What a hit costs in each phase, counted in the machine's traps (boosting
// off, so an int3 probe is two traps: the int3 and the single-step's #DB):
// an int3 probe 2 per hit, a probe queued for optimization 1 (its int3,
// then the buffer's copies: the seed's 1.4.4), an optimized probe 0 (a
// jump and a vmcall). And the sysctl debug.kprobes_optimization (appendix
// B): 0 unoptimizes every probe and keeps new ones int3 probes, 1
// optimizes them again; debugfs shows [OPTIMIZED] exactly while the jump is
// in the text.

import type { Kernel } from '@probekit/kernel'
import { type Kprobe, Kprobes } from '@probekit/kprobes'
import { describe, expect, it } from 'vitest'
import { Optprobes } from '../src/index.js'
import { bootKernel, text, textSnapshot } from './support/kernel.js'

function trapsPerHit(k: Kernel, hits: () => number, instructions: number): number {
  const t0 = k.machine.counters[0].traps
  const h0 = hits()
  k.run(instructions)
  return (k.machine.counters[0].traps - t0) / (hits() - h0)
}

describe('traps per hit and the sysctl', () => {
  it('int3 probe 2, queued 1, optimized 0 traps per hit; the sysctl switches all probes, new ones too', () => {
    const k = bootKernel(1)
    const kp = new Kprobes(k, { boost: false })
    const op = new Optprobes(kp, { delay: 1_000_000 }) // the work runs only when we ask (wait_for_kprobe_optimizer)
    const before = textSnapshot(k)
    const addr = k.symbol('sys_ni_host')
    let hits = 0
    const p: Kprobe = { addr, pre_handler: () => (hits++, 0) }
    op.kprobes_optimization = 0
    expect(op.kprobes_optimization).toBe(0)
    expect(kp.register_kprobe(p)).toBe(0)
    // Off: a plain int3 probe (int3 + single-step).
    expect(op.detourBuffer(addr)).toBeNull()
    expect(trapsPerHit(k, () => hits, 200_000)).toBeCloseTo(2, 1)
    // On: queued at once, hits detour through the buffer (the int3 only).
    op.kprobes_optimization = 1
    expect(op.detourBuffer(addr)?.state).toBe('optimizing')
    expect(kp.debugfsList()).not.toContain('[OPTIMIZED]')
    expect(trapsPerHit(k, () => hits, 200_000)).toBeCloseTo(1, 1)
    // The optimizer's work: the jump; no trap at all.
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(addr)).toBe(true)
    expect(kp.debugfsList()).toContain('[OPTIMIZED]')
    expect(trapsPerHit(k, () => hits, 200_000)).toBeCloseTo(0, 1)
    // Off again: unoptimized before the write returns, new probes stay int3 probes.
    op.kprobes_optimization = 0
    expect(op.isOptimized(addr)).toBe(false)
    expect(text(k, addr, 1)[0]).toBe(0xcc)
    expect(kp.debugfsList()).not.toContain('[OPTIMIZED]')
    expect(trapsPerHit(k, () => hits, 200_000)).toBeCloseTo(2, 1)
    const doOpen = k.symbol('do_sys_open')
    const q: Kprobe = { addr: doOpen, pre_handler: () => 0 }
    expect(kp.register_kprobe(q)).toBe(0)
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(doOpen)).toBe(false)
    expect(op.detourBuffer(doOpen)).toBeNull()
    // On: both optimized by the next work.
    op.kprobes_optimization = 1
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(addr)).toBe(true)
    expect(op.isOptimized(doOpen)).toBe(true)
    expect(kp.debugfsList().match(/\[OPTIMIZED\]/g)?.length).toBe(2)
    kp.unregister_kprobes([p, q])
    expect(textSnapshot(k)).toEqual(before)
    expect(k.printk.text()).toContain('kprobe jump-optimization is disabled')
    expect(k.printk.text()).toContain('kprobe jump-optimization is enabled')
  })
})
