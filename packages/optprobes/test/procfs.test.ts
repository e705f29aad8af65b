// The sysctl as the seed's appendix B gives it: the file
// /proc/sys/debug/kprobes-optimization, read and written by a real program
// in the guest (busybox sh): "1" by default, echo 0 unoptimizes every probe
// before the write returns, echo 1 queues them again, anything else EINVAL.

import type { Kprobe, Kprobes } from '@probekit/kprobes'
import { describe, expect, it } from 'vitest'
import { BUSYBOX, bootBusybox, busyboxAvailable } from '../../kprobes/test/support/busybox.js'
import { Optprobes } from '../src/index.js'

describe.skipIf(!busyboxAvailable)('/proc/sys/debug/kprobes-optimization', () => {
  it('a shell in the guest reads it, turns optimization off (every jump goes at once) and on, and gets EINVAL for 2', () => {
    const { k, kp, out } = bootBusybox()
    const op = new Optprobes(kp as Kprobes)
    const addr = k.symbol('do_sys_open')
    const p: Kprobe = { addr, pre_handler: () => 0 }
    expect(kp.register_kprobe(p)).toBe(0)
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(addr)).toBe(true)
    let atWrite: boolean | null = null
    // Seen just after the shell's write to the file returns: is the jump still there?
    const watch: Kprobe = {
      symbol_name: 'ksys_write',
      pre_handler: () => 0,
      post_handler: () => {
        if (atWrite === null && op.kprobes_optimization === 0) atWrite = op.isOptimized(addr)
      },
    }
    expect(kp.register_kprobe(watch)).toBe(0)
    const F = '/proc/sys/debug/kprobes-optimization'
    k.spawn(BUSYBOX, [
      'sh',
      '-c',
      `cat ${F}; ls /proc/sys/debug; echo 0 > ${F}; cat ${F}; echo 2 > ${F} || echo refused; echo 1 > ${F}; cat ${F}`,
    ])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('1\nkprobes-optimization\n0\nrefused\n1\n')
    expect(atWrite).toBe(false)
    // Back on: queued again, optimized by the next work.
    op.wait_for_kprobe_optimizer()
    expect(op.isOptimized(addr)).toBe(true)
    expect(k.sysctls.get('debug.kprobes_optimization')?.read()).toBe('1\n')
  })
})
