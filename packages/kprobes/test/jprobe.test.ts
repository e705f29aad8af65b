// Jprobes: the mirror handler gets the probed function's arguments; the function then runs untouched.

import { describe, expect, it } from 'vitest'
import {
  EEXIST,
  type Jprobe,
  jprobe_return,
  type Kprobe,
  Kprobes,
  type Kretprobe,
  regs_return_value,
} from '../src/index.js'
import { bootKernel, FORKER, textSnapshot } from './support/kernel.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

const PATH = [...new TextEncoder().encode('/no/such/file'), 0]
const BAD_OPENER = tinyElf([0x48, 0x8d, 0x3d, 11, 0, 0, 0, 0x31, 0xf6, ...syscall(2), 0xeb, 0xee, ...PATH])

describe('jprobes', () => {
  it('do_sys_open(dfd, filename, flags, mode): the mirror sees the arguments; the open still fails with -ENOENT', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const calls: number[][] = []
    const jp: Jprobe = {
      kp: { symbol_name: 'do_sys_open' },
      entry: (dfd, filename, flags, mode) => {
        calls.push([dfd | 0, flags, mode])
        expect(filename).toBeGreaterThan(0x400000) // the user pointer to PATH
        expect(filename).toBeLessThan(0x401000)
        jprobe_return()
      },
    }
    const rets: number[] = []
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      handler: (_ri, regs) => {
        rets.push(regs_return_value(regs))
        return 0
      },
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(0)
    // Jprobes go to the tail of the aggregate, other probes to the head.
    expect(kp.probes()).toEqual([rp.kp, jp.kp])
    k.run(400_000)
    expect(calls.length).toBeGreaterThan(3)
    for (const c of calls) expect(c).toEqual([-100, 0, 0])
    expect(new Set(rets)).toEqual(new Set([-2]))
    kp.unregister_kretprobe(rp)
    kp.unregister_jprobe(jp)
    k.run(50_000)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('one jprobe per address (-EEXIST); a kprobe may join; jprobes and post_handlers block optimization', () => {
    const k = bootKernel(1, [FORKER])
    const kp = new Kprobes(k)
    const flags: number[] = []
    const a: Jprobe = { kp: { symbol_name: 'do_fork' }, entry: (clone_flags) => void flags.push(clone_flags) }
    const b: Jprobe = { kp: { symbol_name: 'do_fork' }, entry: () => {} }
    expect(kp.register_jprobe(a)).toBe(0)
    const plain: Kprobe = { symbol_name: 'do_fork', pre_handler: () => 0 }
    expect(kp.register_kprobe(plain)).toBe(0)
    expect(kp.register_jprobe(b)).toBe(-EEXIST)
    const ap = kp.get_kprobe(a.kp.addr as number)
    expect(ap && kp.kprobeOptimizable(ap)).toBe(false)
    const other: Kprobe = { symbol_name: 'do_sys_open', pre_handler: () => 0 }
    const withPost: Kprobe = { symbol_name: 'sys_ni_host', post_handler: () => {} }
    expect(kp.register_kprobes([other, withPost])).toBe(0)
    expect(kp.kprobeOptimizable(other as never)).toBe(true)
    expect(kp.kprobeOptimizable(withPost as never)).toBe(false)
    k.run(500_000)
    expect(flags).toEqual([17]) // SIGCHLD
    expect(k.tasks.size).toBe(2) // the fork went through untouched
    kp.unregister_jprobe(a)
    kp.unregister_kprobes([plain, other, withPost])
    expect(kp.slots.usedSlots).toBe(0)
  })
})
