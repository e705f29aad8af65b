// Exceptions (arch/x86/kernel/traps.c, arch/x86/mm/fault.c's host half).
// The guest's exception entries walk die_chain in guest code
// (notify_die -> notifier_call_chain), where host code such as kprobes
// hangs its notifier blocks, then pass what is left on with HC_EXCEPTION:
// a user fault becomes demand paging, copy-on-write or a signal; a kernel
// #PF on a user address is paged in or left to the exception table; the
// rest is an oops (guestOops: the machine stops, as on panic_on_oops).

import { type Cpu, formatLinear, OutOfMemory } from '@probekit/x86-emu'
import { HC_EXCEPTION, HC_NOTIFY_DIE, NOTIFY_DONE } from '../abi.js'
import type { Kernel } from '../kernel.js'
import type { Mm } from '../mm/mm.js'
import {
  bit,
  FPE_INTDIV,
  fpuExceptionCode,
  SIG_DFL,
  SIG_IGN,
  SIGSEGV,
  type SigInfo,
} from '../signal/signals.js'
import { guestOops } from './dumpstack.js'
import { hcArg as arg, hcRet as ret } from './hypercall.js'

/** A host die notifier: (val, regs, trapnr, cpu, err) -> NOTIFY_* (err: die_args.err, DR6 for DIE_DEBUG). */
export type DieNotifier = (val: number, regs: number, trapnr: number, cpu: Cpu, err: number) => number

/** The guest's host_notifier_blocks: one 24-byte notifier_block each (call, next, priority). */
const HOST_NOTIFIER_BLOCKS = 16

export class Traps {
  private readonly dieNotifiers: DieNotifier[] = []

  constructor(private readonly kernel: Kernel) {
    const m = kernel.machine
    m.registerHypercall(HC_NOTIFY_DIE, (c) => {
      const fn = this.dieNotifiers[arg(c, 3)]
      // struct die_args (r8): err at +16 (the error code; DR6 for #DB).
      const dieArgs = arg(c, 4)
      const err = dieArgs !== 0 ? kernel.readKernel64(dieArgs + 16) : 0
      ret(c, fn ? fn(arg(c, 0), arg(c, 1), arg(c, 2), c, err) : NOTIFY_DONE)
    })
    m.registerHypercall(HC_EXCEPTION, (c) => {
      ret(c, this.exception(c, arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3) === 1, arg(c, 4)))
    })
  }

  /**
   * register_die_notifier for host code (kprobes): links one of the guest's
   * host_notifier_blocks into die_chain by priority, so every exception walks
   * it in guest code (notifier_call_chain) before its default handling.
   */
  registerDieNotifier(fn: DieNotifier, priority = 0): number {
    const k = this.kernel
    const index = this.dieNotifiers.length
    if (index >= HOST_NOTIFIER_BLOCKS) throw new Error('no free host notifier block')
    this.dieNotifiers.push(fn)
    const block = k.symbol('host_notifier_blocks') + index * 24
    k.writeKernel32(block + 16, priority)
    // Insert by descending priority, as notifier_chain_register does.
    let link = k.symbol('die_chain')
    for (;;) {
      const next = k.readKernel64(link)
      if (next === 0 || k.readKernel32(next + 16) < priority) {
        k.writeKernel64(block + 8, next)
        k.writeKernel64(link, block)
        return index
      }
      link = next + 8
    }
  }

  /** Demand paging for a fault the guest passed on; no memory left is no page (the guest's OOM path runs from handle_mm_fault). */
  private pageIn(mm: Mm, addr: number, errorCode: number): boolean {
    try {
      return mm.handleFault(addr, (errorCode & 2) !== 0, (errorCode & 16) !== 0)
    } catch (e) {
      if (e instanceof OutOfMemory) return false
      throw e
    }
  }

  /**
   * An exception the guest passes on. First chance: a user-mode fault (demand
   * paging, copy-on-write, else a signal, delivered on the way back to user
   * mode), or a kernel-mode #PF on a user address (page it in, or return 0 so
   * the exception table makes -EFAULT). Fatal: an oops the guest already
   * printed the head of: guestOops finishes the report and stops the machine.
   */
  private exception(
    c: Cpu,
    regs: number,
    trapnr: number,
    errorCode: number,
    fatal: boolean,
    cr2: number,
  ): number {
    const k = this.kernel
    const task = k.current(c)
    const frame = k.frame(regs)
    const fromUser = (frame.get('cs') & 3) === 3
    if (fatal || (!fromUser && trapnr !== 14)) {
      // panic_on_oops, as for a probe handler's oops: the report is completed and every vCPU stops
      // (0: this one halts in the guest too), rather than make_task_dead and run on in a kernel
      // that may hold a lock or half a data structure.
      // die() passes no address: CR2 still holds the fault's.
      guestOops(k, { cpu: c.id, regs: frame, trapnr, address: trapnr === 14 ? c.cr2 : undefined })
      return 0
    }
    if (trapnr === 14 && task.state !== 'idle') {
      if (this.pageIn(task.mm, cr2, errorCode)) {
        c.invlpg(cr2)
        return 1
      }
      if (!fromUser) return 0
    }
    const signal =
      trapnr === 14 || trapnr === 13 || trapnr === 12
        ? SIGSEGV
        : trapnr === 0 || trapnr === 16 || trapnr === 19
          ? 8
          : trapnr === 6
            ? 4
            : trapnr === 3 || trapnr === 1
              ? 5
              : SIGSEGV
    const info: SigInfo = { signo: signal, code: trapnr === 14 ? 1 : 128, trapno: trapnr, err: errorCode }
    if (trapnr === 14) info.addr = cr2
    if (trapnr === 0 || trapnr === 16 || trapnr === 19) {
      // do_error_trap / math_error: si_addr is the faulting instruction.
      info.code = trapnr === 0 ? FPE_INTDIV : fpuExceptionCode(c, trapnr)
      if (info.code === 0) return 1 // a spurious FPU trap: retry (math_error)
      info.addr = frame.get('ip')
    }
    // A fault's signal cannot wait: blocked or ignored, it kills (force_sig_fault unblocks it).
    const action = task.sighand.actions[signal]
    if ((task.blocked & bit(signal)) !== 0n || action.handler === SIG_IGN) {
      action.handler = SIG_DFL
      task.blocked &= ~bit(signal)
    }
    // show_unhandled_signals: a fault that kills leaves its trace in dmesg, as on Linux - unless a
    // tracer will see the signal first (unhandled_signal's tracehook_consider_fatal_signal).
    if (action.handler === SIG_DFL && !k.tracehooks.considerFatalSignal(task, signal)) {
      const hex = (v: number) => formatLinear(v, 0).slice(2)
      const what = trapnr === 14 ? `segfault at ${hex(cr2)}` : `trap ${trapnr}`
      k.printk.log(
        k.jiffies,
        `${task.comm}[${task.pid}]: ${what} ip ${hex(frame.get('ip'))} sp ${hex(frame.get('sp'))} error ${errorCode.toString(16)}`,
      )
    }
    // Synchronous signals go first (dequeue_synchronous_signal): ahead of anything already pending.
    const others = [...task.pending].filter(([s]) => s !== signal)
    task.pending.clear()
    task.pending.set(signal, info)
    for (const [s, i] of others) task.pending.set(s, i)
    k.signals.recalcSigpending(task)
    return 1
  }
}
