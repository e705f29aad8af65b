// Every way of creating a task goes through the guest kernel: glibc's pthread_create (clone3)
// reaches sys_clone3 -> kernel_clone -> copy_process, so probes there see thread creation.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes, type Kretprobe, regs_return_value } from '../src/index.js'
import { bootKernel } from './support/kernel.js'

const THREADS = new Uint8Array(
  readFileSync(new URL('../../kernel/fixtures/bin/threads-glibc-O2', import.meta.url)),
)
const CLONE_THREAD = 0x10000

describe('clone3 through the guest kernel', () => {
  it('glibc pthread_create: kprobes on sys_clone3 and kernel_clone fire, the kretprobe sees the new tids', () => {
    const k = bootKernel(1, [THREADS])
    const kp = new Kprobes(k)
    let clone3 = 0
    const flags: number[] = []
    const tids: number[] = []
    const entry: Kprobe = {
      symbol_name: 'sys_clone3',
      pre_handler: () => {
        clone3++
        return 0
      },
    }
    const clone: Kprobe = {
      symbol_name: 'kernel_clone',
      // struct kernel_clone_args *args in rdi: flags is its first field.
      pre_handler: (_p, regs) => {
        flags.push(kp.peek(regs.get('di')))
        return 0
      },
    }
    const ret: Kretprobe = {
      kp: { symbol_name: 'kernel_clone' },
      handler: (_ri, regs) => {
        tids.push(regs_return_value(regs))
        return 0
      },
    }
    expect(kp.register_kprobes([entry, clone])).toBe(0)
    expect(kp.register_kretprobe(ret)).toBe(0)
    const { exit } = k.run(400_000_000)
    expect(exit?.status).toBe(0)
    expect(clone3).toBe(5) // threads.c: NTHREADS (4) workers and the trylocker
    expect(flags).toHaveLength(5)
    for (const f of flags) expect(f & CLONE_THREAD).toBe(CLONE_THREAD)
    expect(tids).toHaveLength(5)
    expect(new Set(tids).size).toBe(5)
    for (const t of tids) expect(t).toBeGreaterThan(1)
  })
})
