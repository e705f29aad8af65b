// Faults inside handlers (kprobe_fault_handler's HIT_ACTIVE / HIT_SSDONE case): a handler's
// peek/poke goes through the hit CPU's MMU; a miss is offered to the probe's fault_handler
// with the trap number (14 #PF, 13 #GP); 1 means handled, 0 means the kernel oopses.

import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes } from '../src/index.js'
import { bootKernel, textSnapshot } from './support/kernel.js'

const NON_CANONICAL = 2 ** 47 // the first address past the lower half: #GP, not #PF

describe('faults in handlers', () => {
  it('a handler reads kernel memory through the MMU: at the probe address it finds its own int3', () => {
    const k = bootKernel(1)
    const kp = new Kprobes(k)
    const seen: number[] = []
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: (self) => {
        seen.push(kp.peek(self.addr as number, 1), kp.peek(self.addr as number, 4) & 0xff)
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(100_000)
    kp.unregister_kprobe(p)
    expect(seen.length).toBeGreaterThan(2)
    expect(new Set(seen)).toEqual(new Set([0xcc]))
    expect(() => kp.peek(k.symbol('do_syscall_64'), 1)).toThrow(/only from inside a probe handler/)
  })

  it('#PF (14) in a pre_handler: fault_handler handles it, the handler ends there, nmissed counts it, the step goes on', () => {
    const k = bootKernel(1)
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    let pres = 0
    let afterPeek = 0
    let posts = 0
    const faults: number[] = []
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        pres++
        kp.peek(0) // a NULL dereference
        afterPeek++
        return 0
      },
      post_handler: () => void posts++,
      fault_handler: (_p, regs, trapnr) => {
        faults.push(trapnr)
        expect(regs.get('ip')).toBe((p.addr as number) + 1) // the probed context's registers
        return 1
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    const { result } = k.run(100_000)
    kp.unregister_kprobe(p)
    expect(result.reason).toBe('budget') // the getpid loop kept running
    expect(pres).toBeGreaterThan(2)
    expect(afterPeek).toBe(0)
    expect(faults).toEqual(new Array(pres).fill(14))
    expect(posts).toBe(pres)
    expect(p.nmissed).toBe(pres)
    expect(k.machine.cpus[0].cr2).toBe(0)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('#GP (13) in a post_handler (non-canonical address), handled', () => {
    const k = bootKernel(1)
    const kp = new Kprobes(k)
    const faults: number[] = []
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      post_handler: () => kp.poke(NON_CANONICAL, 1),
      fault_handler: (_p, _regs, trapnr) => {
        faults.push(trapnr)
        return 1
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    expect(k.run(100_000).result.reason).toBe('budget')
    kp.unregister_kprobe(p)
    expect(faults.length).toBeGreaterThan(2)
    expect(new Set(faults)).toEqual(new Set([13]))
  })

  it('in an aggregate only the child whose handler faulted is asked (kprobe_instance); every child counts the miss', () => {
    const k = bootKernel(1)
    const kp = new Kprobes(k)
    const asked: string[] = []
    const a: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => 0,
      fault_handler: () => {
        asked.push('a')
        return 1
      },
    }
    const b: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        kp.peek(0)
        return 0
      },
      fault_handler: () => {
        asked.push('b')
        return 1
      },
    }
    expect(kp.register_kprobes([a, b])).toBe(0)
    k.run(60_000)
    kp.unregister_kprobes([a, b])
    expect(asked.length).toBeGreaterThan(1)
    expect(new Set(asked)).toEqual(new Set(['b']))
    expect(a.nmissed).toBe(asked.length)
    expect(b.nmissed).toBe(asked.length)
  })

  it('not handled (fault_handler returns 0, or none): the kernel oopses and the run stops with the oops', () => {
    for (const fault_handler of [() => 0, undefined]) {
      const k = bootKernel(1)
      const kp = new Kprobes(k)
      let after = 0
      const p: Kprobe = {
        symbol_name: 'do_syscall_64',
        pre_handler: () => {
          kp.peek(16)
          after++
          return 0
        },
        fault_handler,
      }
      expect(kp.register_kprobe(p)).toBe(0)
      const { result } = k.run(100_000)
      expect(result.reason).toBe('oops')
      expect(result.detail).toMatch(
        /^BUG: unable to handle kernel NULL pointer dereference at 0+10; IP: handler of the probe at do_syscall_64\+0x0/,
      )
      expect(after).toBe(0)
      expect(k.printk.text()).toContain('BUG: unable to handle kernel NULL pointer dereference')
    }
  })
})
