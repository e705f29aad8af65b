// A fault inside a probe handler. Handlers are host code, so they reach guest
// memory through Kprobes.peek/poke, which run the access through the hit CPU's
// MMU exactly as a C handler's load or store would: the guest's page tables
// decide, and a miss is the #PF (or, for a non-canonical address, #GP) that the
// kernel would take with the probe running - kprobe_fault_handler's
// HIT_ACTIVE/HIT_SSDONE case.

import { type CpuFault, formatLinear, Vector } from '@probekit/x86-emu'

/**
 * Thrown out of a handler that faulted: it ends there. Handled (its fault_handler
 * said so) it is as if a fixup ran; not handled, the kernel has oopsed and the
 * machine is stopping.
 */
export class HandlerFaulted {
  constructor(
    readonly trapnr: number,
    readonly handled: boolean,
  ) {}
}

/** Linux's oops lines for an unhandled kernel-mode fault at addr (no exception-table entry: host code has none). */
export function oopsLines(fault: CpuFault, where: string): string[] {
  const head =
    fault.vector === Vector.PF
      ? Math.abs(fault.address) < 4096
        ? `BUG: unable to handle kernel NULL pointer dereference at ${formatLinear(fault.address).slice(2)}`
        : `BUG: unable to handle kernel paging request at ${formatLinear(fault.address).slice(2)}`
      : `general protection fault: ${fault.errorCode.toString(16).padStart(4, '0')} [#1] SMP`
  return [head, `IP: ${where}`, 'Oops: a kprobe handler faulted and no fault_handler handled it']
}
