// register_kprobe / the int3 → single-step → post_handler path on the guest kernel.

import { decode, type Instruction } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import {
  EILSEQ,
  EINVAL,
  ENOENT,
  KPROBE_FLAG_DISABLED,
  KPROBE_HIT_SS,
  KPROBE_REENTER,
  KPROBES_NOTIFIER_PRIORITY,
  type Kprobe,
  Kprobes,
  MODULES_VADDR,
} from '../src/index.js'
import {
  BAD_WRITER,
  bootKernel,
  callSysNiHost,
  FORKER,
  functionInsns,
  relTarget,
  SPINNER,
  textByte,
  textSnapshot,
} from './support/kernel.js'

const DIE_DEBUG = 3

describe('register_kprobe: arming and disarming', () => {
  it('plants int3 in kernel text while armed; kernel text is byte-identical after unregister', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const probes: Kprobe[] = [
      { symbol_name: 'do_syscall_64' },
      { symbol_name: 'sys_ni_host' },
      { symbol_name: 'do_syscall_64', offset: callSysNiHost(k).address - k.symbol('do_syscall_64') },
      { symbol_name: 'do_fork' },
    ]
    for (const p of probes) expect(kp.register_kprobe(p)).toBe(0)
    for (const p of probes) {
      expect(textByte(k, p.addr as number)).toBe(0xcc)
      expect(p.opcode).toBe(before[(p.addr as number) - k.image.textStart])
    }
    k.run(300_000)
    for (const p of probes) kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
    expect(kp.slots.usedSlots).toBe(0)
    k.run(100_000) // and the programs carry on through the restored text
  })

  it('the copy lives in an executable slot page in the module area', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const p: Kprobe = { symbol_name: 'do_syscall_64' }
    expect(kp.register_kprobe(p)).toBe(0)
    const slot = p.ainsn?.insn as number
    expect(slot).toBe(MODULES_VADDR)
    expect([...kp.slots.read(slot, 1)]).toEqual([0x55]) // push %rbp
  })
})

describe('register_kprobe: refusals and return codes', () => {
  const k = bootKernel()
  const kp = new Kprobes(k)

  it('-EINVAL when both addr and symbol_name are given, or neither', () => {
    expect(kp.register_kprobe({ symbol_name: 'do_fork', addr: k.symbol('do_fork') })).toBe(-EINVAL)
    expect(kp.register_kprobe({})).toBe(-EINVAL)
  })

  it('-ENOENT for an unknown symbol', () => {
    expect(kp.register_kprobe({ symbol_name: 'no_such_function' })).toBe(-ENOENT)
  })

  it('-EINVAL outside kernel text', () => {
    expect(kp.register_kprobe({ addr: k.symbol('target_return_address') })).toBe(-EINVAL)
    expect(kp.register_kprobe({ addr: 0x400000 })).toBe(-EINVAL)
  })

  it('-EINVAL in the blacklist, .entry.text and .kprobes.text', () => {
    for (const name of ['do_int3', 'notify_die', 'notifier_call_chain', 'do_page_fault', '__switch_to']) {
      expect(kp.register_kprobe({ symbol_name: name }), name).toBe(-EINVAL)
    }
    // Inside a blacklisted function, not only at its start.
    expect(kp.register_kprobe({ symbol_name: 'do_int3', offset: 1 })).toBe(-EINVAL)
    expect(kp.register_kprobe({ symbol_name: 'entry_SYSCALL_64' })).toBe(-EINVAL)
    expect(kp.register_kprobe({ symbol_name: 'hypercall' })).toBe(-EINVAL)
    expect(kp.register_kprobe({ symbol_name: 'kretprobe_trampoline' })).toBe(-EINVAL)
  })

  it('-EILSEQ off an instruction boundary', () => {
    // do_syscall_64: 55 | 48 89 e5 | 53 ...; +2 is inside mov %rsp,%rbp.
    expect(kp.register_kprobe({ symbol_name: 'do_syscall_64', offset: 2 })).toBe(-EILSEQ)
    expect(kp.register_kprobe({ symbol_name: 'do_syscall_64', offset: 1 })).toBe(0)
  })

  it('-EINVAL on an int3 that is not ours (another debugger got there first)', () => {
    const at = k.symbol('kprobe_target2')
    const old = k.services.textPoke(at, [0xcc])
    expect(kp.register_kprobe({ addr: at })).toBe(-EINVAL)
    k.services.textPoke(at, old)
    expect(kp.slots.usedSlots).toBe(1) // the failed attempt gave its slot back
  })

  it('-EINVAL when the same struct kprobe is registered twice; a second probe at one address joins an aggregate', () => {
    const p: Kprobe = { symbol_name: 'kprobe_target' }
    expect(kp.register_kprobe(p)).toBe(0)
    expect(kp.register_kprobe(p)).toBe(-EINVAL) // addr and symbol_name are both set now
    const q: Kprobe = { addr: p.addr }
    expect(kp.register_kprobe(q)).toBe(0)
    expect(kp.register_kprobe(q)).toBe(-EINVAL) // a child of the aggregate is registered too
    kp.unregister_kprobes([p, q])
    // Reuse after clearing addr (as test_kprobes does).
    p.addr = null
    expect(kp.register_kprobe(p)).toBe(0)
    kp.unregister_kprobe(p)
  })

  it('unregistering a probe that is not registered is a no-op that clears addr', () => {
    const text = textSnapshot(k)
    const p: Kprobe = { addr: k.symbol('do_fork') }
    kp.unregister_kprobe(p)
    expect(p.addr).toBeNull()
    expect(textSnapshot(k)).toEqual(text)
  })

  it('RIP-relative operands are re-targeted for the slot, or refused when the slot is out of reach', () => {
    // kprobe_stacktrace_internal_target: mov target_return_address(%rip),%rax
    const fn = k.symbol('kprobe_stacktrace_internal_target')
    const target = k.symbol('target_return_address')
    let addr = fn
    let insn = decode(k.readKernel(addr, 16), addr)
    while (!insn.ripRelative) {
      addr += insn.length
      insn = decode(k.readKernel(addr, 16), addr)
    }
    const p: Kprobe = { addr }
    expect(kp.register_kprobe(p)).toBe(0)
    const slot = p.ainsn?.insn as number
    const copy = decode(kp.slots.read(slot, 16), slot)
    expect(copy.length).toBe(insn.length)
    expect(slot + copy.length + copy.displacement).toBe(target)
    kp.unregister_kprobe(p)

    // A slot page in the vmalloc area (0xffffc90000000000) is > 2 GiB away.
    const far = new Kprobes(k, { slotBase: -0x370000000000 })
    expect(far.register_kprobe({ addr })).toBe(-EILSEQ)
    expect(far.register_kprobe({ symbol_name: 'kprobe_target' })).toBe(0)
  })
})

describe('the hit path', () => {
  it('pre_handler sees regs.ip just after the int3 (x86: addr + 1); post_handler sees push %rbp done (sp-8, [sp]=rbp, ip+1)', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const events: string[] = []
    let pre = { ip: 0, sp: 0, bp: 0, flags: 0 }
    let checked = 0
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: (_p, regs) => {
        events.push('pre')
        // As on x86 Linux: the trap left ip after the 0xcc (kprobe_int3_handler uses ip - 1).
        expect(regs.get('ip') - 1).toBe(p.addr)
        pre = { ip: regs.get('ip'), sp: regs.get('sp'), bp: regs.get('bp'), flags: regs.get('flags') }
        return 0
      },
      post_handler: (_p, regs, flags) => {
        events.push('post')
        expect(flags).toBe(0)
        expect(regs.get('ip')).toBe((p.addr as number) + 1)
        expect(regs.get('sp')).toBe(pre.sp - 8)
        expect(k.readKernel64(regs.get('sp'))).toBe(pre.bp)
        expect(regs.get('flags') & 0x100).toBe(0) // TF gone
        // IF as it was before the step (the step itself ran with IF clear).
        expect(regs.get('flags') & 0x200).toBe(pre.flags & 0x200)
        checked++
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(checked).toBeGreaterThan(5)
    // Strict alternation: each hit runs pre once, then post once.
    const n = events.length - (events.length % 2)
    for (let i = 0; i < n; i++) expect(events[i]).toBe(i % 2 === 0 ? 'pre' : 'post')
    kp.unregister_kprobe(p)
  })

  it('the probed instruction is stepped in the slot, never in place (#DB arrives with ip in the slot)', () => {
    const k = bootKernel()
    const debugIps: number[] = []
    // A spy ahead of kprobes on the die chain (same priority, registered first).
    k.traps.registerDieNotifier((val, regs) => {
      if (val === DIE_DEBUG) debugIps.push(k.frame(regs).get('ip'))
      return 0
    }, KPROBES_NOTIFIER_PRIORITY)
    const kp = new Kprobes(k)
    let hits = 0
    const p: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: () => {
        hits++
        return 0
      },
      // A post_handler needs the single-step (it turns boosting off).
      post_handler: () => {},
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    // The budget may end between a hit's int3 and its step's #DB: let that step finish.
    const seen = hits
    if (debugIps.length < hits) k.run(10_000)
    expect(hits).toBeGreaterThan(0)
    expect(debugIps.length).toBeGreaterThanOrEqual(seen)
    const slot = p.ainsn?.insn as number
    for (const ip of debugIps.slice(0, seen)) expect(ip).toBe(slot + 1) // after the copied push %rbp
    kp.unregister_kprobe(p)
  })

  it('call rel32 stepped out of line: ip at the callee, return address after the original call', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    let posts = 0
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      offset: callSysNiHost(k).address - k.symbol('do_syscall_64'),
      post_handler: (_p, regs) => {
        expect(regs.get('ip')).toBe(k.symbol('sys_ni_host'))
        expect(k.readKernel64(regs.get('sp'))).toBe((p.addr as number) + 5)
        posts++
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(posts).toBeGreaterThan(5)
    kp.unregister_kprobe(p)
  })

  it('ret stepped out of line: ip is the popped return address (no slot-relative adjustment)', () => {
    const k = bootKernel()
    const kp = new Kprobes(k, { boost: false })
    // sys_ni_host's `leave; ret` (it returns into do_syscall_64 after every host syscall).
    let at = k.symbol('sys_ni_host')
    while (!(textByte(k, at) === 0xc9 && textByte(k, at + 1) === 0xc3)) at++
    at++
    expect(textByte(k, at)).toBe(0xc3)
    const seen: { ret: number; ip: number; sp: number; spAfter: number }[] = []
    let ret = 0
    let sp = 0
    const p: Kprobe = {
      addr: at,
      pre_handler: (_p, regs) => {
        sp = regs.get('sp')
        ret = k.readKernel64(sp)
        return 0
      },
      post_handler: (_p, regs) => void seen.push({ ret, ip: regs.get('ip'), sp, spAfter: regs.get('sp') }),
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    kp.unregister_kprobe(p)
    expect(seen.length).toBeGreaterThan(3)
    for (const s of seen) {
      expect(s.ip).toBe(s.ret)
      expect(k.kallsyms.format(s.ip)).toMatch(/^do_syscall_64\+/)
      expect(s.spAfter).toBe(s.sp + 8)
    }
  })

  it('jmp rel8 and an indirect jmp through the switch table land where the originals would', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const base = k.symbol('do_syscall_64')
    const insns = functionInsns(k, 'do_syscall_64')
    // The jmp back after `call sys_ni_host`, and the jump-table dispatch (jmp *table(,%rsi,8)).
    const jmpBack = insns[insns.findIndex((i) => i.address === callSysNiHost(k).address) + 1]
    expect(jmpBack.mnemonic).toBe('jmp')
    expect(jmpBack.length).toBe(2) // jmp rel8
    const dispatch = insns.find((i) => i.mnemonic === 'jmp' && i.operands[0]?.kind === 'mem') as Instruction
    // Numbers above the table's range take the `ja` to the default case; getpid (39) is in range
    // but has no case of its own, so its table slot holds the same default.
    const defaultCase = relTarget(insns.find((i) => i.mnemonic === 'ja') as Instruction)
    const seen: Record<string, number[]> = { rel: [], table: [] }
    const rel: Kprobe = {
      addr: jmpBack.address,
      post_handler: (_p, r) => void seen.rel.push(r.get('ip') - base),
    }
    const table: Kprobe = {
      addr: dispatch.address,
      post_handler: (_p, r) => void seen.table.push(r.get('ip') - base),
    }
    expect(kp.register_kprobe(rel)).toBe(0)
    expect(kp.register_kprobe(table)).toBe(0)
    k.run(300_000)
    expect(seen.rel.length).toBeGreaterThan(3)
    expect(new Set(seen.rel)).toEqual(new Set([relTarget(jmpBack) - base]))
    expect(new Set(seen.table)).toEqual(new Set([defaultCase - base]))
    kp.unregister_kprobes([rel, table])
  })

  it('a pre_handler that sets regs.ip and returns 1 skips the single-step and the post_handler', () => {
    const k = bootKernel()
    const debugs: number[] = []
    k.traps.registerDieNotifier((val) => {
      if (val === DIE_DEBUG) debugs.push(1)
      return 0
    }, KPROBES_NOTIFIER_PRIORITY)
    const kp = new Kprobes(k)
    let pres = 0
    let posts = 0
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: (_p, regs) => {
        // Emulate push %rbp ourselves and continue after it.
        const sp = regs.get('sp') - 8
        const b = new Uint8Array(8)
        new DataView(b.buffer).setBigInt64(0, BigInt(regs.get('bp')), true)
        k.writeKernel(sp, b)
        regs.set('sp', sp)
        regs.set('ip', (p.addr as number) + 1)
        pres++
        return 1
      },
      post_handler: () => void posts++,
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(pres).toBeGreaterThan(5)
    expect(posts).toBe(0)
    expect(debugs.length).toBe(0)
    expect(kp.kprobe_running(0)).toBeNull()
    kp.unregister_kprobe(p)
  })

  it('a probe on do_fork fires once for the one fork, with clone_flags = SIGCHLD', () => {
    const k = bootKernel(1, [FORKER])
    const kp = new Kprobes(k)
    const flags: number[] = []
    const p: Kprobe = {
      symbol_name: 'do_fork',
      pre_handler: (_p, r) => {
        flags.push(r.get('di'))
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(500_000)
    expect(flags).toEqual([17])
    expect(k.tasks.size).toBe(2)
    kp.unregister_kprobe(p)
  })

  it('nmissed: a hit while the CPU is already handling a probe runs no handler but is still stepped', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    let pres = 0
    let posts = 0
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        pres++
        return 0
      },
      post_handler: () => void posts++,
    }
    expect(kp.register_kprobe(p)).toBe(0)
    kp.kprobe_busy_begin(0)
    k.run(300_000)
    // The budget may end inside a re-entered step (p current until it completes): let it complete.
    const kcb = kp.get_kprobe_ctlblk(0)
    for (let i = 0; i < 100 && kcb.kprobe_status === KPROBE_REENTER; i++) k.run(1_000)
    expect(pres).toBe(0)
    expect(posts).toBe(0)
    const missed = p.nmissed as number
    expect(missed).toBeGreaterThan(5)
    // The outer (busy) state was restored after each re-entered step.
    expect(kp.kprobe_running(0)).not.toBe(p)
    kp.kprobe_busy_end(0)
    k.run(300_000)
    expect(pres).toBeGreaterThan(5)
    expect(p.nmissed).toBe(missed)
    kp.unregister_kprobe(p)
  })

  it('disable_kprobe restores the byte and stops hits; enable_kprobe re-arms; a probe may start disabled', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    let pres = 0
    const p: Kprobe = {
      symbol_name: 'sys_ni_host',
      flags: KPROBE_FLAG_DISABLED,
      pre_handler: () => {
        pres++
        return 0
      },
    }
    const orig = textByte(k, k.symbol('sys_ni_host'))
    expect(kp.register_kprobe(p)).toBe(0)
    expect(textByte(k, p.addr as number)).toBe(orig)
    k.run(200_000)
    expect(pres).toBe(0)
    expect(kp.enable_kprobe(p)).toBe(0)
    expect(textByte(k, p.addr as number)).toBe(0xcc)
    k.run(200_000)
    const n = pres
    expect(n).toBeGreaterThan(0)
    expect(kp.disable_kprobe(p)).toBe(0)
    expect(textByte(k, p.addr as number)).toBe(orig)
    k.run(200_000)
    expect(pres).toBe(n)
    expect(kp.disable_kprobe({ symbol_name: 'do_fork' })).toBe(-EINVAL)
    expect(kp.enable_kprobe({ symbol_name: 'do_fork' })).toBe(-EINVAL)
    kp.unregister_kprobe(p)
  })

  it('fault_handler runs when the stepped copy faults (#PF 14); the exception table then fixes it up in place', () => {
    const k = bootKernel(1, [BAD_WRITER])
    const kp = new Kprobes(k)
    const at = k.symbol('copy_from_user') + 0x41 // rep movsb, an __ex_table user
    expect(k.image.exceptionTable.some((e) => e.insn === at)).toBe(true)
    let pres = 0
    const faults: { trapnr: number; ip: number }[] = []
    const p: Kprobe = {
      addr: at,
      pre_handler: () => {
        pres++
        return 0
      },
      fault_handler: (_p, regs, trapnr) => {
        faults.push({ trapnr, ip: regs.get('ip') })
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(400_000)
    const slot = p.ainsn?.insn
    kp.unregister_kprobe(p) // waits for the CPU to finish the hit in flight
    expect(pres).toBeGreaterThan(2)
    expect(faults.length).toBe(pres)
    for (const f of faults) expect(f).toEqual({ trapnr: 14, ip: slot })
    expect(kp.kprobe_running(0)).toBeNull()
  })
})

describe('SMP', () => {
  it('two vCPUs hitting one probe keep their kprobe_ctlblk apart', () => {
    const k = bootKernel(2, [SPINNER, SPINNER])
    const kp = new Kprobes(k)
    const perCpu = [0, 0]
    const last: string[] = ['', '']
    let overlap = 0
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        const cpu = kp.smp_processor_id()
        expect(last[cpu]).not.toBe('pre')
        last[cpu] = 'pre'
        perCpu[cpu]++
        const other = kp.get_kprobe_ctlblk(1 - cpu)
        if (other.current === p && other.kprobe_status === KPROBE_HIT_SS) overlap++
        return 0
      },
      post_handler: () => {
        const cpu = kp.smp_processor_id()
        expect(last[cpu]).toBe('pre')
        last[cpu] = 'post'
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(2_000_000)
    expect(perCpu[0]).toBeGreaterThan(5)
    expect(perCpu[1]).toBeGreaterThan(5)
    expect(overlap).toBeGreaterThan(0)
    kp.unregister_kprobe(p)
    expect(kp.kprobe_running(0)).toBeNull()
    expect(kp.kprobe_running(1)).toBeNull()
  })
})
