// A hypercall's arguments and result: the guest's vmcall wrappers pass up
// to six arguments in the syscall registers (rdi rsi rdx r10 r8 r9) and
// take the result from rax.

import type { Cpu } from '@probekit/x86-emu'

const ARG_REGS = [7, 6, 2, 10, 8, 9]

export function hcArg(c: Cpu, n: number): number {
  return c.getLinear(ARG_REGS[n])
}

export function hcRet(c: Cpu, v: number): void {
  c.setLinear(0, v)
}
