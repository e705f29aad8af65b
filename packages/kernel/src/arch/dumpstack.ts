// die() for host code (arch/x86/kernel/dumpstack.c, kernel/panic.c). A probe
// handler or a tracing engine's callback is module code running inside the
// kernel: one that throws (or faults with nobody to fix it up) is reported as
// Linux reports a module that oopses - what went wrong, the "Oops: ... [#n]"
// line, CPU/PID/Comm, the registers (show_regs), the Call Trace (here the
// JavaScript stack of the exception) - and then, as with panic_on_oops, the
// machine stops for good (so does an oops of the guest kernel's own code,
// guestOops): every vCPU halts with interrupts off (panic()'s
// smp_send_stop), the run returns reason 'oops', and so does every later run.
//
// Nothing is left half done: the report is made between two guest
// instructions, after the caller's own bookkeeping, so kernel text holds
// whole instructions and the probes can still be unregistered (nothing runs
// any more: a grace period or a quiesce finds every vCPU halted). What the
// guest wrote before is already out: console writes reach the host as made.

import { formatLinear, IF } from '@probekit/x86-emu'
import type { PtRegsField } from '../abi.js'
import type { Kernel, PtRegsFrame } from '../kernel.js'
import { stackTrace } from '../trace/stacktrace.js'

/** What the report shows of the registers: a pt_regs (the probed context's, or the task's user regs). */
export interface OopsRegs {
  get(field: PtRegsField): number
}

/** One oops of host code. */
export interface HostOops {
  /** What went wrong, first ("BUG: kprobe pre_handler for ... raised TypeError: boom", "IP: ..."); the run's detail. */
  bug: string[]
  /** die()'s str and error code: the "Oops: 0000 [#1] SMP" line (default "Oops", 0). */
  die?: { str: string; err: number }
  /** Lines after CPU/PID/Comm, before the registers (the handler's name). */
  info?: string[]
  /** The vCPU it happened on (default: the one running now, else 0). */
  cpu?: number
  /** The context the failing code ran for (default: the current task's user pt_regs). */
  regs?: OopsRegs | null
  /** What was thrown: its JavaScript stack is the Call Trace. */
  error?: unknown
  /** The Call Trace's lines instead of the JavaScript stack's (guestCallTrace: a BUG() in kernel code). */
  trace?: string[]
  /** The run's detail (default: the bug lines joined with "; "). */
  detail?: string
}

interface OopsState {
  /** die_counter: oopses so far ([#n]). */
  count: number
  /** Each oops's report, as logged (without timestamps). */
  reports: string[][]
}

const states = new WeakMap<Kernel, OopsState>()

/** Has this kernel oopsed (its machine stopped for good)? */
export function kernelOopsed(kernel: Kernel): boolean {
  return (states.get(kernel)?.count ?? 0) > 0
}

/** How many oopses so far (die_counter). */
export function oopsCount(kernel: Kernel): number {
  return states.get(kernel)?.count ?? 0
}

/** Each oops's report as it went to the kernel log (no timestamps), first first: for a front end to show. */
export function oopsReports(kernel: Kernel): readonly (readonly string[])[] {
  return states.get(kernel)?.reports ?? []
}

/**
 * The host program's own assertion (node:assert, a test's expect) failing inside a handler is not a
 * module's bug to log in the guest's dmesg but the host's: it goes on up, so a failed check fails.
 */
export function isHostAssertion(e: unknown): boolean {
  return e instanceof Error && e.name === 'AssertionError'
}

/** "TypeError: msg" for an Error; a thrown string quoted; anything else as String() makes it. One line. */
export function describeException(e: unknown): string {
  let text: string
  try {
    if (e instanceof Error) text = e.message ? `${e.name}: ${e.message}` : e.name
    else if (typeof e === 'string') text = JSON.stringify(e)
    else text = String(e)
  } catch {
    text = 'a value that cannot be printed'
  }
  return text.split('\n')[0]
}

/** oops_begin: die_counter moves on; the report is collected as it is logged. */
function oopsBegin(kernel: Kernel): { count: number; report: string[]; log: (line: string) => void } {
  let state = states.get(kernel)
  if (!state) {
    state = { count: 0, reports: [] }
    states.set(kernel, state)
  }
  state.count++
  const report: string[] = []
  state.reports.push(report)
  const log = (line: string) => {
    report.push(line)
    kernel.printk.log(kernel.jiffies, line)
  }
  return { count: state.count, report, log }
}

/** oops_end with panic_on_oops: the end marker, then (first oops only) panic() stops every vCPU for good. */
function oopsEnd(kernel: Kernel, count: number, log: (line: string) => void, detail: string): void {
  log('---[ end trace 0000000000000000 ]---')
  if (count > 1) return
  log('Kernel panic - not syncing: Fatal exception')
  // panic(): interrupts off, every CPU stopped where it is.
  const m = kernel.machine
  for (const c of m.cpus) {
    c.halted = true
    c.eflags &= ~IF
    c.pendingInterrupts.length = 0
  }
  m.stop(detail, 'oops')
}

/**
 * oops_begin / __die / oops_end for host code: the report goes to printk, then (panic_on_oops) every
 * vCPU halts and the machine stops with reason 'oops' (the first oops's detail stays). A host
 * assertion is not reported: it is thrown on.
 */
export function oops(kernel: Kernel, o: HostOops): void {
  if (isHostAssertion(o.error)) throw o.error
  const { count, log } = oopsBegin(kernel)
  const m = kernel.machine
  const cpu = o.cpu ?? m.current?.id ?? 0
  for (const line of o.bug) log(line)
  const die = o.die ?? { str: 'Oops', err: 0 }
  log(`${die.str}: ${(die.err & 0xffff).toString(16).padStart(4, '0')} [#${count}] SMP`)
  const task = m.cpus[cpu] ? kernel.current(m.cpus[cpu]) : null
  log(task ? `CPU: ${cpu} PID: ${task.pid} Comm: ${task.comm}` : `CPU: ${cpu}`)
  for (const line of o.info ?? []) log(line)
  const regs = o.regs ?? (task ? { get: (f: PtRegsField) => task.getReg(f) } : null)
  if (regs) for (const line of showRegs(kernel, regs)) log(line)
  log('Call Trace:')
  for (const line of o.trace ?? callTrace(o.error)) log(line)
  oopsEnd(kernel, count, log, o.detail ?? o.bug.join('; '))
}

/** An oops of the guest kernel's own code (a kernel-mode fault nobody fixed up). */
export interface GuestOops {
  /** The vCPU it happened on. */
  cpu: number
  /** The exception frame: the faulting context. */
  regs: PtRegsFrame
  trapnr: number
  /** CR2 for a #PF. */
  address?: number
}

/** die()'s "STR: ERR [#N] CPU: C" line as the guest's C prints it (before its show_regs). */
const GUEST_DIE_LINE = /^(.+): ([0-9a-f]{4}) \[#\d+\] CPU: \d+$/

/**
 * die() for the guest kernel (arch/x86/kernel/dumpstack.c): the guest's C has printed what it knows
 * (no_context's "BUG: unable to handle page fault for address: ...", "Oops: 0000 [#1]", the
 * registers); the host adds what needs the host's tables - CPU/PID/Comm, RIP as a symbol, the Call
 * Trace walked up the guest's frame pointers, CR2 - and panics as for a host oops: the run returns
 * reason 'oops', and the whole report is oopsReports()'s, as for a probe handler's oops.
 */
export function guestOops(kernel: Kernel, o: GuestOops): void {
  const lines = kernel.printk.lines
  // What the guest printed of this oops: from its die line (and the BUG line just before it) on.
  let start = lines.length
  for (let i = lines.length - 1; i >= Math.max(0, lines.length - 16); i--)
    if (GUEST_DIE_LINE.test(lines[i].text)) {
      start = i > 0 && lines[i - 1].text.startsWith('BUG: ') ? i - 1 : i
      break
    }
  const printed = lines.slice(start).map((r) => r.text)
  const { count, report, log } = oopsBegin(kernel)
  report.push(...printed)
  const c = kernel.machine.cpus[o.cpu]
  const task = c ? kernel.current(c) : null
  log(task ? `CPU: ${o.cpu} PID: ${task.pid} Comm: ${task.comm}` : `CPU: ${o.cpu}`)
  const ip = o.regs.get('ip')
  const where = kernel.kallsyms.format(ip)
  log(`RIP: ${hex(o.regs.get('cs') & 0xffff, 4)}:${where}`)
  log('Call Trace:')
  for (const line of guestCallTrace(kernel, o.regs, task !== null && task.state !== 'idle')) log(line)
  if (o.trapnr === 14 && o.address !== undefined) log(`CR2: ${hex(o.address)}`)
  const head = printed.find((l) => l.startsWith('BUG: ')) ?? printed[0]?.replace(/ CPU: \d+$/, '')
  oopsEnd(kernel, count, log, [head ?? `Oops: trap ${o.trapnr}`, `IP: ${where}`].join('; '))
}

/**
 * show_trace_log_lvl for guest code: the callers of regs's function, walked up the guest's frame
 * pointers, one " func+0xoff/0xsize" line each, between <TASK> and </TASK> in a task's context.
 */
export function guestCallTrace(kernel: Kernel, regs: PtRegsFrame, inTask = true): string[] {
  const frames = stackTrace(kernel, regs)
    .slice(1)
    .map((a) => ` ${backtraceAddress(kernel, a)}`)
  return inTask ? [' <TASK>', ...frames, ' </TASK>'] : frames
}

/**
 * %pB: a return address looked up one byte back, so a call to a noreturn function that ends its
 * caller is shown in the caller (the address itself is already past the caller's end).
 */
function backtraceAddress(kernel: Kernel, addr: number): string {
  const loc = kernel.kallsyms.lookup(addr - 1)
  if (!loc) return kernel.kallsyms.format(addr)
  return `${loc.symbol.name}+0x${(loc.offset + 1).toString(16)}/0x${loc.symbol.size.toString(16)}`
}

/** __show_regs: RIP as a symbol in kernel mode, then the general registers, three to a line. */
function showRegs(kernel: Kernel, regs: OopsRegs): string[] {
  const r = (f: PtRegsField) => hex(regs.get(f))
  const cs = regs.get('cs') & 0xffff
  const ip = regs.get('ip')
  const where = (cs & 3) === 0 ? kernel.kallsyms.format(ip) : formatLinear(ip, 0)
  const origAx = regs.get('orig_ax')
  return [
    `RIP: ${hex(cs, 4)}:${where}`,
    `RSP: ${hex(regs.get('ss') & 0xffff, 4)}:${r('sp')} EFLAGS: ${hex(regs.get('flags'), 8)}${origAx === -1 ? '' : ` ORIG_RAX: ${r('orig_ax')}`}`,
    `RAX: ${r('ax')} RBX: ${r('bx')} RCX: ${r('cx')}`,
    `RDX: ${r('dx')} RSI: ${r('si')} RDI: ${r('di')}`,
    `RBP: ${r('bp')} R08: ${r('r8')} R09: ${r('r9')}`,
    `R10: ${r('r10')} R11: ${r('r11')} R12: ${r('r12')}`,
    `R13: ${r('r13')} R14: ${r('r14')} R15: ${r('r15')}`,
  ]
}

/** The JavaScript stack's frames, one " frame" line each (V8's "at ..." lines, or every line of other engines'). */
function callTrace(error: unknown): string[] {
  const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : ''
  const lines = stack.split('\n').map((l) => l.trim())
  const v8 = lines.filter((l) => l.startsWith('at ')).map((l) => l.slice(3))
  const frames = v8.length > 0 ? v8 : lines.filter((l) => /\S+@\S+/.test(l))
  return frames.length > 0 ? frames.map((f) => ` ${f}`) : [' <no JavaScript stack>']
}

/** %0Nlx of a pt_regs value (64 bits; values are signed in their high half). */
function hex(v: number, width = 16): string {
  const n = Number.isInteger(v) ? BigInt.asUintN(64, BigInt(v)) : 0n
  return n.toString(16).padStart(width, '0')
}
