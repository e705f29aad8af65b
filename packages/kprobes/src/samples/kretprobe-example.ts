// The seeds' kretprobe example: report failed calls to sys_open, with up to
// 20 instances probed concurrently, and the misses at unload.

import type { Kernel } from '@probekit/kernel'
import type { Kprobes } from '../kprobes.js'
import type { Kretprobe } from '../kretprobe.js'

const hex = (v: number) => BigInt.asUintN(64, BigInt(v)).toString(16)

export function kretprobeExample(kernel: Kernel, kprobes: Kprobes, probedFunc = 'sys_open') {
  const printk = (s: string) => kernel.printk.log(kernel.jiffies, s)
  const myKretprobe: Kretprobe = {
    kp: {},
    // Return-probe handler: if the probed function fails, log the return value (rax on x86-64).
    handler: (_ri, regs) => {
      const retval = regs.get('ax') | 0
      if (retval < 0) printk(`${probedFunc} returns ${retval}`)
      return 0
    },
    // Probe up to 20 instances concurrently.
    maxactive: 20,
  }
  return {
    init_module(): number {
      const addr = kernel.kallsyms.lookupName(probedFunc)
      if (addr === undefined) {
        printk(`Couldn't find ${probedFunc} to plant return probe`)
        return -1
      }
      myKretprobe.kp.addr = addr
      const ret = kprobes.register_kretprobe(myKretprobe)
      if (ret < 0) {
        printk(`register_kretprobe failed, returned ${ret}`)
        return -1
      }
      printk(`Planted return probe at 0x${hex(addr)}`)
      return 0
    },
    cleanup_module(): void {
      kprobes.unregister_kretprobe(myKretprobe)
      printk('kretprobe unregistered')
      // nmissed > 0 suggests that maxactive was set too low.
      printk(`Missed probing ${myKretprobe.nmissed ?? 0} instances of ${probedFunc}`)
    },
    kretprobe: myKretprobe,
  }
}
