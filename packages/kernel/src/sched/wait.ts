// Sleeping (kernel/sched/wait.c's host half). A host leaf that must wait
// returns -EWOULDSLEEP with what it waits for; the guest's wait_event_host
// then runs prepare_to_wait_event -> schedule() -> finish_wait, asking
// here whether the condition holds or a signal ends the wait, and calls the
// leaf again once woken.

import type { Cpu } from '@probekit/x86-emu'
import {
  EWOULDSLEEP,
  HC_FINISH_WAIT,
  HC_PREPARE_TO_WAIT,
  TASK_INTERRUPTIBLE,
  TASK_RUNNING,
  TASK_WAKEKILL,
} from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { ERESTARTNOINTR, ERESTARTSYS } from '../errno.js'
import type { WouldBlock } from '../fs/files.js'
import type { Kernel } from '../kernel.js'
import { hasDeliverableSignal, SIGKILL } from '../signal/signals.js'
import type { SleepCondition, Task } from './task.js'

export class Wait {
  constructor(private readonly kernel: Kernel) {
    const m = kernel.machine
    m.registerHypercall(HC_PREPARE_TO_WAIT, (c: Cpu) =>
      ret(c, this.prepareToWait(kernel.current(c), arg(c, 0))),
    )
    m.registerHypercall(HC_FINISH_WAIT, (c: Cpu) => {
      this.finishWait(kernel.current(c))
      ret(c, 0)
    })
  }

  /** A leaf that must wait: remember what for; the guest sleeps (wait_event_host) and calls it again. */
  sleepOn(task: Task, r: WouldBlock): number {
    const sleep: SleepCondition = { ready: r.ready, restartCode: r.restartCode ?? ERESTARTSYS }
    if (r.cancel) sleep.cancel = r.cancel
    task.sleep = sleep
    return -EWOULDSLEEP
  }

  /** signal_pending_state: does a signal (or a tracer's forced signal path, utrace's INTERRUPT) end a sleep in this state? */
  signalInterrupts(t: Task, state: number): boolean {
    if (t.state === 'zombie' || t.pendingKill !== 0) return true
    if ((state & TASK_INTERRUPTIBLE) !== 0)
      return hasDeliverableSignal(t) || this.kernel.tracehooks.sigpendingForced(t)
    if ((state & TASK_WAKEKILL) !== 0) return t.pending.has(SIGKILL)
    return false
  }

  /** Should a sleeper wake: what it waits for holds, or a signal ends the sleep. */
  shouldWake(t: Task): boolean {
    return (t.sleep?.ready() ?? false) || this.signalInterrupts(t, t.sleepState)
  }

  /**
   * prepare_to_wait_event's host half: 1 if the condition holds (no sleep),
   * the negative restart code if a signal ends the wait, else 0: current
   * goes to sleep in @state at its next schedule().
   */
  private prepareToWait(task: Task, state: number): number {
    if (task.sleep?.ready()) return 1
    if (this.signalInterrupts(task, state)) {
      task.sleep?.cancel?.()
      return -(task.sleep?.restartCode ?? ERESTARTNOINTR)
    }
    task.sleepState = state
    task.sleepPending = true
    this.kernel.guestTasks.setState(task, state)
    return 0
  }

  private finishWait(task: Task): void {
    task.sleepPending = false
    task.sleep = null
    if (task.state === 'running') this.kernel.guestTasks.setState(task, TASK_RUNNING)
  }
}
