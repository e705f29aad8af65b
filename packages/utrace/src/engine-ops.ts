// struct utrace_engine_ops: the callbacks an engine supplies. Each report
// callback gets the action chosen so far by the engines before it (with the
// signal or syscall action in its high bits where the event has one) and
// returns its own; the most constraining resume action wins (the smallest
// number: STOP before INTERRUPT before REPORT ... before RESUME). The task
// making the report is Linux's `current`: it is passed last, for engines
// that serve several threads.

import type { PtRegsFrame, SigAction, SigInfo, Task } from '@probekit/kernel'
import type { UtraceEngine } from './engine.js'

/** What report_exec is told of the new program (Linux passes fmt and bprm). */
export interface UtraceBinprm {
  /** The path execve was given. */
  filename: string
}

/** report_exit's code: the wait status the thread exits with; an engine may change value. */
export interface UtraceExitCode {
  value: number
}

export interface UtraceEngineOps {
  /**
   * Before any other callback of this engine for an event (event: its UTRACE_EVENT bit), and alone
   * with event 0 on the way back to user mode after UTRACE_REPORT or UTRACE_INTERRUPT.
   */
  report_quiesce?(action: number, engine: UtraceEngine, event: number, task: Task): number
  /**
   * A signal about to be acted on, or (UTRACE_SIGNAL_REPORT / UTRACE_SIGNAL_HANDLER in action, orig_ka
   * null) a report on the signal path with no signal. info may be rewritten; return_ka is what
   * UTRACE_SIGNAL_DELIVER acts on.
   */
  report_signal?(
    action: number,
    engine: UtraceEngine,
    regs: PtRegsFrame,
    info: SigInfo,
    orig_ka: SigAction | null,
    return_ka: SigAction,
    task: Task,
  ): number
  /** In the parent, before the child runs; clone_flags & CLONE_THREAD tells a thread from a process. */
  report_clone?(action: number, engine: UtraceEngine, clone_flags: number, child: Task, task: Task): number
  /** Job control: type CLD_STOPPED or CLD_CONTINUED; notify: the si_code the parent is told, or 0. */
  report_jctl?(action: number, engine: UtraceEngine, type: number, notify: number, task: Task): number
  /** After a successful execve: the new program is in place, regs are its first. */
  report_exec?(
    action: number,
    engine: UtraceEngine,
    bprm: UtraceBinprm,
    regs: PtRegsFrame,
    task: Task,
  ): number
  /** Before a system call; the high bits of the return value may be UTRACE_SYSCALL_ABORT. */
  report_syscall_entry?(action: number, engine: UtraceEngine, regs: PtRegsFrame, task: Task): number
  /** After a system call: regs.ax is its result (an engine may change it). */
  report_syscall_exit?(action: number, engine: UtraceEngine, regs: PtRegsFrame, task: Task): number
  /** The thread begins to exit; its state is still live. */
  report_exit?(
    action: number,
    engine: UtraceEngine,
    orig_code: number,
    code: UtraceExitCode,
    task: Task,
  ): number
  /** The thread is dead; only UTRACE_DETACH in the return value means anything. */
  report_death?(engine: UtraceEngine, group_dead: boolean, signal: number, task: Task): number
  /** The thread is reaped: the last callback; the engine is detached after it. */
  report_reap?(engine: UtraceEngine, task: Task): void
  /** The engine's last reference went (utrace_engine_put): free data. */
  release?(data: unknown): void
}
