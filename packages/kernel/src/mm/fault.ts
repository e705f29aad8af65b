// handle_mm_fault's host half (mm/memory.c): the guest's page-fault path
// (exc_page_fault -> do_user_addr_fault -> handle_mm_fault) asks for the
// page here - demand paging and copy-on-write in current's address space,
// or VM_FAULT_OOM when no memory is left (mm/oom-kill.ts).

import { OutOfMemory } from '@probekit/x86-emu'
import {
  FAULT_FLAG_INSTRUCTION,
  FAULT_FLAG_WRITE,
  HC_HANDLE_MM_FAULT,
  VM_FAULT_OOM,
  VM_FAULT_SIGSEGV,
} from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import type { Kernel } from '../kernel.js'

export function registerHandleMmFault(kernel: Kernel): void {
  kernel.machine.registerHypercall(HC_HANDLE_MM_FAULT, (c) => {
    const task = kernel.current(c)
    const address = arg(c, 0)
    const flags = arg(c, 1)
    const fault = () =>
      task.state !== 'idle' &&
      task.mm.handleFault(address, (flags & FAULT_FLAG_WRITE) !== 0, (flags & FAULT_FLAG_INSTRUCTION) !== 0)
    let ok: boolean
    try {
      ok = fault()
    } catch (e) {
      if (!(e instanceof OutOfMemory)) throw e
      // No frame left: reclaim the page cache's unmapped pages and try once more; else the guest's
      // OOM killer decides who goes.
      try {
        ok = kernel.pageCache.shrink() > 0 && fault()
        if (!ok) return ret(c, VM_FAULT_OOM)
      } catch (again) {
        if (again instanceof OutOfMemory) return ret(c, VM_FAULT_OOM)
        throw again
      }
    }
    if (ok) c.invlpg(address)
    ret(c, ok ? 0 : VM_FAULT_SIGSEGV)
  })
}
