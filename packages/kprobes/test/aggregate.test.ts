// Aggregate probes: several kprobes at one address share one int3 and one slot.

import { describe, expect, it } from 'vitest'
import { KPROBE_FLAG_DISABLED, type Kprobe, Kprobes, type PtRegs } from '../src/index.js'
import { bootKernel, textByte, textSnapshot } from './support/kernel.js'

/** A pre_handler that does push %rbp itself and continues after it (returns 1: no step). */
function emulatePushRbp(k: ReturnType<typeof bootKernel>, p: Kprobe, regs: PtRegs): number {
  const sp = regs.get('sp') - 8
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigInt64(0, BigInt(regs.get('bp')), true)
  k.writeKernel(sp, b)
  regs.set('sp', sp)
  regs.set('ip', (p.addr as number) + 1)
  return 1
}

describe('aggregate probes', () => {
  it('two probes at one address: one int3, one slot; pre and post handlers run newest first; a probe without post_handler is fine', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const events: string[] = []
    const first: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: () => {
        events.push('pre1')
        return 0
      },
      post_handler: () => void events.push('post1'),
    }
    const second: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: () => {
        events.push('pre2')
        return 0
      },
    }
    const third: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: () => {
        events.push('pre3')
        return 0
      },
      post_handler: () => void events.push('post3'),
    }
    expect(kp.register_kprobes([first, second, third])).toBe(0)
    const addr = first.addr as number
    expect(textByte(k, addr)).toBe(0xcc)
    expect(kp.slots.usedSlots).toBe(1)
    expect(second.ainsn).toBe(first.ainsn)
    const ap = kp.get_kprobe(addr)
    expect(ap).not.toBe(first)
    expect(ap?.opcode).toBe(first.opcode)
    expect(kp.probes()).toEqual([third, second, first])
    // A fixed budget may end inside a hit (pre handlers run, the step and post handlers not yet):
    // finish it, so each phase below starts on a probe boundary wherever the budget ended.
    const finishHit = () => {
      for (let i = 0; i < 100 && kp.kprobe_running(0) !== null; i++) k.run(1_000)
      expect(kp.kprobe_running(0)).toBeNull()
    }
    k.run(300_000)
    finishHit()
    expect(events.length).toBeGreaterThan(20)
    const n = events.length - (events.length % 5)
    const cycle = ['pre3', 'pre2', 'pre1', 'post3', 'post1']
    for (let i = 0; i < n; i++) expect(events[i]).toBe(cycle[i % 5])

    // Unregistering one leaves the others armed.
    kp.unregister_kprobe(third)
    expect(textByte(k, addr)).toBe(0xcc)
    events.length = 0
    k.run(200_000)
    finishHit()
    expect(events.length).toBeGreaterThan(6)
    expect(events.slice(0, 3)).toEqual(['pre2', 'pre1', 'post1'])
    expect(events).not.toContain('pre3')

    // Only the probe without a post_handler left: no post fan-out at all.
    kp.unregister_kprobe(first)
    events.length = 0
    k.run(200_000)
    expect(new Set(events)).toEqual(new Set(['pre2']))

    kp.unregister_kprobe(second)
    expect(kp.get_kprobe(addr)).toBeUndefined()
    expect(textSnapshot(k)).toEqual(before)
    expect(kp.slots.usedSlots).toBe(0)
    k.run(100_000)
  })

  it('the first pre_handler returning non-zero ends the chain: older probes, the step and post_handlers are skipped', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    let olderPres = 0
    let posts = 0
    let newerPres = 0
    const older: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        olderPres++
        return 0
      },
      post_handler: () => void posts++,
    }
    const newer: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: (p, regs) => {
        newerPres++
        return emulatePushRbp(k, p, regs)
      },
    }
    expect(kp.register_kprobe(older)).toBe(0)
    expect(kp.register_kprobe(newer)).toBe(0)
    k.run(300_000)
    expect(newerPres).toBeGreaterThan(5)
    expect(olderPres).toBe(0)
    expect(posts).toBe(0)
    expect(kp.kprobe_running(0)).toBeNull()
    kp.unregister_kprobes([older, newer])
  })

  it('disabling one child skips only it; the aggregate is disarmed when all are disabled and re-armed by enabling one', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const hits = { a: 0, b: 0, c: 0 }
    const count = (key: 'a' | 'b' | 'c') => () => {
      hits[key]++
      return 0
    }
    const a: Kprobe = { symbol_name: 'sys_ni_host', pre_handler: count('a') }
    const b: Kprobe = { symbol_name: 'sys_ni_host', pre_handler: count('b') }
    expect(kp.register_kprobe(a)).toBe(0)
    expect(kp.register_kprobe(b)).toBe(0)
    const addr = a.addr as number
    const orig = a.opcode as number

    expect(kp.disable_kprobe(a)).toBe(0)
    expect(textByte(k, addr)).toBe(0xcc)
    k.run(200_000)
    expect(hits.a).toBe(0)
    expect(hits.b).toBeGreaterThan(3)

    expect(kp.disable_kprobe(b)).toBe(0)
    expect(textByte(k, addr)).toBe(orig)
    const bHits = hits.b
    k.run(100_000)
    expect(hits.b).toBe(bHits)

    // A child registered disabled does not re-arm the aggregate...
    const c: Kprobe = {
      symbol_name: 'sys_ni_host',
      flags: KPROBE_FLAG_DISABLED,
      pre_handler: count('c'),
    }
    expect(kp.register_kprobe(c)).toBe(0)
    expect(textByte(k, addr)).toBe(orig)
    // ...enabling one does, and only that one runs.
    expect(kp.enable_kprobe(a)).toBe(0)
    expect(textByte(k, addr)).toBe(0xcc)
    k.run(200_000)
    expect(hits.a).toBeGreaterThan(3)
    expect(hits.b).toBe(bHits)
    expect(hits.c).toBe(0)

    // Unregistering the only enabled child disarms the rest (all remaining are disabled).
    kp.unregister_kprobe(a)
    expect(textByte(k, addr)).toBe(orig)
    expect(kp.enable_kprobe(c)).toBe(0)
    expect(textByte(k, addr)).toBe(0xcc)
    k.run(100_000)
    expect(hits.c).toBeGreaterThan(0)
    kp.unregister_kprobes([b, c])
    expect(textByte(k, addr)).toBe(orig)
    expect(kp.slots.usedSlots).toBe(0)
  })

  it('a miss on an aggregate counts on every child', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const a: Kprobe = { symbol_name: 'sys_ni_host', pre_handler: () => 0 }
    const b: Kprobe = { symbol_name: 'sys_ni_host', post_handler: () => {} }
    expect(kp.register_kprobes([a, b])).toBe(0)
    kp.kprobe_busy_begin(0)
    k.run(200_000)
    kp.kprobe_busy_end(0)
    expect(a.nmissed).toBeGreaterThan(3)
    expect(b.nmissed).toBe(a.nmissed)
    expect(kp.get_kprobe(a.addr as number)?.nmissed).toBe(0)
    kp.unregister_kprobes([a, b])
  })
})
