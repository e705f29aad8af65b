// A uprobe's handler, a uretprobe's handler, a consumer's handler, ret_handler
// or filter, a registration_callback: module code the kernel runs. One that
// throws is an oops, reported by the kernel's oops() as for kprobes - which
// function of which probe (and the function's name), the thread, its user
// registers, the JavaScript stack - and the machine stops for good. The
// caller goes on as if the function had returned `otherwise`, so its
// bookkeeping (the step out of line, the return instances) stays whole and
// every probe can still be unregistered, its original byte put back. After
// an oops no more user code runs.

import {
  describeException,
  type Kernel,
  kernelOopsed,
  type Mm,
  oops,
  type PtRegsFrame,
} from '@probekit/kernel'
import { formatLinear } from '@probekit/x86-emu'

/** Which user function runs, for which probe. */
export interface UprobeSite {
  /** "uprobe handler", "uretprobe handler", "uprobe consumer filter", ... */
  what: string
  /** The function itself (its name goes in the report). */
  fn: unknown
  /** The probed address in mm (the function's entry for a return probe). */
  vaddr: number
  mm: Mm
  /** The thread's user registers when it hit the probe (null: the report shows the current task's). */
  regs: PtRegsFrame | null
}

/** Call user code at a uprobe: what it returns, or `otherwise` if it threw (an oops) or the kernel has oopsed. */
export function callUprobeUser<T>(kernel: Kernel, site: UprobeSite, call: () => T, otherwise: T): T {
  if (kernelOopsed(kernel)) return otherwise
  try {
    return call()
  } catch (e) {
    uprobeOops(kernel, site, e)
    return otherwise
  }
}

/** The oops of user code that threw at a uprobe. */
export function uprobeOops(kernel: Kernel, site: UprobeSite, e: unknown): void {
  // Its own name, not the field's (an arrow function in an object literal is named after the field).
  const fn = site.fn
  const name = typeof fn === 'function' && fn.name && !site.what.endsWith(` ${fn.name}`) ? fn.name : null
  oops(kernel, {
    bug: [
      `BUG: ${site.what} for ${whereInFile(site.mm, site.vaddr)} [at ${formatLinear(site.vaddr)}] raised ${describeException(e)}`,
    ],
    info: name ? [`Handler: ${name}`] : [],
    regs: site.regs,
    error: e,
  })
}

/** A user address as uprobe_events names it: PATH:0xOFFSET in the file mapped there (else the address). */
export function whereInFile(mm: Mm, vaddr: number): string {
  const vma = mm.findVma(vaddr)
  if (!vma?.file || vma.pgoff === undefined) return formatLinear(vaddr, 0)
  return `${vma.name}:0x${(vma.pgoff + vaddr - vma.start).toString(16)}`
}
