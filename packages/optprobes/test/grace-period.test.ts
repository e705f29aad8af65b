// Why the optimizer waits (the seed's 4.4 and 1.4.3): on two vCPUs, vCPU 1
// is stopped inside the region the jump will replace - between two of its
// instructions, by a timer interrupt - when the optimizer runs. With the
// grace period the optimizer brings vCPU 1 out of the region first (it
// finishes its interrupt, the original instructions and its system call)
// and only then writes the jump: everything goes on. Without it (the
// unsafe option), vCPU 1 returns from its interrupt into the middle of the
// new jump and runs the jump's displacement as instructions.

import { TIMER_VECTOR } from '@probekit/kernel'
import { type Kprobe, Kprobes } from '@probekit/kprobes'
import { decode } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { Optprobes } from '../src/index.js'
import { BAD_OPENER, bootKernel, text } from './support/kernel.js'

/** Two vCPUs running the open loop; vCPU 1 stopped by a timer interrupt at do_sys_open+1 (after its push). */
function cpu1InsideRegion(unsafe: boolean) {
  const k = bootKernel(2, [BAD_OPENER, BAD_OPENER])
  const fn = k.symbol('do_sys_open')
  const c1 = k.machine.cpus[1]
  // Both tasks running (one per vCPU), then vCPU 1 alone up to do_sys_open's second instruction.
  k.run(200_000)
  const second = fn + decode(text(k, fn, 16), fn, 0).length
  let steps = 0
  while (c1.rip !== second && steps++ < 2_000_000) k.machine.runCpu(c1, 1)
  expect(c1.rip).toBe(second)
  // A timer interrupt there: vCPU 1 is in its handler, its interrupted context inside the region.
  k.machine.interrupt(1, TIMER_VECTOR)
  k.machine.runCpu(c1, 1)
  expect(c1.rip).not.toBe(second)
  expect(c1.cpl).toBe(0)
  const kp = new Kprobes(k)
  const op = new Optprobes(kp, { delay: 1_000_000, unsafeSkipGracePeriod: unsafe })
  let hits = 0
  const p: Kprobe = { addr: fn, pre_handler: () => (hits++, 0) }
  expect(kp.register_kprobe(p)).toBe(0)
  return { k, kp, op, fn, second, c1, hits: () => hits }
}

describe('the grace period before the jump is written', () => {
  it('waits for the vCPU interrupted inside the region to leave it, then writes the jump; all goes on', () => {
    const { k, op, fn, second, c1, hits } = cpu1InsideRegion(false)
    const before = c1.instructions
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(fn)).toBe(true)
    // vCPU 1 ran on (out of its interrupt, through the original region) before the jump went in.
    expect(c1.instructions).toBeGreaterThan(before)
    expect(c1.rip === second).toBe(false)
    const h0 = hits()
    k.run(1_000_000)
    expect(hits()).toBeGreaterThan(h0 + 10)
    expect(k.printk.text()).not.toMatch(/Oops|BUG|invalid opcode|general protection/)
  })

  it('without it, vCPU 1 returns into the middle of the jump: what it runs there is not the original code', () => {
    const { k, op, fn, second, c1 } = cpu1InsideRegion(true)
    const original = decode(text(k, second, 16), second, 0)
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(fn)).toBe(true)
    // The bytes at vCPU 1's return address are now the jump's displacement.
    const now = text(k, second, 16)
    const there = decode(now, second, 0)
    expect([...now.subarray(0, original.length)]).not.toEqual([...original.bytes])
    expect(there.bytes).not.toEqual(original.bytes)
    // Run vCPU 1 alone until it leaves its interrupt: it lands at `second`, inside the jump.
    let landed = false
    for (let i = 0; i < 2_000_000 && !landed; i++) {
      k.machine.runCpu(c1, 1)
      if (c1.rip === second) landed = true
    }
    expect(landed).toBe(true)
    // From there it runs garbage: sooner or later the kernel notices (an oops, a fault, a dead task).
    k.run(2_000_000)
    expect(k.printk.text()).toMatch(/Oops|BUG|invalid opcode|general protection|page fault|segfault|killed/i)
  })

  it('the vCPU whose tick runs the optimizer was itself interrupted inside the region: those probes wait for a later run', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const fn = k.symbol('do_sys_open')
    const c0 = k.machine.cpus[0]
    k.run(100_000)
    const second = fn + decode(text(k, fn, 16), fn, 0).length
    let steps = 0
    while (c0.rip !== second && steps++ < 2_000_000) k.machine.runCpu(c0, 1)
    expect(c0.rip).toBe(second)
    const kp = new Kprobes(k)
    const op = new Optprobes(kp, { delay: 1 })
    let hits = 0
    expect(kp.register_kprobe({ addr: fn, pre_handler: () => (hits++, 0) })).toBe(0)
    // The tick that runs the due work interrupts vCPU 0 right here, inside the region.
    const j0 = k.jiffies
    k.machine.interrupt(0, TIMER_VECTOR)
    for (let i = 0; i < 100_000 && k.jiffies === j0; i++) k.machine.runCpu(c0, 1)
    expect(k.jiffies).toBe(j0 + 1)
    expect(op.isOptimized(fn)).toBe(false)
    expect(op.detourBuffer(fn)?.state).toBe('optimizing')
    expect(text(k, fn, 1)[0]).toBe(0xcc)
    // A later tick, with vCPU 0 elsewhere: the jump goes in; all goes on.
    for (let i = 0; i < 100 && !op.isOptimized(fn); i++) k.run(10_000)
    expect(op.isOptimized(fn)).toBe(true)
    const h0 = hits
    k.run(300_000)
    expect(hits).toBeGreaterThan(h0 + 5)
    expect(k.printk.text()).not.toMatch(/Oops|BUG|invalid opcode|general protection/)
  })
})
