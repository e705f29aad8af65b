// The uprobes seed's example (Documentation/uprobes.txt, "Uprobes
// Example": uprobe_example.c) as a host "module": count the times the
// instruction at vaddr in process pid runs, reporting each hit unless
// verbose is 0, and the total when the module is unloaded. The module
// parameters are the arguments (insmod uprobe_example.ko pid=... vaddr=...).

import type { Kernel } from '@probekit/kernel'
import type { Uprobe } from '../uprobe.js'
import type { Uprobes } from '../uprobes.js'

export interface UprobeExampleParams {
  pid: number
  vaddr: number
  verbose?: number
}

const hex = (v: number) => `0x${BigInt.asUintN(64, BigInt(v)).toString(16)}`

export function uprobeExample(kernel: Kernel, uprobes: Uprobes, params: UprobeExampleParams) {
  const printk = (s: string) => kernel.printk.log(kernel.jiffies, s)
  const verbose = params.verbose ?? 1
  let nhits = 0
  const usp: Uprobe = {
    pid: params.pid,
    vaddr: params.vaddr,
    handler: (u) => {
      nhits++
      if (verbose) printk(`Hit #${nhits} on probepoint at ${hex(u.vaddr)}`)
    },
  }
  return {
    init_module(): number {
      printk(`Registering uprobe on pid ${usp.pid}, vaddr ${hex(usp.vaddr)}`)
      const ret = uprobes.register_uprobe(usp)
      if (ret !== 0) {
        printk(`register_uprobe() failed, returned ${ret}`)
        return ret
      }
      return 0
    },
    cleanup_module(): void {
      printk(`Unregistering uprobe on pid ${usp.pid}, vaddr ${hex(usp.vaddr)}`)
      printk(`Probepoint was hit ${nhits} times`)
      uprobes.unregister_uprobe(usp)
    },
    get nhits() {
      return nhits
    },
    usp,
  }
}
