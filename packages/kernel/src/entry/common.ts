// The syscall path's host half (kernel/entry/common.c). entry_SYSCALL_64 ->
// do_syscall_64 runs the guest's sys_call_table; a call the guest leaves to
// the host (sys_ni_host) arrives here with its pt_regs and is looked up in
// the syscall table that the subsystems fill (syscalls.ts). On the way out
// the guest reports to tracers (syscall_trace_enter/exit, when
// _TIF_SYSCALL_TRACE is set) and runs resume_user_mode_work.

import { type Cpu, OutOfMemory } from '@probekit/x86-emu'
import {
  _TIF_NOTIFY_RESUME,
  _TIF_SINGLESTEP,
  _TIF_SYSCALL_TRACE,
  HC_NOTIFY_RESUME,
  HC_SYSCALL,
  HC_SYSCALL_TRACE_ENTER,
  HC_SYSCALL_TRACE_EXIT,
  PERCPU_TOP_OF_STACK,
  PT_REGS,
  PT_REGS_SIZE,
} from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { E2BIG, EFAULT, ENOEXEC, ENOMEM, ENOSYS } from '../errno.js'
import { ElfError } from '../exec/elf.js'
import type { Kernel, PtRegsFrame } from '../kernel.js'
import { BadAddress } from '../mm/user-memory.js'
import { rseqHandleNotifyResume } from '../sched/rseq.js'
import type { Task } from '../sched/task.js'
import { SIGTRAP } from '../signal/signals.js'
import { type SyscallContext, type SyscallResult, syscallName, syscallTable } from '../syscalls.js'

const X86_EFLAGS_TF = 0x100
/** si_code of a SIGTRAP for a breakpoint or a reported step (asm-generic/siginfo.h). */
const TRAP_BRKPT = 1

const ARG_REGS = ['di', 'si', 'dx', 'r10', 'r8', 'r9'] as const

/**
 * A register as a system call argument. A number holds it exactly up to 2^53; beyond, the low bits
 * were lost, and an int argument (fd, flags, options: the C prototype reads the low 32 bits) with
 * garbage above came out wrong. So such a value stays as large, with its low 32 bits exact.
 */
/** A register's low 32 bits as a signed int. */
function lowInt(frame: PtRegsFrame, r: keyof typeof PT_REGS): number {
  const at = frame.phys + PT_REGS[r]
  const b = frame.bytes
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)
}

function syscallArg(frame: PtRegsFrame, r: (typeof ARG_REGS)[number]): number {
  const v = frame.get(r)
  if (Number.isSafeInteger(v)) return v
  const at = frame.phys + PT_REGS[r]
  const b = frame.bytes
  const low = (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0
  return (v < 0 ? -0x20_0000 : 0x1f_ffff) * 0x1_0000_0000 + low
}

export class SyscallEntry {
  /** The task whose system call the host is serving now ("current" for /dev/fd). */
  serving: Task | null = null

  constructor(private readonly kernel: Kernel) {
    const k = kernel
    const m = k.machine
    m.registerHypercall(HC_SYSCALL, (c) => {
      const task = k.current(c)
      const r = this.syscall(c, arg(c, 0))
      // The mask may have changed (sigprocmask, sigsuspend, sigreturn) and sleepers may be ready.
      k.signals.recalcSigpending(task)
      k.sched.noteWakeups(c)
      if (typeof r === 'bigint') c.setReg(0, r)
      else ret(c, r)
    })
    m.registerHypercall(HC_SYSCALL_TRACE_ENTER, (c) => {
      const task = k.current(c)
      const abort = k.tracehooks.reportSyscallEntry(task, k.frame(arg(c, 0)), arg(c, 1) !== 0)
      // Stopped here: the guest waits in TASK_TRACED and reports again once woken.
      ret(c, task.state === 'traced' ? 1 : abort ? 2 : 0)
    })
    m.registerHypercall(HC_SYSCALL_TRACE_EXIT, (c) => {
      const task = k.current(c)
      const frame = k.frame(arg(c, 0))
      if ((task.tif & _TIF_SYSCALL_TRACE) !== 0) k.tracehooks.reportSyscallExit(task, frame)
      // A stepped syscall: the CPU took no trap for it (FMASK cleared TF), so the step is reported here,
      // as Linux's user_single_step_report does: SIGTRAP (TRAP_BRKPT) at the instruction after it.
      if (
        (task.tif & _TIF_SINGLESTEP) !== 0 &&
        (frame.get('flags') & X86_EFLAGS_TF) !== 0 &&
        frame.get('orig_ax') >= 0
      ) {
        k.signals.sendSignal(c, task, { signo: SIGTRAP, code: TRAP_BRKPT, trapno: 1, err: 0 })
        k.signals.recalcSigpending(task)
      }
      ret(c, 0)
    })
    m.registerHypercall(HC_NOTIFY_RESUME, (c) => {
      const task = k.current(c)
      const frame = k.frame(arg(c, 0))
      k.guestTasks.clearTif(task, _TIF_NOTIFY_RESUME)
      rseqHandleNotifyResume(k, c, task, frame)
      k.tracehooks.notifyResumeReport(task, frame)
      ret(c, 0)
    })
  }

  /**
   * Run a host service for current with a syscall context (regs: its pt_regs, 0 for the ones at the top
   * of its stack); faults on user memory become -EFAULT.
   */
  withContext(c: Cpu, regs: number, fn: (ctx: SyscallContext) => number): number {
    const k = this.kernel
    this.serving = k.current(c)
    const ctx: SyscallContext = {
      kernel: k,
      cpu: c,
      task: this.serving,
      frame: k.frame(regs || k.readKernel64(k.sched.rq[c.id].percpu + PERCPU_TOP_OF_STACK) - PT_REGS_SIZE),
      regs,
    }
    try {
      return fn(ctx)
    } catch (e) {
      if (e instanceof BadAddress) return -EFAULT
      if (e instanceof ElfError) return -ENOEXEC
      if (e instanceof RangeError) return -E2BIG
      if (e instanceof OutOfMemory) return -ENOMEM
      throw e
    }
  }

  private syscall(c: Cpu, regs: number): number | bigint {
    const k = this.kernel
    const frame = k.frame(regs)
    // The number is eax's, sign-extended (movslq): whatever rax holds above it is not part of it.
    const nr = lowInt(frame, 'orig_ax')
    const task = k.current(c)
    const fn = syscallTable.get(nr)
    if (!fn) {
      k.unimplemented.set(nr, (k.unimplemented.get(nr) ?? 0) + 1)
      if (k.unimplemented.get(nr) === 1)
        k.printk.log(k.jiffies, `unimplemented syscall ${nr} (${syscallName(nr)}) called by ${task.comm}`)
      return -ENOSYS
    }
    const args = ARG_REGS.map((r) => syscallArg(frame, r))
    let r: SyscallResult | bigint
    this.serving = task
    try {
      r = fn({ kernel: k, cpu: c, task, frame, regs }, ...args)
    } catch (e) {
      if (e instanceof BadAddress) return -EFAULT
      if (e instanceof ElfError) return -ENOEXEC
      // A host allocation for the call found no memory (a page of a copy to user memory, a fork's tables).
      if (e instanceof OutOfMemory) return -ENOMEM
      throw e
    }
    if (typeof r === 'number' || typeof r === 'bigint') {
      if (task.restart?.nr === nr) task.restart = null
      return r
    }
    // The call must wait: the guest sleeps (sys_ni_host) and calls again once woken.
    return k.wait.sleepOn(task, r)
  }
}
