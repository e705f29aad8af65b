// Jprobes: the mirror handler gets the probed function's arguments; the function then runs untouched.

import { PT_REGS_SIZE, PtRegsFrame, stackTrace } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  EEXIST,
  type Jprobe,
  jprobe_return,
  KPROBE_HIT_ACTIVE,
  type Kprobe,
  Kprobes,
  type Kretprobe,
  type PtRegs,
  regs_return_value,
} from '../src/index.js'
import { BAD_OPENER, bootKernel, FORKER, textByte, textSnapshot } from './support/kernel.js'
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
    // open(path, O_RDONLY): sys_open adds O_LARGEFILE (0x8000) on 64-bit (force_o_largefile).
    for (const c of calls) expect(c).toEqual([-100, 0x8000, 0])
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

  it('the entry runs from jprobe_entry_stub in kernel text, with the arguments and current_kprobe set; backtraces show the stub', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    const stub = k.symbol('jprobe_entry_stub')
    const fmt = (a: number) => k.kallsyms.format(a)
    let seen: {
      args: number[]
      regsArgs: number[]
      ip: number
      sp: number
      interruptsOn: boolean
      running: Kprobe | null
      status: number
      cpuIp: string
      trace: string[]
      live: string[]
    } | null = null
    let calls = 0
    const jp: Jprobe = {
      kp: { symbol_name: 'do_sys_open' },
      entry: (dfd, filename, flags, mode) => {
        calls++
        if (seen) return
        const cpu = kp.smp_processor_id()
        const c = k.machine.cpus[cpu]
        const regs = kp.jprobe_regs()
        // What dump_stack() in the entry sees: the CPU itself, stopped at the stub's hypercall.
        const live = new PtRegsFrame(new Uint8Array(PT_REGS_SIZE), 0)
        live.set('ip', c.rip)
        live.set('sp', c.getLinear(4))
        live.set('bp', c.getLinear(5))
        seen = {
          args: [dfd, filename, flags, mode],
          regsArgs: (['di', 'si', 'dx', 'cx'] as const).map((r) => regs.get(r)),
          ip: regs.get('ip'),
          sp: regs.get('sp'),
          interruptsOn: (c.rflags & 0x200) !== 0,
          running: kp.kprobe_running(cpu),
          status: kp.get_kprobe_ctlblk(cpu).kprobe_status,
          cpuIp: fmt(c.rip),
          trace: stackTrace(k, regs).map(fmt),
          live: stackTrace(k, live).map(fmt),
        }
      },
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    // struct kprobe has the break_handler a jprobe needs (Linux <= 4.14).
    expect(typeof jp.kp.break_handler).toBe('function')
    k.run(300_000)
    expect(calls).toBeGreaterThan(3)
    expect(seen).not.toBeNull()
    const s = seen!
    expect(s.args[0] | 0).toBe(-100) // AT_FDCWD
    expect(s.args.slice(2)).toEqual([0x8000, 0]) // O_RDONLY | O_LARGEFILE, mode 0
    // The arguments are the registers the stub saved as the function would have them.
    expect(s.regsArgs).toEqual(s.args.slice(0, 4))
    expect(s.ip).toBe(stub)
    // The entry runs with interrupts off and the jprobe still current on this CPU.
    expect(s.interruptsOn).toBe(false)
    expect(s.running).toBe(jp.kp)
    expect(s.status).toBe(KPROBE_HIT_ACTIVE)
    // The CPU is in the guest: in hypercall(), called by the stub's C half.
    expect(s.cpuIp).toMatch(/^hypercall\+/)
    // From the stub's pt_regs: the stub, then do_sys_open's caller (sys_open), then on up.
    expect(s.trace[0]).toMatch(/^jprobe_entry_stub\+0x0\//)
    expect(s.trace[1]).toMatch(/^sys_open\+/)
    expect(s.trace).toContainEqual(expect.stringMatching(/^do_syscall_64\+/))
    // From the CPU: hypercall <- jprobe_call_entry <- the stub (a return address in it) <- sys_open.
    expect(s.live[0]).toMatch(/^hypercall\+/)
    expect(s.live[1]).toMatch(/^jprobe_call_entry\+/)
    expect(s.live[2]).toMatch(/^jprobe_entry_stub\+0x[1-9a-f]/)
    expect(s.live[3]).toMatch(/^sys_open\+/)
    // jprobe_regs is only for entries.
    expect(() => kp.jprobe_regs()).toThrow(/only from inside a jprobe entry/)
  })

  it('the function runs with its own registers and stack, whatever the entry wrote to them (kprobes.poke, jprobe_regs)', () => {
    const k = bootKernel(1, [MAPPER])
    const kp = new Kprobes(k)
    const GPRS = [
      'ax',
      'bx',
      'cx',
      'dx',
      'si',
      'di',
      'bp',
      'r8',
      'r9',
      'r10',
      'r11',
      'r12',
      'r13',
      'r14',
      'r15',
    ] as const
    const snapshot = (regs: PtRegs) => Object.fromEntries(GPRS.map((r) => [r, regs.get(r)]))
    let before: Record<string, number> = {}
    let after: Record<string, number> = {}
    let sp = 0
    let spAfter = 0
    let stackAfter: number[] = []
    let stackBefore: number[] = []
    // A kprobe at the same address runs first (a jprobe sits at the tail of the aggregate); its
    // post_handler runs after the first instruction (push %rbp) was stepped, past the break.
    const spy: Kprobe = {
      symbol_name: 'do_mmap',
      pre_handler: (_p, regs) => {
        before = snapshot(regs)
        sp = regs.get('sp')
        stackBefore = [0, 1, 2, 3].map((i) => kp.peek(sp + 8 * i))
        return 0
      },
      post_handler: (_p, regs) => {
        after = snapshot(regs)
        spAfter = regs.get('sp')
        stackAfter = [0, 1, 2, 3].map((i) => kp.peek(sp + 8 * i))
      },
    }
    let wrote = false
    let afterReturn = false
    const jp: Jprobe = {
      kp: { symbol_name: 'do_mmap' },
      entry: (_file, _addr, _len, _prot, _flags, _vm_flags, pgoff) => {
        expect(pgoff).toBe(5)
        const regs = kp.jprobe_regs()
        const fsp = regs.get('sp')
        // The return address, pgoff, populate and uf: all ~0 (a return to ~0 or populate = ~0 would oops).
        for (let i = 0; i < 4; i++) kp.poke(fsp + 8 * i, -1)
        expect(kp.peek(fsp + 8)).toBe(-1)
        // Every register the stub pops back into the CPU before jprobe_return.
        for (const r of GPRS) regs.set(r, 0x1234 + GPRS.indexOf(r))
        wrote = true
        jprobe_return()
        afterReturn = true // jprobe_return does not return
      },
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(kp.register_kprobe(spy)).toBe(0)
    expect(k.run().exit?.status).toBe(MAP_AT / 0x1000000)
    expect(wrote).toBe(true)
    expect(afterReturn).toBe(false)
    expect(after).toEqual(before) // push %rbp changed no register but sp
    expect(spAfter).toBe(sp - 8)
    expect(stackBefore[1]).toBe(5) // pgoff
    expect(stackAfter).toEqual(stackBefore)
  })

  for (const boost of [true, false]) {
    it(`recursion that really happens: a kprobe on jprobe_call_entry is hit inside every jprobe's handling and missed (boost ${boost})`, () => {
      const k = bootKernel(1, [BAD_OPENER])
      const kp = new Kprobes(k, { boost })
      const before = textSnapshot(k)
      let entries = 0
      let handled = 0
      const inner: Kprobe = {
        symbol_name: 'jprobe_call_entry',
        pre_handler: () => {
          handled++
          return 0
        },
      }
      const jp: Jprobe = { kp: { symbol_name: 'do_sys_open' }, entry: () => void entries++ }
      const rets: number[] = []
      const rp: Kretprobe = {
        kp: { symbol_name: 'do_sys_open' },
        handler: (_ri, regs) => {
          rets.push(regs_return_value(regs))
          return 0
        },
      }
      // Only the stub's path calls jprobe_call_entry (it is ordinary, probeable text).
      expect(kp.register_kprobe(inner)).toBe(0)
      expect(textByte(k, inner.addr as number)).toBe(0xcc)
      k.run(100_000)
      expect(inner.nmissed).toBe(0)
      expect(kp.register_jprobe(jp)).toBe(0)
      expect(kp.register_kretprobe(rp)).toBe(0)
      k.run(400_000)
      expect(entries).toBeGreaterThan(3)
      // Every entry went through jprobe_call_entry while the jprobe was current: a miss each time,
      // the handler never ran, the instruction was still executed (the entry was reached).
      expect(handled).toBe(0)
      expect(inner.nmissed).toBeGreaterThanOrEqual(entries)
      expect(inner.nmissed).toBeLessThanOrEqual(entries + 1)
      expect(jp.kp.nmissed).toBe(0)
      // The runs complete correctly: every open still fails with -ENOENT, and the machine goes on.
      expect(rets.length).toBeGreaterThan(3)
      expect(new Set(rets)).toEqual(new Set([-2]))
      // (The run may have stopped inside a jprobe's handling: unregistering lets it finish.)
      kp.unregister_kretprobe(rp)
      kp.unregister_jprobe(jp)
      kp.unregister_kprobe(inner)
      k.run(50_000)
      expect(kp.kprobe_running(0)).toBeNull()
      expect(textSnapshot(k)).toEqual(before)
      expect(kp.slots.usedSlots).toBe(0)
    })
  }
})
