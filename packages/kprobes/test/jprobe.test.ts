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
import { BAD_OPENER, bootKernel, FORKER, textSnapshot } from './support/kernel.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

const imm32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff]
const MAP_AT = 0x10000000
/**
 * mmap(MAP_AT, 0x3000, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED, -1, 0x5000),
 * store into the new mapping (faults if it failed), exit(result >> 24): 16 on success.
 */
// biome-ignore format: one instruction per line
const MAPPER = tinyElf([
  0xbf, ...imm32(MAP_AT),
  0xbe, ...imm32(0x3000),
  0xba, ...imm32(3),
  0x41, 0xba, ...imm32(0x32),
  0x49, 0xc7, 0xc0, ...imm32(-1),
  0x41, 0xb9, ...imm32(0x5000),
  ...syscall(9),
  0xc6, 0x04, 0x25, ...imm32(MAP_AT + 0x2000), 42,
  0x48, 0x89, 0xc7, // mov rdi, rax
  0x48, 0xc1, 0xef, 0x18, // shr rdi, 24
  ...syscall(60),
])

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

  it('do_mmap(file, addr, len, prot, flags, vm_flags, pgoff, populate, uf): arguments 7-9 come from the stack', () => {
    const k = bootKernel(1, [MAPPER])
    const kp = new Kprobes(k)
    const seen: number[][] = []
    const jp: Jprobe = {
      kp: { symbol_name: 'do_mmap' },
      entry: (file, addr, len, prot, flags, vm_flags, pgoff, populate, uf) =>
        void seen.push([file, addr, len, prot, flags, vm_flags, pgoff, populate, uf]),
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(k.run().exit?.status).toBe(MAP_AT / 0x1000000)
    expect(seen).toHaveLength(1)
    const [args] = seen
    // sys_mmap turned the byte offset into pages; vm_mmap_pgoff passed vm_flags 0 and uf NULL.
    expect(args.slice(0, 7)).toEqual([0, MAP_AT, 0x3000, 3, 0x32, 0, 5])
    expect(args[8]).toBe(0)
    // populate points into vm_mmap_pgoff's frame on the kernel stack (the upper half; values are signed).
    expect(args[7]).toBeLessThan(0)
    expect(args[7]).toBeGreaterThanOrEqual(-(2 ** 47))
  })

  it('the stack the mirror scribbled on is put back: do_mmap still sees its own pgoff and populate', () => {
    const k = bootKernel(1, [MAPPER])
    const kp = new Kprobes(k)
    let sp = 0
    let afterStep = 0
    // A kprobe at the same address runs first (jprobes sit at the tail of the aggregate) and tells
    // us sp; its post_handler, after the single-step, sees the stack the function runs with.
    const spy: Kprobe = {
      symbol_name: 'do_mmap',
      pre_handler: (_p, regs) => {
        sp = regs.get('sp')
        return 0
      },
      post_handler: () => {
        afterStep = k.readKernel64(sp + 8)
      },
    }
    const ones = new Uint8Array(16).fill(0xff)
    const jp: Jprobe = {
      kp: { symbol_name: 'do_mmap' },
      entry: () => {
        // pgoff = ~0 would make do_mmap fail with -EOVERFLOW; populate = ~0 would oops it.
        k.writeKernel(sp + 8, ones)
        expect(k.readKernel64(sp + 8)).toBe(-1)
      },
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(kp.register_kprobe(spy)).toBe(0)
    expect(k.run().exit?.status).toBe(MAP_AT / 0x1000000)
    expect(afterStep).toBe(5)
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
