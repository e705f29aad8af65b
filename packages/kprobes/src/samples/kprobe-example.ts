// The seeds' kprobe example (Documentation/kprobes.txt, "Kprobes Example"),
// as a host "module": a kprobe on do_fork with pre, post and fault handlers;
// the pre_handler prints the registers and dumps the stack.

import { dumpStack, type Kernel } from '@probekit/kernel'
import type { Kprobe } from '../kprobe.js'
import type { Kprobes } from '../kprobes.js'

const hex = (v: number) => BigInt.asUintN(64, BigInt(v)).toString(16)

export function kprobeExample(kernel: Kernel, kprobes: Kprobes) {
  const printk = (s: string) => kernel.printk.log(kernel.jiffies, s)
  const kp: Kprobe = {
    // kprobe pre_handler: called just before the probed instruction is executed
    pre_handler: (p, regs) => {
      printk(
        `pre_handler: p->addr=0x${hex(p.addr!)}, rip=${hex(regs.get('ip'))}, rflags=0x${hex(regs.get('flags'))}`,
      )
      dumpStack(kernel, regs)
      return 0
    },
    // kprobe post_handler: called after the probed instruction is executed
    post_handler: (p, regs) => {
      printk(`post_handler: p->addr=0x${hex(p.addr!)}, rflags=0x${hex(regs.get('flags'))}`)
    },
    // fault_handler: called if an exception is generated while kprobes single-steps the probed instruction
    fault_handler: (p, _regs, trapnr) => {
      printk(`fault_handler: p->addr=0x${hex(p.addr!)}, trap #${trapnr}`)
      // Return 0 because we don't handle the fault.
      return 0
    },
  }
  return {
    init_module(): number {
      const addr = kernel.kallsyms.lookupName('do_fork')
      if (addr === undefined) {
        printk("Couldn't find do_fork to plant kprobe")
        return -1
      }
      kp.addr = addr
      const ret = kprobes.register_kprobe(kp)
      if (ret < 0) {
        printk(`register_kprobe failed, returned ${ret}`)
        return -1
      }
      printk('kprobe registered')
      return 0
    },
    cleanup_module(): void {
      kprobes.unregister_kprobe(kp)
      printk('kprobe unregistered')
    },
    kp,
  }
}
