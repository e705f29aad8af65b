// dump_stack for host code running on a trapped CPU: the kernel is built
// with frame pointers, so the backtrace is the return address on top of the
// stack (a function's first instruction has not pushed rbp yet) and then the
// rbp chain, each address shown as kallsyms prints it.

import { PAGE_OFFSET } from '../abi.js'
import type { Kernel, PtRegsFrame } from '../kernel.js'

const hex16 = (a: number) => BigInt.asUintN(64, BigInt(a)).toString(16).padStart(16, '0')

/** Return addresses from regs, innermost first (kernel text only). */
export function stackTrace(kernel: Kernel, regs: PtRegsFrame, depth = 16): number[] {
  const out: number[] = [regs.get('ip')]
  const inText = (a: number) => a >= kernel.image.textStart && a < kernel.image.textEnd
  const onStack = (a: number) => a >= PAGE_OFFSET && a < PAGE_OFFSET + kernel.machine.memory.size - 8
  const sp = regs.get('sp')
  if (onStack(sp)) {
    const top = kernel.readKernel64(sp)
    if (inText(top)) out.push(top)
  }
  let bp = regs.get('bp')
  for (let i = 0; i < depth && onStack(bp); i++) {
    const ret = kernel.readKernel64(bp + 8)
    if (!inText(ret)) break
    if (out[out.length - 1] !== ret) out.push(ret)
    const next = kernel.readKernel64(bp)
    if (next <= bp) break
    bp = next
  }
  return out
}

/** dump_stack(): the "Call Trace:" block in the kernel log. */
export function dumpStack(kernel: Kernel, regs: PtRegsFrame): string[] {
  const lines = [
    'Call Trace:',
    ...stackTrace(kernel, regs).map((a) => ` [<${hex16(a)}>] ${kernel.kallsyms.format(a)}`),
  ]
  for (const l of lines) kernel.printk.log(kernel.jiffies, l)
  return lines
}
