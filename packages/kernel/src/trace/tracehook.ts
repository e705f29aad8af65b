// Tracehooks (include/linux/tracehook.h): where the kernel reports a task's
// life to whoever attached to it - utrace, and through it uprobes and the
// syscall tracer. The kernel calls these at fixed points; it does not know
// who listens. Each report runs in the reporting task's own context (its
// kernel stack, on its CPU), except death, which may be reported for a task
// ended while switched out.
//
// A tracer may hold a task at a safe point (utrace's quiesce): requestStop
// makes the task stop the next time it passes one - syscall entry or exit,
// a signal's delivery, or its way back to user mode (tracehook_notify_resume,
// which also ends an interruptible sleep for it, as a signal would). A held
// task is TASK_TRACED: switched out, its registers in its pt_regs, until
// release.

import type { PtRegsFrame } from '../kernel.js'
import type { Task } from '../sched/task.js'
import type { SigAction, SigInfo } from '../signal/signals.js'

/** What a tracer decides for a signal about to be acted on (utrace's UTRACE_SIGNAL_*, simplified). */
export type SignalVerdict =
  /** Take the signal's action as it stands (info and signal may have been changed in place). */
  | { action: 'deliver'; signo?: number; info?: SigInfo }
  /** Discard it: the program never sees it (a breakpoint's SIGTRAP a tracer handled). */
  | { action: 'ignore' }
  /** Act as if its default action were to terminate (with a core, or not), or to stop. */
  | { action: 'terminate' | 'core' | 'stop' }

/** The report callbacks; each is optional. regs: the task's pt_regs (writes change its registers). */
export interface TaskTracer {
  /** A new task (TASK_NEW: it has not run); CLONE_THREAD in flags tells a thread from a process. */
  reportClone?(parent: Task, child: Task, cloneFlags: number): void
  /** The new program is in place; its first instruction has not run. */
  reportExec?(task: Task, path: string, regs: PtRegsFrame): void
  /** The task begins to exit (do_exit); code is its wait status. */
  reportExit?(task: Task, code: number): void
  /** The task is dead (a zombie, or a reaped thread); its parent was notified. */
  reportDeath?(task: Task, groupDead: boolean): void
  /** Before a system call runs (number in orig_ax, arguments in di si dx r10 r8 r9): setting orig_ax to -1 skips it (the call returns regs.ax, -ENOSYS unless changed). */
  reportSyscallEntry?(task: Task, regs: PtRegsFrame): void
  /** After a system call (result in ax; the tracer may change it). */
  reportSyscallExit?(task: Task, regs: PtRegsFrame): void
  /** Before a dequeued signal's action is taken; undefined: no opinion. */
  reportSignal?(task: Task, regs: PtRegsFrame, info: SigInfo, action: SigAction): SignalVerdict | undefined
  /** At a safe point on the way back to user mode (tracehook_notify_resume), or where a held task stops. */
  reportQuiesce?(task: Task, regs: PtRegsFrame): void
  /** Job control: the task stops with its group (CLD_STOPPED, 5) or its group continues (CLD_CONTINUED, 6). */
  reportJctl?(task: Task, type: number, signo: number): void
  /** The task is reaped (release_task): nothing of it remains; the last report. */
  reportReap?(task: Task): void
}

/** What the kernel gives tracehooks: the task-state changes it alone may make. */
export interface TracehookKernel {
  /** Set or clear _TIF_SYSCALL_TRACE (the guest then reports every syscall's entry and exit). */
  setSyscallTrace(task: Task, on: boolean): void
  /** Make the task pass a safe point soon: _TIF_NOTIFY_RESUME, a kick out of an interruptible sleep or user mode. */
  notifyResume(task: Task): void
  /** Hold the task (TASK_TRACED) at the safe point it is at now. */
  hold(task: Task): void
  /** Let a held task run again. */
  release(task: Task): void
  /** user_enable_single_step / user_disable_single_step: TF in its user flags. */
  setUserSingleStep(task: Task, on: boolean): void
}

export class Tracehooks {
  private readonly tracers = new Map<Task, TaskTracer[]>()
  /** Tasks a tracer asked to stop at their next safe point. */
  private readonly stopRequested = new Set<Task>()

  constructor(private readonly kernel: TracehookKernel) {}

  /** Attach a tracer to a task; reports go to its tracers in attach order. */
  attach(task: Task, tracer: TaskTracer): void {
    const list = this.tracers.get(task) ?? []
    list.push(tracer)
    this.tracers.set(task, list)
    this.updateSyscallTrace(task)
  }

  detach(task: Task, tracer: TaskTracer): void {
    const list = (this.tracers.get(task) ?? []).filter((t) => t !== tracer)
    if (list.length > 0) this.tracers.set(task, list)
    else this.tracers.delete(task)
    this.updateSyscallTrace(task)
  }

  tracersOf(task: Task): readonly TaskTracer[] {
    return this.tracers.get(task) ?? []
  }

  /** Syscall reports cost a hypercall per call: only tasks with a tracer that wants them pay it. */
  private updateSyscallTrace(task: Task): void {
    const want = this.tracersOf(task).some((t) => t.reportSyscallEntry || t.reportSyscallExit)
    this.kernel.setSyscallTrace(task, want)
  }

  /** Ask the task to stop at its next safe point (utrace's UTRACE_STOP on a running task). */
  requestStop(task: Task): void {
    this.stopRequested.add(task)
    this.kernel.notifyResume(task)
  }

  /** Is a stop asked for and not yet taken? (Interruptible sleeps end for it, as for a signal.) */
  stopPending(task: Task): boolean {
    return this.stopRequested.has(task)
  }

  /** Let a held (or about to be held) task go on. */
  resume(task: Task): void {
    this.stopRequested.delete(task)
    this.kernel.release(task)
  }

  userEnableSingleStep(task: Task): void {
    this.kernel.setUserSingleStep(task, true)
  }

  userDisableSingleStep(task: Task): void {
    this.kernel.setUserSingleStep(task, false)
  }

  // ---------------------------------------------------------------- the kernel's calls

  reportClone(parent: Task, child: Task, cloneFlags: number): void {
    for (const t of this.tracersOf(parent)) t.reportClone?.(parent, child, cloneFlags)
  }

  reportExec(task: Task, path: string, regs: PtRegsFrame): void {
    for (const t of this.tracersOf(task)) t.reportExec?.(task, path, regs)
  }

  reportExit(task: Task, code: number): void {
    for (const t of this.tracersOf(task)) t.reportExit?.(task, code)
  }

  /** Death: no report but reap follows it. */
  reportDeath(task: Task, groupDead: boolean): void {
    this.stopRequested.delete(task)
    for (const t of this.tracersOf(task)) t.reportDeath?.(task, groupDead)
  }

  reportJctl(task: Task, type: number, signo: number): void {
    for (const t of this.tracersOf(task)) t.reportJctl?.(task, type, signo)
  }

  /** release_task: the last report; the tracers are detached after it. */
  reportReap(task: Task): void {
    const list = this.tracersOf(task)
    this.tracers.delete(task)
    this.stopRequested.delete(task)
    for (const t of list) t.reportReap?.(task)
  }

  /** Syscall entry; then a safe point. */
  reportSyscallEntry(task: Task, regs: PtRegsFrame): void {
    for (const t of this.tracersOf(task)) t.reportSyscallEntry?.(task, regs)
    this.quiescePoint(task, regs)
  }

  reportSyscallExit(task: Task, regs: PtRegsFrame): void {
    for (const t of this.tracersOf(task)) t.reportSyscallExit?.(task, regs)
    this.quiescePoint(task, regs)
  }

  /** get_signal: the first verdict other than undefined wins; each tracer sees what the earlier ones left. */
  reportSignal(task: Task, regs: PtRegsFrame, info: SigInfo, action: SigAction): SignalVerdict | undefined {
    let verdict: SignalVerdict | undefined
    for (const t of this.tracersOf(task)) {
      const v = t.reportSignal?.(task, regs, info, action)
      if (v && !verdict) verdict = v
      if (v?.action === 'deliver' && v.info) info = v.info
    }
    this.quiescePoint(task, regs)
    return verdict
  }

  /** tracehook_notify_resume: the return-to-user safe point. */
  notifyResume(task: Task, regs: PtRegsFrame): void {
    this.quiescePoint(task, regs)
  }

  /** A safe point: a task asked to stop reports quiesce and is held there until resumed. */
  private quiescePoint(task: Task, regs: PtRegsFrame): void {
    if (!this.stopRequested.has(task)) return
    for (const t of this.tracersOf(task)) t.reportQuiesce?.(task, regs)
    // A tracer may have resumed it from its own callback.
    if (this.stopRequested.has(task)) this.kernel.hold(task)
  }
}
