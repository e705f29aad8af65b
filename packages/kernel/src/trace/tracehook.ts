// Tracehooks (include/linux/tracehook.h): where the kernel reports a task's
// life to whoever attached to it - utrace, and through it uprobes and the
// syscall tracer. The kernel calls these at fixed points; it does not know
// who listens. Each report runs in the reporting task's own context (its
// kernel stack, on its CPU), except death, which may be reported for a task
// ended while switched out, and reap, which runs in the reaper's.
//
// A tracer steers the task only through the primitives below, as utrace
// does through the scheduler and signal code: stop() (TASK_TRACED) at a
// report, wake() to let it go, notifyResume() to have it pass the
// return-to-user safe point (tracehook_notify_resume), signalWakeUp() to
// end an interruptible sleep and force the signal path (get_signal), and
// user single-step. A task stopped at a report switches away before it
// goes on: at syscall entry before the call runs (the guest calls the entry
// report again once it is woken, as utrace's UTRACE_SYSCALL_RESUMED), at
// syscall exit before the return, elsewhere before it returns to user mode.

import type { PtRegsFrame } from '../kernel.js'
import type { Task } from '../sched/task.js'
import type { SigAction, SigInfo } from '../signal/signals.js'

/** A dequeued signal, as get_signal would act on it. */
export interface DequeuedSignal {
  info: SigInfo
  /** The signal's action now (a copy: changing it changes only this delivery). */
  action: SigAction
}

/**
 * What a tracer decided in get_signal (tracehook_get_signal):
 * - 'none': deliver nothing now (the task may have been stopped; get_signal runs again later);
 * - 'deliver': act on info.signo with action (a handler's frame, SIG_IGN, or its default action);
 * - 'terminate' / 'core' / 'stop' / 'tstp': that default action, with info.signo as the reported signal.
 */
export type SignalDecision =
  | { kind: 'none' }
  | { kind: 'deliver'; info: SigInfo; action: SigAction }
  | { kind: 'terminate' | 'core' | 'stop' | 'tstp'; info: SigInfo }

/** The report callbacks; each is optional. regs: the task's pt_regs (writes change its registers). */
export interface TaskTracer {
  /** A new task (TASK_NEW: it has not run); CLONE_THREAD in flags tells a thread from a process. */
  reportClone?(parent: Task, child: Task, cloneFlags: number): void
  /** The new program is in place; its first instruction has not run. */
  reportExec?(task: Task, path: string, regs: PtRegsFrame): void
  /** The task begins to exit (do_exit); code is its wait status. A number returned replaces it. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a tracer that leaves the code alone returns nothing
  reportExit?(task: Task, code: number): number | undefined | void
  /** The task is dead (a zombie, or a reaped thread); its parent was notified. signal: the one that killed it, or 0. */
  reportDeath?(task: Task, groupDead: boolean, signal: number): void
  /**
   * Before a system call runs (number in orig_ax, arguments in di si dx r10 r8 r9). true aborts it,
   * and so does setting orig_ax to -1 (it returns regs.ax, -ENOSYS unless changed; its exit is still
   * reported). resumed: the task was stopped at this same entry and has just been woken (the report
   * is made again).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a tracer that lets the call run returns nothing
  reportSyscallEntry?(task: Task, regs: PtRegsFrame, resumed: boolean): boolean | undefined | void
  /** After a system call (result in ax; the tracer may change it). */
  reportSyscallExit?(task: Task, regs: PtRegsFrame): void
  /**
   * get_signal, before the kernel dequeues a signal: undefined leaves it to the kernel; a decision
   * is acted on. dequeue() takes the next deliverable signal off the queue (null: none).
   */
  getSignal?(task: Task, regs: PtRegsFrame, dequeue: () => DequeuedSignal | null): SignalDecision | undefined
  /** Will this tracer see a signal whose default action kills before it acts (tracehook_consider_fatal_signal)? */
  considerFatalSignal?(task: Task, signo: number): boolean
  /** Should a signal the task ignores still be queued, for this tracer to see (tracehook_consider_ignored_signal)? */
  considerIgnoredSignal?(task: Task, signo: number): boolean
  /** Does this tracer keep TIF_SIGPENDING on for the task (a pending utrace INTERRUPT)? */
  sigpendingForced?(task: Task): boolean
  /** A handler's frame was just set up (stepping: the task single-steps into it). */
  reportSignalHandler?(task: Task, stepping: boolean): void
  /** tracehook_notify_resume: the task is about to return to user mode and was asked to pass here. */
  reportResume?(task: Task, regs: PtRegsFrame): void
  /** Job control: the task stops with its group (CLD_STOPPED, 5) or its group continues (CLD_CONTINUED, 6). */
  reportJctl?(task: Task, type: number, signo: number): void
  /** The task is reaped (release_task): nothing of it remains; the last report. */
  reportReap?(task: Task): void
}

/** What the kernel gives tracehooks: the task-state changes it alone may make. */
export interface TracehookKernel {
  /** Set or clear _TIF_SYSCALL_TRACE (the guest then reports every syscall's entry and exit). */
  setSyscallTrace(task: Task, on: boolean): void
  /** _TIF_NOTIFY_RESUME and a kick off user mode on its CPU; a sleep goes on. */
  notifyResume(task: Task): void
  /** signal_wake_up: _TIF_SIGPENDING, an interruptible sleep ends, a kick off user mode. */
  signalWakeUp(task: Task): void
  /** Hold the task (TASK_TRACED) at the safe point it is at now. */
  hold(task: Task): void
  /** Let a held task run again. */
  release(task: Task): void
  /** user_enable_single_step / user_disable_single_step: TF in its user flags. */
  setUserSingleStep(task: Task, on: boolean): void
  /** Put a dequeued signal back at the head of the queue. */
  pushBackSignal(task: Task, info: SigInfo): void
}

export class Tracehooks {
  private readonly tracers = new Map<Task, TaskTracer[]>()

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

  // ---------------------------------------------------------------- what a tracer may do

  /** Turn the syscall reports on or off for a task whose tracers have them (utrace's SYSCALL events). */
  setSyscallTrace(task: Task, on: boolean): void {
    this.kernel.setSyscallTrace(task, on)
  }

  /** Stop the task at the report it is making (TASK_TRACED); it stays off the CPU until wake(). */
  stop(task: Task): void {
    this.kernel.hold(task)
  }

  /** Let a stopped task run again (a task not stopped is left alone). */
  wake(task: Task): void {
    this.kernel.release(task)
  }

  /** Have the task pass the return-to-user safe point soon (reportResume), without ending a sleep. */
  notifyResume(task: Task): void {
    this.kernel.notifyResume(task)
  }

  /** End an interruptible sleep and make the task go through get_signal (getSignal) soon. */
  signalWakeUp(task: Task): void {
    this.kernel.signalWakeUp(task)
  }

  pushBackSignal(task: Task, info: SigInfo): void {
    this.kernel.pushBackSignal(task, info)
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

  /** The wait status the task exits with (tracers may change it). */
  reportExit(task: Task, code: number): number {
    for (const t of this.tracersOf(task)) code = t.reportExit?.(task, code) ?? code
    return code
  }

  /** Death: no report but reap follows it. */
  reportDeath(task: Task, groupDead: boolean, signal: number): void {
    for (const t of this.tracersOf(task)) t.reportDeath?.(task, groupDead, signal)
  }

  reportJctl(task: Task, type: number, signo: number): void {
    for (const t of this.tracersOf(task)) t.reportJctl?.(task, type, signo)
  }

  /** release_task: the last report; the tracers are detached after it. */
  reportReap(task: Task): void {
    const list = this.tracersOf(task)
    this.tracers.delete(task)
    for (const t of list) t.reportReap?.(task)
  }

  /** True: a tracer aborted the call. */
  reportSyscallEntry(task: Task, regs: PtRegsFrame, resumed: boolean): boolean {
    let abort = false
    for (const t of this.tracersOf(task)) if (t.reportSyscallEntry?.(task, regs, resumed)) abort = true
    return abort
  }

  reportSyscallExit(task: Task, regs: PtRegsFrame): void {
    for (const t of this.tracersOf(task)) t.reportSyscallExit?.(task, regs)
  }

  /** tracehook_get_signal: the first tracer with a decision makes it. */
  getSignal(task: Task, regs: PtRegsFrame, dequeue: () => DequeuedSignal | null): SignalDecision | undefined {
    for (const t of this.tracersOf(task)) {
      const d = t.getSignal?.(task, regs, dequeue)
      if (d) return d
    }
    return undefined
  }

  /** tracehook_consider_fatal_signal: a tracer sees the task's fatal signals before they act. */
  considerFatalSignal(task: Task, signo: number): boolean {
    for (const t of this.tracersOf(task)) if (t.considerFatalSignal?.(task, signo)) return true
    return false
  }

  /** tracehook_consider_ignored_signal: a tracer wants to see the task's ignored signals. */
  considerIgnoredSignal(task: Task, signo: number): boolean {
    for (const t of this.tracersOf(task)) if (t.considerIgnoredSignal?.(task, signo)) return true
    return false
  }

  /** tracehook_force_sigpending: a tracer keeps the signal path on for the task. */
  sigpendingForced(task: Task): boolean {
    for (const t of this.tracersOf(task)) if (t.sigpendingForced?.(task)) return true
    return false
  }

  /** tracehook_signal_handler: a handler's frame is in place. */
  reportSignalHandler(task: Task, stepping: boolean): void {
    for (const t of this.tracersOf(task)) t.reportSignalHandler?.(task, stepping)
  }

  /** tracehook_notify_resume: the return-to-user safe point. */
  notifyResumeReport(task: Task, regs: PtRegsFrame): void {
    for (const t of this.tracersOf(task)) t.reportResume?.(task, regs)
  }
}
