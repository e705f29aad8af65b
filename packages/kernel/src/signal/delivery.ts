// Signal generation and delivery (kernel/signal.c, arch/x86/kernel/signal.c):
// send_signal queues a signal and wakes or interrupts its target; on the
// way back to user mode the guest's arch_do_signal_or_restart -> get_signal
// asks here what to do with the first deliverable one (tracers see it
// first): run a handler (its frame is built here), stop the group for job
// control, or die. A syscall a signal cut short is restarted or returns
// EINTR as Linux decides.

import type { Cpu } from '@probekit/x86-emu'
import { _TIF_SIGPENDING, HC_FIND_TASK, HC_SEND_SIGNAL, HC_SIGNAL, TIMER_VECTOR } from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { EINTR, ERESTART_RESTARTBLOCK, ERESTARTNOHAND, ERESTARTNOINTR, ERESTARTSYS } from '../errno.js'
import type { Kernel, PtRegsFrame } from '../kernel.js'
import { clockTicks, taskCputime } from '../sched/cputime.js'
import { rseqSignalDeliver } from '../sched/rseq.js'
import type { Task } from '../sched/task.js'
import type { DequeuedSignal } from '../trace/tracehook.js'
import {
  bit,
  defaultAction,
  hasDeliverableSignal,
  SA_NODEFER,
  SA_RESETHAND,
  SA_RESTART,
  SIG_DFL,
  SIG_IGN,
  SIGCHLD,
  SIGCONT,
  SIGKILL,
  SIGSEGV,
  SIGSTOP,
  SIGTSTP,
  SIGTTIN,
  SIGTTOU,
  type SigAction,
  type SigInfo,
  sanitizeMask,
  setupRtFrame,
} from './signals.js'

export class SignalDelivery {
  constructor(private readonly kernel: Kernel) {
    this.registerHypercalls()
  }

  /** recalc_sigpending: TIF_SIGPENDING iff a signal the mask lets through is pending (or the task must die). */
  recalcSigpending(t: Task): void {
    if (
      t.pendingKill !== 0 ||
      (t.pending.size > 0 && hasDeliverableSignal(t)) ||
      this.kernel.tracehooks.sigpendingForced(t)
    )
      this.kernel.guestTasks.setTif(t, _TIF_SIGPENDING)
    else this.kernel.guestTasks.clearTif(t, _TIF_SIGPENDING)
  }

  /**
   * Queue a signal for a task (kill, tgkill, faults, SIGCHLD, SIGPIPE).
   * Ignored ones are dropped. The target acts on it on its way back to user
   * mode (get_signal): a sleeper the signal interrupts is woken for that
   * (signal_wake_up, through sched_ttwu_pending), a task running on another
   * CPU is interrupted.
   */
  sendSignal(c: Cpu, target: Task, info: SigInfo): void {
    const { sched, wait } = this.kernel
    const sig = info.signo
    const action = target.sighand.actions[sig]
    const def = defaultAction(sig)
    if (sig === SIGCONT) {
      this.continueGroup(target)
      for (const s of [SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU]) target.pending.delete(s)
    } else if (defaultAction(sig) === 'stop') target.pending.delete(SIGCONT)
    const blocked = (target.blocked & bit(sig)) !== 0n
    // An ignored signal is dropped at once, unless it is blocked (a handler may be installed before it is
    // unblocked) or a tracer wants to see it (sig_ignored's tracehook_consider_ignored_signal).
    if (
      sig !== SIGKILL &&
      !blocked &&
      (action.handler === SIG_IGN || (action.handler === SIG_DFL && (def === 'ign' || def === 'cont'))) &&
      !this.kernel.tracehooks.considerIgnoredSignal(target, sig)
    )
      return
    // A stopped task does not run again by itself: SIGKILL ends it now (others wait for SIGCONT).
    if (target.state === 'stopped' && sig === SIGKILL) {
      this.killTask(c, target, sig)
      return
    }
    target.pending.set(sig, info)
    this.recalcSigpending(target)
    if (target.state === 'sleeping' && wait.signalInterrupts(target, target.sleepState)) sched.noteWakeups(c)
    const cpu = sched.cpuOf(target)
    if (cpu >= 0 && cpu !== c.id) this.kernel.machine.interrupt(cpu, TIMER_VECTOR)
  }

  /**
   * arch_do_signal_or_restart's host half, on the way back to user mode:
   * a task marked to die (pendingKill) or whose signal's default action is
   * fatal returns true with its wait status in task_struct.exit_code (the
   * guest then calls do_group_exit); otherwise the first deliverable signal
   * gets its handler's frame (or is ignored, or stops the group), and a
   * syscall a signal cut short is settled as Linux settles it.
   */
  private doSignal(c: Cpu, task: Task, frame: PtRegsFrame): boolean {
    if (task.state === 'zombie' || task.state === 'idle' || (frame.get('cs') & 3) !== 3) return false
    const { guestTasks, tasks } = this.kernel
    if (task.pendingKill !== 0) {
      // Another thread's exit_group or fatal signal: this one ends with the group's status.
      const sig = task.pendingKill
      task.pendingKill = 0
      const leader = tasks.get(task.tgid) ?? task
      guestTasks.setExitCode(task, sig > 0 ? sig : (leader.exitCode << 8) | leader.exitSignal)
      return true
    }
    const r = this.deliverSignals(c, task, frame)
    if (r > 0) {
      guestTasks.setExitCode(task, r)
      return true
    }
    // No handler ran: a syscall cut short starts again (restart_syscall's job for RESTARTBLOCK).
    if (r < 0 && isSyscallFrame(frame)) {
      const code = -frame.get('ax')
      if (
        code === ERESTARTNOHAND ||
        code === ERESTARTSYS ||
        code === ERESTARTNOINTR ||
        code === ERESTART_RESTARTBLOCK
      )
        restartSyscall(frame)
    }
    return false
  }

  /**
   * The first deliverable signal: 0 when a handler's frame was set up, -1
   * when none ran (nothing deliverable, ignored, a stop, or a tracer's
   * report), or the signal number when its action kills. Tracers decide
   * first (tracehook_get_signal): they may take the next signal off the
   * queue themselves and choose what is done with it.
   */
  private deliverSignals(c: Cpu, task: Task, frame: PtRegsFrame): number {
    const dequeue = () => this.dequeueSignal(task)
    for (;;) {
      const decision = this.kernel.tracehooks.getSignal(task, frame, dequeue)
      let taken: DequeuedSignal | null
      if (decision === undefined) {
        taken = dequeue()
        if (!taken) return -1
      } else if (decision.kind === 'none') return -1
      else if (decision.kind === 'deliver') taken = { info: decision.info, action: decision.action }
      else if (decision.kind === 'stop' || decision.kind === 'tstp') {
        this.stopGroup(c, task, decision.info.signo)
        return -1
      } else return decision.info.signo // terminate, core: its default action kills
      const r = this.actOnSignal(c, task, frame, taken.info, taken.action)
      if (r !== null) return r
    }
  }

  /** dequeue_signal: the first pending signal the mask lets through, with a copy of its action. */
  private dequeueSignal(task: Task): DequeuedSignal | null {
    for (const [sig, info] of task.pending) {
      if ((task.blocked & bit(sig)) !== 0n) continue
      task.pending.delete(sig)
      return { info, action: { ...task.sighand.actions[sig] } }
    }
    return null
  }

  /** A tracer gives a signal back (utrace's UTRACE_SIGNAL_HOLD): it is pending again, first in line. */
  pushBackSignal(task: Task, info: SigInfo): void {
    const rest = [...task.pending].filter(([s]) => s !== info.signo)
    task.pending.clear()
    task.pending.set(info.signo, info)
    for (const [s, i] of rest) task.pending.set(s, i)
    this.recalcSigpending(task)
  }

  /** Take a signal's action; null: it was ignored (look at the next one). */
  private actOnSignal(
    c: Cpu,
    task: Task,
    frame: PtRegsFrame,
    info: SigInfo,
    action: SigAction,
  ): number | null {
    const sig = info.signo
    if (action.handler === SIG_IGN) return null
    if (action.handler === SIG_DFL) {
      const def = defaultAction(sig)
      if (def === 'ign' || def === 'cont') return null
      if (def === 'stop') {
        this.stopGroup(c, task, sig)
        return -1
      }
      return sig
    }
    // A syscall cut short by the signal (handle_signal): EINTR, or run again after the handler.
    if (isSyscallFrame(frame)) {
      const code = -frame.get('ax')
      const restart = code === ERESTARTNOINTR || (code === ERESTARTSYS && (action.flags & SA_RESTART) !== 0)
      if (restart) restartSyscall(frame)
      else if (code === ERESTARTSYS || code === ERESTARTNOHAND || code === ERESTART_RESTARTBLOCK)
        frame.set('ax', -EINTR)
      if (code >= ERESTARTSYS && code <= ERESTART_RESTARTBLOCK) task.restart = null
    }
    // sigsuspend's temporary mask: the handler's frame saves the mask from before the call.
    const oldMask = task.savedSigmask ?? task.blocked
    task.savedSigmask = null
    if (!rseqSignalDeliver(this.kernel, c, task, frame)) return SIGSEGV
    if (!setupRtFrame(task, frame, info, action, oldMask, info.trapno ?? 0, info.err ?? 0, info.addr ?? 0, c))
      return SIGSEGV
    task.blocked = sanitizeMask(
      task.blocked | action.mask | ((action.flags & SA_NODEFER) === 0 ? bit(sig) : 0n),
    )
    const live = task.sighand.actions[sig]
    if ((action.flags & SA_RESETHAND) !== 0) Object.assign(live, { handler: SIG_DFL, flags: 0 })
    // tracehook_signal_handler: a task single-stepping goes into the handler one step at a time.
    this.kernel.tracehooks.reportSignalHandler(task, (frame.get('flags') & 0x100) !== 0)
    return 0
  }

  /** Job control: a stop signal's default action stops every thread of the group; the parent hears SIGCHLD (CLD_STOPPED). */
  stopGroup(c: Cpu, task: Task, sig: number): void {
    const { sched, tasks, tracehooks } = this.kernel
    for (const t of tasks.values()) {
      if (t.tgid !== task.tgid || t.state === 'zombie') continue
      const cpu = sched.cpuOf(t)
      if (cpu >= 0 && cpu !== c.id) {
        t.pendingKill = 0
        this.kernel.machine.interrupt(cpu, TIMER_VECTOR)
      }
      t.stopSignal = sig
      tracehooks.reportJctl(t, 5, sig) // CLD_STOPPED
      // A sleeper stays asleep under the stop: SIGCONT puts it back to sleep, what it waits for unchanged.
      sched.setTaskState(t, 'stopped')
    }
    const leader = tasks.get(task.tgid) ?? task
    leader.stopReported = false
    sched.setNeedResched(c)
    const parent = leader.parent
    if (parent && (parent.sighand.actions[SIGCHLD].flags & 1) === 0) {
      this.sendSignal(c, parent, {
        signo: SIGCHLD,
        code: 5,
        pid: leader.pid,
        status: sig,
        utime: clockTicks(taskCputime(this.kernel, leader)),
        stime: 0,
      }) // CLD_STOPPED
    }
  }

  /** SIGCONT: a stopped group runs again. */
  continueGroup(task: Task): void {
    const { sched, tasks, tracehooks } = this.kernel
    let any = false
    for (const t of tasks.values()) {
      if (t.tgid === task.tgid && t.state === 'stopped') {
        tracehooks.reportJctl(t, 6, SIGCONT) // CLD_CONTINUED
        if (t.sleep && !t.sleepPending) sched.setTaskState(t, 'sleeping')
        else {
          sched.setTaskState(t, 'runnable')
          sched.kickIdleCpu()
        }
        any = true
      }
    }
    if (any) (tasks.get(task.tgid) ?? task).continueReported = false
  }

  /**
   * A fatal signal: the whole thread group ends with it. A thread some CPU is
   * running dies on its way back to user mode (do_group_exit); one switched
   * out ends now.
   */
  killTask(c: Cpu, target: Task, sig: number): void {
    const tasks = this.kernel.tasks
    const leader = tasks.get(target.tgid) ?? target
    for (const t of [...tasks.values()]) {
      if (t.tgid !== leader.tgid || t.state === 'zombie') continue
      this.zap(c, t, sig, 0, sig)
    }
  }

  /** One thread of a dying group: marked if on a CPU (it dies at its exit to user mode), else ended now. */
  zap(c: Cpu, t: Task, mark: number, code: number, signal: number): void {
    const cpu = this.kernel.sched.cpuOf(t)
    if (cpu < 0) {
      this.kernel.exit.exitTask(c, t, code, signal)
      return
    }
    t.pendingKill = mark
    this.recalcSigpending(t)
    if (cpu !== c.id) this.kernel.machine.interrupt(cpu, TIMER_VECTOR)
  }

  private registerHypercalls(): void {
    const k = this.kernel
    const m = k.machine
    m.registerHypercall(HC_SIGNAL, (c) => {
      const task = k.current(c)
      const dies = this.doSignal(c, task, k.frame(arg(c, 0)))
      this.recalcSigpending(task)
      k.sched.noteWakeups(c)
      ret(c, dies ? 1 : 0)
    })
    m.registerHypercall(HC_FIND_TASK, (c) => {
      const t = k.tasks.get(arg(c, 0) | 0)
      ret(c, t && t.state !== 'zombie' ? t.guestTask : 0)
    })
    m.registerHypercall(HC_SEND_SIGNAL, (c) => {
      // struct kernel_siginfo: si_signo +0, si_code +8, si_pid +16.
      const info = arg(c, 1)
      const word = (off: number) => k.readKernel32(info + off)
      this.sendSignal(c, k.guestTasks.taskAt(arg(c, 2)), { signo: arg(c, 0), code: word(8), pid: word(16) })
      k.sched.noteWakeups(c)
      ret(c, 0)
    })
  }
}

/** The frame entered the kernel through syscall (orig_ax holds its number; exceptions store -1). */
function isSyscallFrame(frame: PtRegsFrame): boolean {
  return frame.get('orig_ax') >= 0
}

/** Point the frame back at the syscall instruction, to run the same call again. */
function restartSyscall(frame: PtRegsFrame): void {
  frame.set('ax', frame.get('orig_ax'))
  frame.set('ip', frame.get('ip') - 2)
}
