// The seeds' jprobe example: a proxy with do_fork's arguments prints them.

import type { Kernel } from '@probekit/kernel'
import { type Jprobe, jprobe_return } from '../jprobe.js'
import type { Kprobes } from '../kprobes.js'

const hex = (v: number) => BigInt.asUintN(64, BigInt(v)).toString(16)

export function jprobeExample(kernel: Kernel, kprobes: Kprobes) {
  const printk = (s: string) => kernel.printk.log(kernel.jiffies, s)
  // Proxy routine having the same arguments as the actual do_fork() routine
  const jdoFork = (cloneFlags: number, _stackStart: number, regs: number, stackSize: number) => {
    printk(`jprobe: clone_flags=0x${hex(cloneFlags)}, stack_size=0x${hex(stackSize)}, regs=0x${hex(regs)}`)
    // Always end with a call to jprobe_return(): do_fork then runs untouched.
    jprobe_return()
  }
  const myJprobe: Jprobe = { kp: {}, entry: jdoFork }
  return {
    init_module(): number {
      const addr = kernel.kallsyms.lookupName('do_fork')
      if (addr === undefined) {
        printk("Couldn't find do_fork to plant jprobe")
        return -1
      }
      myJprobe.kp.addr = addr
      const ret = kprobes.register_jprobe(myJprobe)
      if (ret < 0) {
        printk(`register_jprobe failed, returned ${ret}`)
        return -1
      }
      printk(`Planted jprobe at 0x${hex(addr)}, handler addr jdo_fork`)
      return 0
    },
    cleanup_module(): void {
      kprobes.unregister_jprobe(myJprobe)
      printk('jprobe unregistered')
    },
    jprobe: myJprobe,
  }
}
