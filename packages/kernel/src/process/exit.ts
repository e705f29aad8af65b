// A task's end (kernel/exit.c's host half): do_exit reaches it through
// HC_EXIT (do_group_exit first kills the other threads through
// HC_ZAP_OTHER_THREADS); a thread of a dying group, or a task killed while
// switched out, ends here too. exit_mm / exit_files, exit_notify (orphans
// to init, SIGCHLD to the parent, the tracers' death report) and
// release_task (reap) are the host's; the guest then switches away for good
// (do_task_dead) and the next task's finish_task_switch frees the stack.

import type { Cpu } from '@probekit/x86-emu'
import { HC_EXIT, HC_EXIT_REPORT, HC_ZAP_OTHER_THREADS } from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import type { Kernel } from '../kernel.js'
import { writeUserU32 } from '../mm/user-memory.js'
import { clockTicks, taskCputime } from '../sched/cputime.js'
import type { Task } from '../sched/task.js'
import { SIG_IGN, SIGCHLD } from '../signal/signals.js'
import { exitRobustList } from './robust-futex.js'

export interface ExitStatus {
  /** Exit status as a shell reports it: the code, or 128 + signal. */
  status: number
  code: number
  signal: number
}

export function exitStatus(t: Task): ExitStatus {
  return { status: t.exitSignal ? 128 + t.exitSignal : t.exitCode, code: t.exitCode, signal: t.exitSignal }
}

export class TaskExit {
  constructor(private readonly kernel: Kernel) {
    // tracehook_report_exit, in the exiting task's own context: tracers may change the code or hold it
    // here (the guest waits in TASK_TRACED) before anything is torn down.
    kernel.machine.registerHypercall(HC_EXIT_REPORT, (c) => {
      const task = kernel.current(c)
      task.exitReported = true
      ret(c, kernel.tracehooks.reportExit(task, arg(c, 0)))
    })
    kernel.machine.registerHypercall(HC_EXIT, (c) => {
      const task = kernel.current(c)
      const status = arg(c, 0)
      // do_exit's code is a wait status: the exit code in bits 8-15, or the signal that killed it.
      const code = (status >> 8) & 0xff
      const signal = status & 0x7f
      if (task.state !== 'zombie') this.exitTask(c, task, code, signal)
      kernel.sched.noteWakeups(c)
      ret(c, 0)
    })
    // do_group_exit, before its do_exit: the rest of the group dies with the same status.
    kernel.machine.registerHypercall(HC_ZAP_OTHER_THREADS, (c) => {
      const status = arg(c, 0)
      this.zapOtherThreads(c, kernel.current(c), (status >> 8) & 0xff, status & 0x7f)
      kernel.sched.noteWakeups(c)
      ret(c, status)
    })
  }

  /** Is the last thread of t's group dead? */
  private groupDead(t: Task): boolean {
    for (const o of this.kernel.tasks.values()) if (o.tgid === t.tgid && o.state !== 'zombie') return false
    return true
  }

  /**
   * A task ends: it becomes a zombie (a thread is simply removed). If it is
   * some CPU's current task, it switches away for good (do_task_dead) and the
   * next task's finish_task_switch frees its stack; otherwise (killed while
   * switched out) its stack goes now.
   */
  exitTask(c: Cpu, task: Task, code: number, signal: number): void {
    if (task.state === 'zombie') return
    const k = this.kernel
    const { sched, signals, tracehooks } = k
    // Reported already from do_exit (HC_EXIT_REPORT); a task ended while switched out is reported here.
    if (!task.exitReported) {
      task.exitReported = true
      const status = tracehooks.reportExit(task, signal ? signal : code << 8)
      code = (status >> 8) & 0xff
      signal = status & 0x7f
    }
    // mm_release: robust futexes first, then the CLONE_CHILD_CLEARTID word.
    exitRobustList(k, task)
    if (task.clearChildTid) {
      try {
        writeUserU32(task.mm, task.clearChildTid, 0)
      } catch {}
      k.futex.wake(task.mm, task.clearChildTid, 1)
    }
    task.sleep?.cancel?.()
    task.sleep = null
    task.sleepPending = false
    task.pendingKill = 0
    sched.setTaskState(task, 'zombie')
    task.exitCode = code
    task.exitSignal = signal
    task.vforkDone = true
    task.files.release()
    task.mm.release()
    k.futex.forget(task)
    // Orphans go to init (init's own are left as they are: it is the last to go); those that asked
    // (PR_SET_PDEATHSIG) get their signal (forget_original_parent).
    const heir = task === k.init ? null : k.init
    for (const child of task.children) {
      child.parent = heir
      if (heir && child !== heir) heir.children.push(child)
      if (child.pdeathSignal !== 0 && child.state !== 'zombie')
        signals.sendSignal(c, child, { signo: child.pdeathSignal, code: 0, pid: task.tgid })
    }
    task.children = []
    // exit_notify: the parent hears of it, then tracers; a thread (or a child whose parent wants no
    // zombies) is released at once (release_task), after its death is reported.
    let autoreap = !task.isThreadGroupLeader
    if (!autoreap && task.parent && task.parent.state !== 'zombie') {
      const parent = task.parent
      const act = parent.sighand.actions[SIGCHLD]
      // A parent ignoring SIGCHLD (or with SA_NOCLDWAIT) leaves no zombie to wait for.
      autoreap = act.handler === SIG_IGN || (act.flags & 2) !== 0
      // do_notify_parent: CLD_KILLED with the signal or CLD_EXITED with the exit code, and the child's CPU time.
      signals.sendSignal(c, parent, {
        signo: SIGCHLD,
        code: signal ? 2 : 1,
        pid: task.pid,
        status: signal || task.exitCode,
        utime: clockTicks(taskCputime(k, task)),
        stime: 0,
      })
    }
    tracehooks.reportDeath(task, this.groupDead(task), signal)
    if (autoreap) this.reap(task)
    if (k.current(c) === task) sched.setNeedResched(c)
    else if (!sched.isCurrentAnywhere(task)) sched.releaseTaskStack(task)
    if (task === k.init) k.machine.stop(`init exited with status ${exitStatus(task).status}`)
  }

  /** zap_other_threads (exit_group, a fatal signal): every other thread of task's group ends; the leader's status is the group's. */
  zapOtherThreads(c: Cpu, task: Task, code: number, signal: number): void {
    const tasks = this.kernel.tasks
    const leader = tasks.get(task.tgid)
    if (leader && leader !== task) {
      leader.exitCode = code
      leader.exitSignal = signal
    }
    for (const t of [...tasks.values()])
      if (t.tgid === task.tgid && t !== task && t.state !== 'zombie')
        this.kernel.signals.zap(c, t, signal || -1, code, signal)
  }

  /** release_task: remove a zombie (wait4 collected it, or nobody will). */
  reap(t: Task): void {
    const k = this.kernel
    k.tracehooks.reportReap(t)
    k.tasks.delete(t.pid)
    // A thread is reaped as it exits, while its stack may still be in use: that one waits for put_task_stack.
    if (t.stackPhys < 0) k.guestTasks.forget(t)
    // Its CPU time (and its own children's) now counts as its parent's children's (RUSAGE_CHILDREN, tms_cutime).
    if (t.parent && t.isThreadGroupLeader) t.parent.cutime += t.utime + t.cutime
    if (t.parent) t.parent.children = t.parent.children.filter((c) => c !== t)
  }
}
