// debugfs kprobes/list and kprobes/enabled.

import { describe, expect, it } from 'vitest'
import {
  EINVAL,
  type Jprobe,
  KPROBE_FLAG_DISABLED,
  type Kprobe,
  Kprobes,
  type Kretprobe,
} from '../src/index.js'
import { bootKernel, callSysNiHost, textByte } from './support/kernel.js'

const hex = (v: number) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0')

describe('debugfs', () => {
  it('list: one line per probe (aggregate children individually), type k/j/r, sym+offset, [DISABLED]', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const a: Kprobe = { symbol_name: 'do_fork' }
    const callOffset = callSysNiHost(k).address - k.symbol('do_syscall_64')
    const b: Kprobe = { symbol_name: 'do_syscall_64', offset: callOffset, flags: KPROBE_FLAG_DISABLED }
    const rp: Kretprobe = { kp: { symbol_name: 'do_fork' } }
    const jp: Jprobe = { kp: { symbol_name: 'do_sys_open' }, entry: () => {} }
    expect(kp.register_kprobes([a, b])).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(0)
    expect(kp.register_jprobe(jp)).toBe(0)
    const fork = k.symbol('do_fork')
    const sys = k.symbol('do_syscall_64')
    const open = k.symbol('do_sys_open')
    const lines = [
      [fork, `${hex(fork)}  r  do_fork+0x0    \n`, `${hex(fork)}  k  do_fork+0x0    \n`],
      [sys, `${hex(sys + callOffset)}  k  do_syscall_64+0x${callOffset.toString(16)}    [DISABLED]\n`],
      [open, `${hex(open)}  j  do_sys_open+0x0    \n`],
    ]
      .sort((x, y) => (x[0] as number) - (y[0] as number))
      .flatMap((x) => x.slice(1))
    expect(kp.debugfsList()).toBe(lines.join(''))
  })

  it('enabled: "1\\n"/"0\\n"; writing 0 disarms everything, 1 re-arms all but the disabled ones', () => {
    const k = bootKernel()
    const kp = new Kprobes(k)
    const on: Kprobe = { symbol_name: 'do_fork' }
    const off: Kprobe = { symbol_name: 'do_sys_open', flags: KPROBE_FLAG_DISABLED }
    expect(kp.register_kprobes([on, off])).toBe(0)
    const onAddr = on.addr as number
    const offAddr = off.addr as number
    expect(kp.debugfsEnabledRead()).toBe('1\n')
    expect(kp.debugfsEnabledWrite('0\n')).toBe(0)
    expect(kp.debugfsEnabledRead()).toBe('0\n')
    expect(textByte(k, onAddr)).toBe(on.opcode)
    expect(kp.debugfsList()).not.toContain('do_fork+0x0    [DISABLED]') // per-probe state unchanged
    // Registered while globally disarmed: hashed, not armed.
    const late: Kprobe = { symbol_name: 'sys_ni_host' }
    expect(kp.register_kprobe(late)).toBe(0)
    expect(textByte(k, late.addr as number)).toBe(late.opcode)
    expect(kp.debugfsEnabledWrite('x')).toBe(-EINVAL)
    expect(kp.debugfsEnabledWrite('Y')).toBe(0)
    expect(kp.debugfsEnabledRead()).toBe('1\n')
    expect(textByte(k, onAddr)).toBe(0xcc)
    expect(textByte(k, late.addr as number)).toBe(0xcc)
    expect(textByte(k, offAddr)).toBe(off.opcode)
    expect(k.printk.text()).toContain('Kprobes globally disabled')
    expect(k.printk.text()).toContain('Kprobes globally enabled')
    k.run(100_000)
    kp.unregister_kprobes([on, off, late])
  })
})
