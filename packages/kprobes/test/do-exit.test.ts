// Every task's end goes through do_exit, as on Linux: exit(2), exit_group(2)
// (do_group_exit calls do_exit after zap_other_threads) and a fatal signal
// alike, so a kprobe on do_exit sees each exit once, with the wait status in
// its first argument.

import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes } from '../src/index.js'
import { bootKernel, SPINNER, textSnapshot } from './support/kernel.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

/** mov edi, 3; syscall n: exit(3) or exit_group(3). */
const exiter = (nr: number) => tinyElf([0xbf, 3, 0, 0, 0, ...syscall(nr)])
/** mov dword [0], 0: a write to page 0, SIGSEGV. */
const SEGV = tinyElf([0xc7, 0x04, 0x25, 0, 0, 0, 0, 0, 0, 0, 0])

describe('a kprobe on do_exit', () => {
  it('fires once per exit - exit, exit_group, a fatal SIGSEGV - with the wait status in rdi; do_group_exit only for the group ones', () => {
    const k = bootKernel(1, [SPINNER, exiter(60), exiter(231), SEGV])
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const exits: { pid: number; status: number }[] = []
    const groupExits: number[] = []
    const doExit: Kprobe = {
      symbol_name: 'do_exit',
      pre_handler: (_p, regs) => {
        exits.push({ pid: k.current(k.machine.cpus[0]).pid, status: Number(regs.get('di')) })
        return 0
      },
    }
    const doGroupExit: Kprobe = {
      symbol_name: 'do_group_exit',
      pre_handler: () => {
        groupExits.push(k.current(k.machine.cpus[0]).pid)
        return 0
      },
    }
    expect(kp.register_kprobe(doExit)).toBe(0)
    expect(kp.register_kprobe(doGroupExit)).toBe(0)
    k.run(2_000_000)
    // pids 2, 3, 4: exit(3) and exit_group(3) leave status 3 << 8; the write to page 0 dies of SIGSEGV (11).
    expect(exits).toEqual([
      { pid: 2, status: 3 << 8 },
      { pid: 3, status: 3 << 8 },
      { pid: 4, status: 11 },
    ])
    expect(groupExits).toEqual([3, 4])
    kp.unregister_kprobe(doExit)
    kp.unregister_kprobe(doGroupExit)
    expect(textSnapshot(k)).toEqual(before)
  })
})
