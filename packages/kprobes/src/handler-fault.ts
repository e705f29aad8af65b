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

/**
 * Linux's report of an unhandled kernel-mode fault at addr (no exception-table entry: host code has
 * none): the BUG line and IP: (the oops' headline), then die()'s "Oops"/"general protection fault" line.
 */
export function faultOops(
  fault: CpuFault,
  where: string,
): { bug: string[]; die: { str: string; err: number } } {
  if (fault.vector === Vector.PF) {
    const at = formatLinear(fault.address).slice(2)
    const head =
      Math.abs(fault.address) < 4096
        ? `BUG: unable to handle kernel NULL pointer dereference at ${at}`
        : `BUG: unable to handle kernel paging request at ${at}`
    return { bug: [head, `IP: ${where}`], die: { str: 'Oops', err: fault.errorCode } }
  }
  return {
    bug: [`general protection fault: ${fault.detail || `trap ${fault.vector}`}`, `IP: ${where}`],
    die: { str: 'general protection fault', err: fault.errorCode },
  }
}
