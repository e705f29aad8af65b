// utrace (kernel/utrace.c, API version 20091216): tracing engines attached
// to threads, told of each thread's events through the kernel's tracehooks,
// able to stop the thread at safe points (quiesce), step it, abort its
// system calls and decide its signals. One Utrace serves a kernel
// (utraceOf); every thread gets its struct utrace the first time an engine
// attaches, and the thread itself makes every report, in its own context.
//
// The flow is utrace.c's: a report pass starts by splicing new engines onto
// the attached list (start_report), makes each interested engine's
// report_quiesce and then its event callback (start_callback,
// finish_callback), combines their answers (the smallest action wins, only
// STOP is sticky), and settles the outcome (finish_report): a stop happens
// at the next safe point, where the thread really waits in TASK_TRACED.

import {
  type DequeuedSignal,
  EAGAIN,
  EALREADY,
  EEXIST,
  EINPROGRESS,
  EINVAL,
  ENOENT,
  EPERM,
  ERESTARTSYS,
  ESRCH,
  type Kernel,
  type PtRegsFrame,
  SIG_DFL,
  SIG_IGN,
  SIGKILL,
  type SigAction,
  type SigInfo,
  type SignalDecision,
  type Task,
  type TaskTracer,
  type Tracehooks,
} from '@probekit/kernel'
import { callEngine, EVENT_CALLBACK } from './callback-oops.js'
import {
  _UTRACE_DEATH_EVENTS,
  ENGINE_STOP,
  UTRACE_ATTACH_CREATE,
  UTRACE_ATTACH_EXCLUSIVE,
  UTRACE_ATTACH_MATCH_DATA,
  UTRACE_ATTACH_MATCH_OPS,
  UTRACE_BLOCKSTEP,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_EVENT_SIGNAL_ALL,
  UTRACE_EVENT_SYSCALL,
  UTRACE_INTERRUPT,
  UTRACE_REPORT,
  UTRACE_RESUME,
  UTRACE_RESUME_MASK,
  UTRACE_RESUME_MAX,
  UTRACE_SIGNAL_CORE,
  UTRACE_SIGNAL_DELIVER,
  UTRACE_SIGNAL_HANDLER,
  UTRACE_SIGNAL_HOLD,
  UTRACE_SIGNAL_REPORT,
  UTRACE_SIGNAL_STOP,
  UTRACE_SIGNAL_TERM,
  UTRACE_SIGNAL_TSTP,
  UTRACE_SINGLESTEP,
  UTRACE_STOP,
  UTRACE_SYSCALL_ABORT,
  UTRACE_SYSCALL_RESUMED,
  type UtraceResumeAction,
  utrace_resume_action,
  utrace_signal_action,
  utrace_syscall_action,
} from './constants.js'
import { UtraceEngine, utrace_engine_get, utrace_engine_put } from './engine.js'
import type { UtraceEngineOps, UtraceExitCode } from './engine-ops.js'
import type { UtraceExaminer } from './examiner.js'
import { initReport, type UtraceReport } from './report.js'
import { classifySignal, sigKernelIgnore } from './signal-event.js'
import { TaskUtrace } from './task-utrace.js'

/** A negative errno in place of an engine (Linux's ERR_PTR). */
export type UtraceEngineOrErr = UtraceEngine | number

/** IS_ERR for utrace_attach_task's result. */
export const IS_ERR = (e: UtraceEngineOrErr): e is number => typeof e === 'number'

/** The ops of an engine marked detached: it only answers DETACH, until the thread is next quiet. */
const utrace_detached_ops: UtraceEngineOps = {
  report_quiesce: () => UTRACE_DETACH,
  report_reap: () => undefined,
}

/** The machine single-steps (TF); it has no branch-step (DEBUGCTL.BTF), so BLOCKSTEP steps one instruction. */
export const arch_has_single_step = (): boolean => true
export const arch_has_block_step = (): boolean => false

const instances = new WeakMap<Kernel, Utrace>()

/** The kernel's utrace (made on first use). */
export function utraceOf(kernel: Kernel): Utrace {
  let u = instances.get(kernel)
  if (!u) {
    u = new Utrace(kernel)
    instances.set(kernel, u)
  }
  return u
}

/**
 * utrace (kernel/utrace.c, API version 20091216) for one kernel: tracing
 * engines attached to threads, told of each thread's events through the
 * kernel's tracehooks, able to stop, step and resume the thread. Get it with
 * {@link utraceOf}.
 */
export class Utrace {
  private readonly structs = new WeakMap<Task, TaskUtrace>()
  /** The task making a report now (Linux's current inside a callback). */
  private current: Task | null = null
  /** Warnings utrace would WARN() about (a caller's programming error). */
  readonly warnings: string[] = []

  constructor(readonly kernel: Kernel) {}

  private get hooks(): Tracehooks {
    return this.kernel.tracehooks
  }

  // ================================================================ attach and look up

  /**
   * utrace_attach_task: attach a new engine (UTRACE_ATTACH_CREATE), or look up an attached one.
   * Returns the engine (with a reference for the caller) or a negative errno: -ENOENT (no match),
   * -EEXIST (EXCLUSIVE and a match), -EINVAL (no ops), -EPERM (a kernel thread), -ESRCH (reaped).
   */
  utrace_attach_task(
    target: Task,
    flags: number,
    ops: UtraceEngineOps | null,
    data: unknown,
  ): UtraceEngineOrErr {
    let utrace = this.structs.get(target)
    if ((flags & UTRACE_ATTACH_CREATE) === 0) {
      if (!utrace) return -ENOENT
      const engine = findMatchingEngine(utrace, flags, ops, data)
      if (!engine) return -ENOENT
      utrace_engine_get(engine)
      return engine
    }
    if (!ops || ops === utrace_detached_ops) return -EINVAL
    if (target.state === 'idle') return -EPERM // utrace is for users
    if (!utrace) utrace = this.taskAlloc(target)
    const engine = new UtraceEngine(ops, data)
    const ret = this.addEngine(target, utrace, engine, flags, ops, data)
    return ret !== 0 ? ret : engine
  }

  /** utrace_attach_pid: the same, by thread id; -ESRCH when no such thread (or it was reaped). */
  utrace_attach_pid(
    pid: number,
    flags: number,
    ops: UtraceEngineOps | null,
    data: unknown,
  ): UtraceEngineOrErr {
    const task = this.kernel.tasks.get(pid)
    return task ? this.utrace_attach_task(task, flags, ops, data) : -ESRCH
  }

  /** The thread's struct utrace, made once; its tracer listens on the kernel's tracehooks. */
  private taskAlloc(task: Task): TaskUtrace {
    const utrace = new TaskUtrace(task)
    this.structs.set(task, utrace)
    this.hooks.attach(task, this.tracerFor(task, utrace))
    // Syscall reports only once an engine asks for them (utrace_set_events).
    this.hooks.setSyscallTrace(task, false)
    return utrace
  }

  private addEngine(
    target: Task,
    utrace: TaskUtrace,
    engine: UtraceEngine,
    flags: number,
    ops: UtraceEngineOps,
    data: unknown,
  ): number {
    if ((flags & UTRACE_ATTACH_EXCLUSIVE) !== 0 && findMatchingEngine(utrace, flags, ops, data))
      return -EEXIST
    if (utrace.flags === 0) {
      utrace.flags = UTRACE_EVENT.REAP
      if (this.exitDead(target, utrace)) {
        utrace.flags = 0
        return -ESRCH
      }
    }
    // Not onto attached: an engine attached inside a callback must not see the event that made it.
    utrace.attaching.push(engine)
    utrace.pendingAttach = true
    return 0
  }

  // ================================================================ events, control, examination

  /**
   * utrace_set_events: the events this engine wants. 0, -ESRCH (detached), -EALREADY (death or reap
   * bits too late), or -EINPROGRESS (bits cleared while a callback of this engine may be running).
   */
  utrace_set_events(target: Task, engine: UtraceEngine, events: number): number {
    events &= ~ENGINE_STOP
    const utrace = this.getUtraceLock(target, engine, true)
    if (typeof utrace === 'number') return utrace
    const oldUtraceFlags = utrace.flags
    const oldFlags = engine.flags & ~ENGINE_STOP
    const exiting = isExiting(target)
    if (
      exiting &&
      ((events & ~oldFlags & _UTRACE_DEATH_EVENTS) !== 0 ||
        (utrace.death && (oldFlags & ~events & _UTRACE_DEATH_EVENTS) !== 0) ||
        (utrace.reap && (oldFlags & ~events & UTRACE_EVENT.REAP) !== 0))
    )
      return -EALREADY
    if ((events & ~oldUtraceFlags & _UTRACE_DEATH_EVENTS) !== 0 && exiting) return -EALREADY
    engine.flags = events | (engine.flags & ENGINE_STOP)
    utrace.flags |= events
    if ((events & UTRACE_EVENT_SYSCALL) !== 0 && (oldUtraceFlags & UTRACE_EVENT_SYSCALL) === 0)
      this.hooks.setSyscallTrace(target, true)
    if (
      (oldFlags & ~events) !== 0 &&
      target !== this.current &&
      !isStoppedOrTraced(target) &&
      !exiting &&
      utrace.reporting === engine
    )
      return -EINPROGRESS
    return 0
  }

  utrace_set_events_pid(pid: number, engine: UtraceEngine, events: number): number {
    const task = this.kernel.tasks.get(pid)
    return task ? this.utrace_set_events(task, engine, events) : -ESRCH
  }

  /**
   * utrace_control: ask the thread to stop, resume, report, be interrupted, step or let the engine go.
   * 0, or -EINVAL (bad action, or REPORT/INTERRUPT/SINGLESTEP/BLOCKSTEP without the QUIESCE event),
   * -ESRCH (detached, or the thread is dead), -EALREADY (detach during its death report),
   * -EINPROGRESS (STOP of a thread not yet stopped: a report_quiesce or report_signal comes soon;
   * DETACH while its callback may run).
   */
  utrace_control(target: Task, engine: UtraceEngine, action: number): number {
    if (action < 0 || action >= UTRACE_RESUME_MAX || !Number.isInteger(action)) {
      this.warn('invalid action argument to utrace_control()!')
      return -EINVAL
    }
    if (action >= UTRACE_REPORT && action < UTRACE_RESUME && (engine.flags & UTRACE_EVENT.QUIESCE) === 0) {
      this.warn('utrace_control() with no QUIESCE callback in place!')
      return -EINVAL
    }
    const utrace = this.getUtraceLock(target, engine, true)
    if (typeof utrace === 'number') return utrace
    let reset = target.state === 'traced'
    let ret = 0
    if (isExiting(target)) {
      ret = utraceControlDead(utrace, action)
      if (ret !== 0) return ret
      reset = true
    }
    switch (action) {
      case UTRACE_STOP:
        this.markEngineWantsStop(utrace, engine)
        if (!reset && !this.doStop(target, utrace)) ret = -EINPROGRESS
        reset = false
        break
      case UTRACE_DETACH:
        if (engine.wantsStop) utrace.flags &= ~ENGINE_STOP
        markEngineDetached(engine)
        reset = reset || this.doStop(target, utrace)
        if (!reset && utrace.reporting === engine) ret = -EINPROGRESS
        break
      case UTRACE_RESUME:
        clearEngineWantsStop(engine)
        break
      case UTRACE_INTERRUPT:
        clearEngineWantsStop(engine)
        if (utrace.resume === UTRACE_INTERRUPT) break
        utrace.resume = UTRACE_INTERRUPT
        // Stopped or not, get_signal comes next; a sleep ends as if for SIGSTOP.
        this.hooks.signalWakeUp(target)
        break
      default: {
        // REPORT, SINGLESTEP, BLOCKSTEP: a report (and then the step) before user mode.
        let a = action as UtraceResumeAction
        if (a === UTRACE_BLOCKSTEP && !arch_has_block_step()) {
          this.warn('UTRACE_BLOCKSTEP when !arch_has_block_step()')
          a = UTRACE_SINGLESTEP
        }
        clearEngineWantsStop(engine)
        if (a < utrace.resume) {
          utrace.resume = a
          this.hooks.notifyResume(target)
        }
      }
    }
    if (reset) this.utraceReset(target, utrace)
    return ret
  }

  utrace_control_pid(pid: number, engine: UtraceEngine, action: number): number {
    const task = this.kernel.tasks.get(pid)
    return task ? this.utrace_control(task, engine, action) : -ESRCH
  }

  /**
   * utrace_barrier: 0 once no callback of this engine is running on the thread. Callbacks here run to
   * their end before anything else runs, so only a caller inside one (another thread's) could wait:
   * that cannot make progress and returns -ERESTARTSYS, as an interrupted wait does. -ESRCH when
   * detached; -ERESTARTSYS while marked detached and not yet off the list.
   */
  utrace_barrier(target: Task, engine: UtraceEngine): number {
    if (target === this.current) return 0
    const utrace = this.getUtraceLock(target, engine, false)
    if (typeof utrace === 'number') return utrace
    return utrace.reporting === engine ? -ERESTARTSYS : 0
  }

  utrace_barrier_pid(pid: number, engine: UtraceEngine): number {
    const task = this.kernel.tasks.get(pid)
    return task ? this.utrace_barrier(task, engine) : -ESRCH
  }

  /**
   * utrace_prepare_examine: the thread, held by this engine's UTRACE_STOP, may be examined (its
   * pt_regs, its memory) until utrace_finish_examine. -EINVAL (the engine does not keep it
   * stopped), -ESRCH (dead), -EAGAIN (it is running).
   */
  utrace_prepare_examine(target: Task, engine: UtraceEngine, exam: UtraceExaminer): number {
    if (target === this.current) return 0
    if (!engine.wantsStop) return -EINVAL
    if (isExiting(target)) return -ESRCH
    exam.state = target.state
    if (isRunning(target)) return -EAGAIN
    exam.ncsw = waitTaskInactive(target)
    return 0
  }

  /** utrace_finish_examine: 0 if the thread stayed off the CPU since prepare; else -EAGAIN (or -EINVAL). */
  utrace_finish_examine(target: Task, engine: UtraceEngine, exam: UtraceExaminer): number {
    if (target === this.current) return 0
    if (!engine.wantsStop) return -EINVAL
    if (target.state !== exam.state) return -EAGAIN
    return waitTaskInactive(target) !== exam.ncsw ? -EAGAIN : 0
  }

  // camelCase aliases
  attachTask = this.utrace_attach_task
  attachPid = this.utrace_attach_pid
  setEvents = this.utrace_set_events
  setEventsPid = this.utrace_set_events_pid
  control = this.utrace_control
  controlPid = this.utrace_control_pid
  barrier = this.utrace_barrier
  barrierPid = this.utrace_barrier_pid
  prepareExamine = this.utrace_prepare_examine
  finishExamine = this.utrace_finish_examine

  // ================================================================ bookkeeping (utrace.c's statics)

  private warn(message: string): void {
    this.warnings.push(message)
  }

  /** EXIT_DEAD: release_task has run, or the thread is gone from the task table. */
  private exitDead(task: Task, utrace: TaskUtrace): boolean {
    return utrace.reap || this.kernel.tasks.get(task.pid) !== task
  }

  /** get_utrace_lock: the thread's utrace, or -ESRCH / -ERESTARTSYS for a detached engine. */
  private getUtraceLock(target: Task, engine: UtraceEngine, attached: boolean): TaskUtrace | number {
    if (!engine.ops) return -ESRCH
    if (engine.ops === utrace_detached_ops) return attached ? -ESRCH : -ERESTARTSYS
    return this.structs.get(target) ?? -ESRCH
  }

  private markEngineWantsStop(utrace: TaskUtrace, engine: UtraceEngine): void {
    engine.flags |= ENGINE_STOP
    utrace.flags |= ENGINE_STOP
  }

  /**
   * utrace_do_stop: true if the thread is quiescent now (stopped for tracing, or for job control:
   * it then makes its report before it runs again); else it is asked for a report soon.
   */
  private doStop(target: Task, utrace: TaskUtrace): boolean {
    const stopped = target.state === 'stopped'
    if (utrace.resume > UTRACE_REPORT) {
      utrace.resume = UTRACE_REPORT
      this.hooks.notifyResume(target)
    }
    return stopped || target.state === 'traced'
  }

  /**
   * utrace_reset: drop detached engines, recompute the thread's flags from the rest, and wake it if
   * no engine keeps it stopped. True when no engine is left.
   */
  private utraceReset(task: Task, utrace: TaskUtrace): boolean {
    utrace.spliceAttaching()
    let flags = 0
    const detached: UtraceEngine[] = []
    utrace.attached = utrace.attached.filter((engine) => {
      if (engine.ops === utrace_detached_ops) {
        engine.ops = null
        detached.push(engine)
        return false
      }
      flags |= engine.flags | UTRACE_EVENT.REAP
      return true
    })
    if (isExiting(task)) flags &= UTRACE_EVENT.REAP
    else if ((flags & UTRACE_EVENT_SYSCALL) === 0) this.hooks.setSyscallTrace(task, false)
    if (flags === 0) {
      utrace.resume = UTRACE_RESUME
      utrace.signalHandler = false
    }
    if (task.state === 'traced' && (flags & ENGINE_STOP) === 0) {
      // It just resumes: no single-step left over.
      if (utrace.resume === UTRACE_RESUME) this.hooks.userDisableSingleStep(task)
      this.hooks.wake(task)
    }
    utrace.flags = flags
    for (const engine of detached) utrace_engine_put(engine)
    return flags === 0
  }

  /**
   * utrace_stop: UTRACE_STOP for current - TASK_TRACED at this report (the guest switches away
   * before it goes on). action: what to do when it resumes. False when it does not stop after all
   * (every engine let go, or SIGKILL).
   */
  private utraceStop(task: Task, utrace: TaskUtrace, action: UtraceResumeAction): boolean {
    if (action < utrace.resume) {
      utrace.resume = action
      if (action === UTRACE_INTERRUPT) this.hooks.signalWakeUp(task)
      else this.hooks.notifyResume(task)
    }
    for (;;) {
      if ((utrace.flags & ENGINE_STOP) !== 0) break
      this.utraceReset(task, utrace)
      if ((utrace.flags & ENGINE_STOP) === 0) return false
    }
    if (fatalSignalPending(task)) return false
    this.hooks.stop(task)
    return true
  }

  /** utrace_maybe_reap: on reap (or at the end of a death report after it), report_reap and let go of every engine. */
  private maybeReap(target: Task, utrace: TaskUtrace, reap: boolean): void {
    if (reap) {
      utrace.reap = true
      // A death report still to come does the rest.
      if ((utrace.flags & _UTRACE_DEATH_EVENTS) !== 0) return
    } else {
      utrace.death = false
      if (!utrace.reap) {
        this.utraceReset(target, utrace)
        return
      }
    }
    utrace.flags = 0
    const attached = [...utrace.attached, ...utrace.attaching]
    utrace.attached = []
    utrace.attaching = []
    utrace.pendingAttach = false
    for (const engine of attached) {
      const ops = engine.ops
      if ((engine.flags & UTRACE_EVENT.REAP) !== 0 && ops?.report_reap)
        callEngine(this.kernel, target, ops, 'report_reap', () => ops.report_reap?.(engine, target))
      engine.ops = null
      engine.flags = 0
      utrace_engine_put(engine)
    }
  }

  // ================================================================ report passes

  /** start_report: splice new engines; a pending REPORT or step is taken now (INTERRUPT stays for get_signal). */
  private startReport(utrace: TaskUtrace): UtraceResumeAction {
    let resume = utrace.resume
    if (utrace.pendingAttach || (resume > UTRACE_INTERRUPT && resume < UTRACE_RESUME)) {
      utrace.spliceAttaching()
      resume = utrace.resume
      if (resume > UTRACE_INTERRUPT) utrace.resume = UTRACE_RESUME
    }
    return resume
  }

  private finishReportReset(task: Task, utrace: TaskUtrace, report: UtraceReport): void {
    if ((report.spurious || report.detaches) && this.utraceReset(task, utrace)) report.action = UTRACE_RESUME
  }

  /**
   * finish_report: an engine's STOP becomes a report before user mode (where the thread stops, when
   * willNotStop: this report point is not one it waits at), REPORT/INTERRUPT are kept for then.
   */
  private finishReport(task: Task, utrace: TaskUtrace, report: UtraceReport, willNotStop: boolean): void {
    let resume = report.action
    if (resume === UTRACE_STOP) resume = willNotStop ? UTRACE_REPORT : UTRACE_RESUME
    if (resume < utrace.resume) {
      utrace.resume = resume
      if (resume === UTRACE_INTERRUPT) this.hooks.signalWakeUp(task)
      else this.hooks.notifyResume(task)
    }
    this.finishReportReset(task, utrace, report)
  }

  private finishCallbackReport(
    utrace: TaskUtrace,
    report: UtraceReport,
    engine: UtraceEngine,
    action: UtraceResumeAction,
  ): void {
    if (action === UTRACE_DETACH) engine.ops = utrace_detached_ops
    // A utrace_control(DETACH) made meanwhile counts the same.
    if (engine.ops === utrace_detached_ops) {
      report.detaches = true
      return
    }
    if (action < report.action) report.action = action
    if (action !== UTRACE_STOP) {
      if (action < report.resumeAction) report.resumeAction = action
      clearEngineWantsStop(engine)
      return
    }
    if (!engine.wantsStop) this.markEngineWantsStop(utrace, engine)
  }

  /** finish_callback: apply one callback's answer; true if the engine is now detached. */
  private finishCallback(
    utrace: TaskUtrace,
    report: UtraceReport,
    engine: UtraceEngine,
    ret: number,
  ): boolean {
    report.result = ret & ~UTRACE_RESUME_MASK
    this.finishCallbackReport(utrace, report, engine, utrace_resume_action(ret))
    utrace.reporting = null
    return engine.ops === utrace_detached_ops
  }

  /**
   * start_callback: report_quiesce first (if the engine wants QUIESCE); the ops to make the event's
   * own callback with, or null if the engine does not want it.
   */
  private startCallback(
    utrace: TaskUtrace,
    report: UtraceReport,
    engine: UtraceEngine,
    task: Task,
    event: number,
  ): UtraceEngineOps | null {
    utrace.reporting = engine
    let want = engine.flags
    const ops = engine.ops
    if (!ops) {
      utrace.reporting = null
      return null
    }
    if ((want & UTRACE_EVENT.QUIESCE) !== 0) {
      const ret =
        callEngine(this.kernel, task, ops, 'report_quiesce', () =>
          ops.report_quiesce?.(report.action, engine, event, task),
        ) ?? UTRACE_RESUME
      if (this.finishCallback(utrace, report, engine, ret)) return null
      utrace.reporting = engine
      want = engine.flags
    }
    if ((want & ENGINE_STOP) !== 0) report.action = UTRACE_STOP
    if ((want & event) !== 0) {
      report.spurious = false
      return ops
    }
    utrace.reporting = null
    return null
  }

  /** REPORT_CALLBACKS: each attached engine in order (reverse for syscall entry) that wants the event. */
  private reportCallbacks(
    reverse: boolean,
    task: Task,
    utrace: TaskUtrace,
    report: UtraceReport,
    event: number,
    call: (ops: UtraceEngineOps, engine: UtraceEngine) => number | undefined,
  ): void {
    const engines = reverse ? [...utrace.attached].reverse() : [...utrace.attached]
    for (const engine of engines) {
      const ops = this.startCallback(utrace, report, engine, task, event)
      if (!ops) continue
      const ret = callEngine(this.kernel, task, ops, EVENT_CALLBACK[event], () => call(ops, engine))
      this.finishCallback(utrace, report, engine, ret ?? UTRACE_RESUME)
    }
  }

  /** REPORT: a whole pass for an event at a point the thread does not stop at. */
  private report(
    task: Task,
    utrace: TaskUtrace,
    event: number,
    call: (ops: UtraceEngineOps, engine: UtraceEngine, report: UtraceReport) => number | undefined,
  ): UtraceReport {
    const report = initReport()
    this.startReport(utrace)
    this.reportCallbacks(false, task, utrace, report, event, (ops, engine) => call(ops, engine, report))
    this.finishReport(task, utrace, report, true)
    return report
  }

  /** Run fn as task's report (current is the task for the calls engines make from their callbacks). */
  private asCurrent<T>(task: Task, fn: () => T): T {
    const prev = this.current
    this.current = task
    try {
      return fn()
    } finally {
      this.current = prev
    }
  }

  // ================================================================ the tracehooks

  private tracerFor(task: Task, utrace: TaskUtrace): TaskTracer {
    const want = (event: number) => (utrace.flags & event) !== 0
    return {
      reportClone: (_parent, child, cloneFlags) => {
        if (!want(UTRACE_EVENT.CLONE)) return
        this.asCurrent(task, () => {
          const report = initReport()
          this.startReport(utrace)
          utrace.cloning = child
          this.reportCallbacks(false, task, utrace, report, UTRACE_EVENT.CLONE, (ops, engine) =>
            ops.report_clone?.(report.action, engine, cloneFlags, child, task),
          )
          utrace.cloning = null
          // A vfork parent's stop comes when it returns to user mode, after the child let go of its memory.
          this.finishReport(task, utrace, report, true)
        })
      },
      reportExec: (_task, path, regs) => {
        if (!want(UTRACE_EVENT.EXEC)) return
        this.asCurrent(task, () =>
          this.report(task, utrace, UTRACE_EVENT.EXEC, (ops, engine, report) =>
            ops.report_exec?.(report.action, engine, { filename: path }, regs, task),
          ),
        )
      },
      reportSyscallEntry: (_task, regs, resumed) =>
        this.asCurrent(task, () => this.reportSyscallEntry(task, utrace, regs, resumed)),
      reportSyscallExit: (_task, regs) => {
        if (!want(UTRACE_EVENT.SYSCALL_EXIT)) return
        this.asCurrent(task, () =>
          this.report(task, utrace, UTRACE_EVENT.SYSCALL_EXIT, (ops, engine, report) =>
            ops.report_syscall_exit?.(report.action, engine, regs, task),
          ),
        )
      },
      reportExit: (_task, code) => {
        if (!want(UTRACE_EVENT.EXIT)) return undefined
        const exitCode: UtraceExitCode = { value: code }
        this.asCurrent(task, () => {
          const report = this.report(task, utrace, UTRACE_EVENT.EXIT, (ops, engine, report) =>
            ops.report_exit?.(report.action, engine, code, exitCode, task),
          )
          // Held before anything is torn down, when it exits in its own context (do_exit); a thread
          // ended while switched out (another's exit_group, SIGKILL) cannot wait.
          if (report.action === UTRACE_STOP && task.state === 'running')
            this.utraceStop(task, utrace, report.resumeAction)
        })
        return exitCode.value
      },
      reportDeath: (_task, groupDead, signal) => {
        if (!want(_UTRACE_DEATH_EVENTS)) return
        this.asCurrent(task, () => {
          utrace.death = true
          utrace.resume = UTRACE_RESUME
          utrace.spliceAttaching()
          const report = initReport()
          this.reportCallbacks(false, task, utrace, report, UTRACE_EVENT.DEATH, (ops, engine) =>
            ops.report_death?.(engine, groupDead, signal, task),
          )
          this.maybeReap(task, utrace, false)
        })
      },
      reportReap: () => {
        if (utrace.flags !== 0) this.maybeReap(task, utrace, true)
      },
      reportJctl: (_task, type) => {
        if (!want(UTRACE_EVENT.JCTL)) return
        this.asCurrent(task, () =>
          this.report(task, utrace, UTRACE_EVENT.JCTL, (ops, engine, report) =>
            ops.report_jctl?.(report.action, engine, type, type, task),
          ),
        )
      },
      reportResume: () => {
        if (utrace.flags !== 0) this.asCurrent(task, () => this.utraceResume(task, utrace))
      },
      getSignal: (_task, regs, dequeue) =>
        utrace.flags !== 0
          ? this.asCurrent(task, () => this.getSignal(task, utrace, regs, dequeue))
          : undefined,
      sigpendingForced: () => utrace.resume === UTRACE_INTERRUPT,
      // A fault's signal is no "unhandled signal" (no dmesg line) while engines see signals first.
      considerFatalSignal: () => want(UTRACE_EVENT_SIGNAL_ALL),
      // Ignored signals are kept for engines that want to see them (SIGNAL_IGN).
      considerIgnoredSignal: () => want(UTRACE_EVENT.SIGNAL_IGN),
      reportSignalHandler: (_task, stepping) => {
        if (utrace.flags === 0) return
        // utrace_signal_handler: the next report knows a handler was set up.
        utrace.signalHandler = true
        if (utrace.resume > UTRACE_INTERRUPT) {
          if (stepping) {
            utrace.resume = UTRACE_INTERRUPT
            this.hooks.signalWakeUp(task)
          } else if (utrace.resume === UTRACE_RESUME) this.hooks.notifyResume(task)
        }
      },
    }
  }

  /**
   * utrace_report_syscall_entry (engines in reverse attach order): true aborts the call. A STOP
   * holds the thread here; when it is woken the guest asks again (resumed), and the engines are
   * asked again, with UTRACE_SYSCALL_RESUMED, if a report was requested meanwhile.
   */
  private reportSyscallEntry(task: Task, utrace: TaskUtrace, regs: PtRegsFrame, resumed: boolean): boolean {
    let resumeReport = 0
    if (resumed) {
      // Continuing despite UTRACE_STOP because of SIGKILL: the call does not run.
      if (fatalSignalPending(task)) return true
      if (utrace.resume > UTRACE_REPORT) return isAbort(utrace.syscallEntryResult)
      resumeReport = UTRACE_SYSCALL_RESUMED
    } else if ((utrace.flags & UTRACE_EVENT.SYSCALL_ENTRY) === 0) return false
    for (;;) {
      const report = initReport()
      this.startReport(utrace)
      this.reportCallbacks(true, task, utrace, report, UTRACE_EVENT.SYSCALL_ENTRY, (ops, engine) =>
        ops.report_syscall_entry?.(resumeReport | report.result | report.action, engine, regs, task),
      )
      this.finishReport(task, utrace, report, false)
      utrace.syscallEntryResult = report.result
      if (report.action !== UTRACE_STOP) return isAbort(report.result)
      // Stopped: the rest happens when the guest reports again after the stop (resumed).
      if (this.utraceStop(task, utrace, report.resumeAction)) return false
      if (fatalSignalPending(task)) return true
      if (utrace.resume > UTRACE_REPORT) return isAbort(report.result)
      resumeReport = UTRACE_SYSCALL_RESUMED
    }
  }

  /** utrace_resume: the return-to-user safe point, reached because TIF_NOTIFY_RESUME was set. */
  private utraceResume(task: Task, utrace: TaskUtrace): void {
    // A handler was set up with no report_signal after it: forget it before user mode.
    utrace.signalHandler = false
    const report = initReport()
    report.action = this.startReport(utrace)
    switch (report.action) {
      case UTRACE_RESUME:
        return
      case UTRACE_REPORT:
        // A plain pass: report_quiesce with event 0, no other callback. utrace.c skips the pass when no
        // engine wants QUIESCE, and with it the check of which engines keep the thread stopped: an
        // engine without QUIESCE that returned STOP from a syscall-exit report would not stop it. The
        // pass is made regardless, so such an engine's STOP holds.
        report.action = UTRACE_RESUME
        for (const engine of [...utrace.attached]) this.startCallback(utrace, report, engine, task, 0)
        break
      default:
        report.spurious = false
    }
    this.finishResumeReport(task, utrace, report)
  }

  /** finish_resume_report: the last pass before user mode - stop, force the signal path, or step. */
  private finishResumeReport(task: Task, utrace: TaskUtrace, report: UtraceReport): void {
    this.finishReportReset(task, utrace, report)
    switch (report.action) {
      case UTRACE_STOP:
        this.utraceStop(task, utrace, report.resumeAction)
        break
      case UTRACE_INTERRUPT:
        this.hooks.signalWakeUp(task)
        break
      case UTRACE_BLOCKSTEP:
      case UTRACE_SINGLESTEP:
        this.hooks.userEnableSingleStep(task)
        break
      default:
        this.hooks.userDisableSingleStep(task)
    }
  }

  /**
   * utrace_get_signal: a report on the signal path asked for (event 0: UTRACE_SIGNAL_REPORT, or
   * UTRACE_SIGNAL_HANDLER after a handler's frame), or the next signal taken off the queue and shown
   * to the engines, which choose what is done with it.
   */
  private getSignal(
    task: Task,
    utrace: TaskUtrace,
    regs: PtRegsFrame,
    dequeue: () => DequeuedSignal | null,
  ): SignalDecision | undefined {
    const report = initReport()
    let event: number
    let info: SigInfo
    let ka: SigAction | null
    let returnKa: SigAction
    if (utrace.resume < UTRACE_RESUME || utrace.pendingAttach || utrace.signalHandler) {
      utrace.spliceAttaching()
      report.result = utrace.signalHandler ? UTRACE_SIGNAL_HANDLER : UTRACE_SIGNAL_REPORT
      utrace.signalHandler = false
      const resume = utrace.resume
      utrace.resume = UTRACE_RESUME
      if (resume > UTRACE_REPORT) {
        // Only here to act on a pending step: not a spurious report.
        report.action = resume
        report.spurious = false
        this.finishResumeReport(task, utrace, report)
        return { kind: 'none' }
      }
      if ((utrace.flags & UTRACE_EVENT.QUIESCE) === 0) return { kind: 'none' }
      event = 0
      ka = null
      info = { signo: 0, code: 0 }
      returnKa = { handler: SIG_DFL, flags: 0, restorer: 0, mask: 0n }
    } else if ((utrace.flags & UTRACE_EVENT_SIGNAL_ALL) === 0) {
      return undefined
    } else {
      const taken = dequeue()
      if (!taken) return undefined
      info = taken.info
      ka = task.sighand.actions[info.signo]
      returnKa = taken.action
      // Never interfered with.
      if (info.signo === SIGKILL) return { kind: 'deliver', info, action: returnKa }
      const c = classifySignal(info.signo, ka)
      event = c.event
      report.result = c.result
      if ((utrace.flags & (event | UTRACE_EVENT.QUIESCE)) === 0)
        return { kind: 'deliver', info, action: returnKa }
    }

    for (const engine of [...utrace.attached]) {
      utrace.reporting = engine
      const want = engine.flags
      const ops = engine.ops
      if (!ops || (want & (event | UTRACE_EVENT.QUIESCE)) === 0) {
        utrace.reporting = null
        continue
      }
      // A callback that threw (an oops) leaves the signal as it was, and resumes.
      let ret = ops.report_signal
        ? (callEngine(
            this.kernel,
            task,
            ops,
            'report_signal',
            () => ops.report_signal?.(report.result | report.action, engine, regs, info, ka, returnKa, task),
            regs,
          ) ?? report.result | UTRACE_RESUME)
        : report.result |
          (callEngine(
            this.kernel,
            task,
            ops,
            'report_quiesce',
            () => ops.report_quiesce?.(report.action, engine, event, task),
            regs,
          ) ?? UTRACE_RESUME)
      // No loop of reports for an engine that keeps asking for one here.
      const a = utrace_resume_action(ret)
      if (a === UTRACE_INTERRUPT || a === UTRACE_REPORT) ret = (ret & ~UTRACE_RESUME_MASK) | UTRACE_RESUME
      this.finishCallback(utrace, report, engine, ret)
    }

    const hold = (report.result & UTRACE_SIGNAL_HOLD) !== 0
    let decision: SignalDecision
    switch (utrace_signal_action(report.result)) {
      case UTRACE_SIGNAL_TERM:
        decision = { kind: 'terminate', info }
        break
      case UTRACE_SIGNAL_CORE:
        decision = { kind: 'core', info }
        break
      case UTRACE_SIGNAL_STOP:
        decision = { kind: 'stop', info }
        break
      case UTRACE_SIGNAL_TSTP:
        decision = { kind: 'tstp', info }
        break
      case UTRACE_SIGNAL_DELIVER: {
        const signr = info.signo
        if (returnKa.handler === SIG_DFL) {
          if (signr !== 0 && !sigKernelIgnore(signr)) {
            decision = { kind: 'deliver', info, action: returnKa }
            break
          }
        } else if (returnKa.handler !== SIG_IGN && signr !== 0) {
          // The handler runs; an engine that wanted to stop or step gets another report after its frame is set up.
          if (report.action !== UTRACE_RESUME) report.action = UTRACE_INTERRUPT
          this.finishReport(task, utrace, report, true)
          if (hold) this.hooks.pushBackSignal(task, info)
          return { kind: 'deliver', info, action: returnKa }
        }
        return this.signalIgnored(task, utrace, report, info, hold)
      }
      default:
        // IGN, REPORT, HANDLER: straight back to user mode, where the thread may stop or step.
        return this.signalIgnored(task, utrace, report, info, hold)
    }
    this.finishReport(task, utrace, report, true)
    if (hold) this.hooks.pushBackSignal(task, info)
    return decision
  }

  private signalIgnored(
    task: Task,
    utrace: TaskUtrace,
    report: UtraceReport,
    info: SigInfo,
    hold: boolean,
  ): SignalDecision {
    this.finishResumeReport(task, utrace, report)
    if (hold && info.signo !== 0) this.hooks.pushBackSignal(task, info)
    return { kind: 'none' }
  }
}

// ================================================================ helpers

function engineMatches(
  engine: UtraceEngine,
  flags: number,
  ops: UtraceEngineOps | null,
  data: unknown,
): boolean {
  if ((flags & UTRACE_ATTACH_MATCH_OPS) !== 0 && engine.ops !== ops) return false
  if ((flags & UTRACE_ATTACH_MATCH_DATA) !== 0 && engine.data !== data) return false
  return engine.ops !== null && engine.ops !== utrace_detached_ops
}

function findMatchingEngine(
  utrace: TaskUtrace,
  flags: number,
  ops: UtraceEngineOps | null,
  data: unknown,
): UtraceEngine | undefined {
  return (
    utrace.attached.find((e) => engineMatches(e, flags, ops, data)) ??
    utrace.attaching.find((e) => engineMatches(e, flags, ops, data))
  )
}

function markEngineDetached(engine: UtraceEngine): void {
  engine.ops = utrace_detached_ops
  engine.flags = UTRACE_EVENT.QUIESCE
}

function clearEngineWantsStop(engine: UtraceEngine): void {
  engine.flags &= ~ENGINE_STOP
}

/** utrace_control_dead: a dead thread can only be detached, and not once its reap began. */
function utraceControlDead(utrace: TaskUtrace, action: number): number {
  if (action !== UTRACE_DETACH || utrace.reap) return -ESRCH
  if (utrace.death) return -EALREADY
  return 0
}

/** ->exit_state: the thread has exited (a zombie, or reaped). */
function isExiting(task: Task): boolean {
  return task.state === 'zombie'
}

function isStoppedOrTraced(task: Task): boolean {
  return task.state === 'stopped' || task.state === 'traced'
}

/** TASK_RUNNING: on a CPU or waiting for one. */
function isRunning(task: Task): boolean {
  return task.state === 'running' || task.state === 'runnable'
}

function fatalSignalPending(task: Task): boolean {
  return task.pendingKill !== 0 || task.pending.has(SIGKILL)
}

/** wait_task_inactive's switch count: it changes whenever the thread runs (never 0). */
function waitTaskInactive(task: Task): number {
  return task.lastRan + 1
}

function isAbort(result: number): boolean {
  return utrace_syscall_action(result) === UTRACE_SYSCALL_ABORT
}
