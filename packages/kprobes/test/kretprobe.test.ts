// Kretprobes: the entry probe hijacks the return address, the guest's kretprobe_trampoline
// comes back through HC_KRETPROBE_TRAMPOLINE, the handler sees the return value.

import { stackTrace } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  E2BIG,
  EINVAL,
  ENOENT,
  type Kprobe,
  Kprobes,
  type Kretprobe,
  type KretprobeInstance,
  regs_return_value,
} from '../src/index.js'
import { BAD_OPENER, bootKernel, functionInsns, SPINNER, textSnapshot } from './support/kernel.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

/** exit(0) at once: do_exit never returns. */
const EXITER = tinyElf([0x31, 0xff, ...syscall(60)])

const AT_FDCWD = -100

describe('register_kretprobe', () => {
  it('return codes: not a function entry, blacklisted, data_size too big, registered twice', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    expect(kp.register_kretprobe({ kp: { symbol_name: 'do_sys_open', offset: 1 } })).toBe(-EINVAL)
    expect(kp.register_kretprobe({ kp: { symbol_name: 'no_such_function' } })).toBe(-ENOENT)
    expect(kp.register_kretprobe({ kp: { symbol_name: '__switch_to' } })).toBe(-EINVAL)
    expect(kp.register_kretprobe({ kp: { symbol_name: 'do_sys_open' }, data_size: 4097 })).toBe(-E2BIG)
    const rp: Kretprobe = { kp: { symbol_name: 'do_sys_open' } }
    expect(kp.register_kretprobe(rp)).toBe(0)
    expect(rp.maxactive).toBe(1) // NR_CPUS on this non-preemptible kernel
    expect(rp.nmissed).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(-EINVAL)
    kp.unregister_kretprobe(rp)
    const two = bootKernel(2)
    const kp2 = new Kprobes(two)
    const rp2: Kretprobe = { kp: { symbol_name: 'do_sys_open' }, maxactive: 0 }
    expect(kp2.register_kretprobe(rp2)).toBe(0)
    expect(rp2.maxactive).toBe(2)
  })
})

describe('kretprobe hits', () => {
  it('do_sys_open: the handler sees the negative errno of a failing open; data_size bytes go from entry_handler to handler', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const rets: number[] = []
    const dfds: number[] = []
    let entries = 0
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      data_size: 8,
      entry_handler: (ri, regs) => {
        entries++
        expect(ri.data.length).toBe(8)
        new DataView(ri.data.buffer).setInt32(0, regs.get('di') | 0, true) // int dfd
        return 0
      },
      handler: (ri, regs) => {
        rets.push(regs_return_value(regs))
        dfds.push(new DataView(ri.data.buffer).getInt32(0, true))
        // The real return address: just after the call in sys_open.
        expect(k.kallsyms.functionAt(ri.ret_addr)?.name).toBe('sys_open')
        expect(regs.get('ip')).toBe(k.symbol('kretprobe_trampoline'))
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    k.run(400_000)
    expect(rets.length).toBeGreaterThan(3)
    expect(new Set(rets)).toEqual(new Set([-ENOENT]))
    expect(new Set(dfds)).toEqual(new Set([AT_FDCWD]))
    expect(entries - rets.length).toBeLessThanOrEqual(1) // at most one call still in flight
    expect(rp.nmissed).toBe(0)
    kp.unregister_kretprobe(rp)
    k.run(100_000) // an instance still outstanding returns through the trampoline correctly
    expect(textSnapshot(k)).toEqual(before)
  })

  it('entry_handler returning non-zero: no return hook for that call, and it is not a miss', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    let entries = 0
    let handled = 0
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      entry_handler: (_ri, regs) => {
        entries++
        // Skipped calls keep their return address: the trampoline is not on the stack.
        if (entries % 2 === 0) return 1
        expect(k.readKernel64(regs.get('sp'))).not.toBe(k.symbol('kretprobe_trampoline'))
        return 0
      },
      handler: () => {
        handled++
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    k.run(400_000)
    expect(entries).toBeGreaterThan(4)
    expect(handled).toBeGreaterThanOrEqual(Math.floor(entries / 2) - 1)
    expect(handled).toBeLessThanOrEqual(Math.ceil(entries / 2))
    expect(rp.nmissed).toBe(0)
    kp.unregister_kretprobe(rp)
  })

  it('a kprobe and a kretprobe on one function (an aggregate); maxactive 1 on 2 vCPUs: overlapping calls are missed', () => {
    const k = bootKernel(2, [SPINNER, SPINNER])
    const kp = new Kprobes(k)
    let entries = 0
    let returns = 0
    const probe: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        entries++
        return 0
      },
    }
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_syscall_64' },
      maxactive: 1,
      handler: (ri) => {
        returns++
        expect(k.kallsyms.functionAt(ri.ret_addr)?.name).toBe('entry_SYSCALL_64')
        return 0
      },
    }
    expect(kp.register_kprobe(probe)).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(0)
    expect(kp.probes()).toEqual([rp.kp, probe])
    k.run(600_000)
    expect(returns).toBeGreaterThan(3)
    expect(rp.nmissed).toBeGreaterThan(0)
    // Every entry either got the one instance or was missed; at most one is still outstanding.
    const accounted = returns + (rp.nmissed as number)
    expect(entries - accounted).toBeGreaterThanOrEqual(0)
    expect(entries - accounted).toBeLessThanOrEqual(1)
    kp.unregister_kretprobe(rp)
    kp.unregister_kprobe(probe)
    k.run(100_000)
  })

  it('do_exit never returns: a dead task gives its instance back (maxactive 1, two exits, no miss)', () => {
    const k = bootKernel(1, [SPINNER, EXITER, EXITER]) // pid 1 keeps running
    const kp = new Kprobes(k)
    const tasks: number[] = []
    let handled = 0
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_exit' },
      maxactive: 1,
      entry_handler: (ri: KretprobeInstance) => {
        tasks.push(ri.task?.pid ?? -1)
        return 0
      },
      handler: () => {
        handled++
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    k.run(300_000)
    expect(tasks.length).toBe(2)
    expect(new Set(tasks).size).toBe(2)
    expect(rp.nmissed).toBe(0)
    expect(handled).toBe(0)
    kp.unregister_kretprobe(rp)
  })

  it('a return through the trampoline with no instance for the task prints "kretprobe BUG!"', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const rp: Kretprobe = { kp: { symbol_name: 'do_sys_open' }, handler: () => 0 }
    expect(kp.register_kretprobe(rp)).toBe(0) // installs the trampoline handler
    // A rogue probe puts the trampoline address on the stack without an instance.
    const rogue: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: (_p, regs) => {
        const b = new Uint8Array(8)
        new DataView(b.buffer).setBigInt64(0, BigInt(k.symbol('kretprobe_trampoline')), true)
        k.writeKernel(regs.get('sp'), b)
        return 0
      },
    }
    expect(kp.register_kprobe(rogue)).toBe(0)
    expect(() => k.run(300_000)).toThrow(/kretprobe BUG!/)
    expect(k.printk.text()).toMatch(/kretprobe BUG!: Processing kretprobe [0-9a-f]{16} @ [0-9a-f]{16}/)
  })
})

describe('backtraces', () => {
  it('a backtrace taken inside a kretprobed function shows the trampoline as its return address', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    const rp: Kretprobe = { kp: { symbol_name: 'do_sys_open' }, handler: () => 0 }
    expect(kp.register_kretprobe(rp)).toBe(0)
    // Inside the body, after "mov %rsp,%rbp": the frame's return slot now holds the trampoline.
    let trace: string[] = []
    // The instruction after "mov %rsp,%rbp" (48 89 e5).
    const insns = functionInsns(k, 'do_sys_open')
    const movRbp = insns.findIndex((i) => [...i.bytes].join() === '72,137,229')
    const offset = insns[movRbp + 1].address - k.symbol('do_sys_open')
    const inner: Kprobe = {
      symbol_name: 'do_sys_open',
      offset,
      pre_handler: (_p, regs) => {
        if (trace.length === 0) trace = stackTrace(k, regs).map((a) => k.kallsyms.format(a))
        return 0
      },
    }
    expect(kp.register_kprobe(inner)).toBe(0)
    k.run(200_000)
    expect(trace[0]).toMatch(new RegExp(`^do_sys_open\\+0x${(offset + 1).toString(16)}/`))
    expect(trace[1]).toMatch(/^kretprobe_trampoline\+0x0\//)
  })
})
