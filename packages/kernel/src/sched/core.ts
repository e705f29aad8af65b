// The scheduler's host half (kernel/sched/core.c). The guest runs
// schedule() -> __schedule() -> context_switch() -> __switch_to_asm itself;
// the host answers its leaves: which task runs next (pick_next_task,
// deterministic: least recently run first), what __switch_to switches
// besides the stack (address space, FPU/SSE state, FS/GS), try_to_wake_up,
// wake_up_new_task and the tick. It owns each CPU's run queue (its current
// and idle task) and the set of sleepers, and is what tracehooks may ask to
// hold, release or nudge a task.

import { type Cpu, restoreX87State, x87State } from '@probekit/x86-emu'
import {
  __TASK_STOPPED,
  __TASK_TRACED,
  _TIF_NOTIFY_RESUME,
  _TIF_SIGPENDING,
  _TIF_SINGLESTEP,
  _TIF_SYSCALL_TRACE,
  HC_PICK_NEXT_TASK,
  HC_PUT_TASK_STACK,
  HC_SWITCH_TO,
  HC_TIMER_TICK,
  HC_TTWU,
  HC_TTWU_PENDING,
  HC_WAKE_UP_NEW_TASK,
  PAGE_OFFSET,
  PERCPU_CPU_NUMBER,
  PERCPU_CURRENT_TASK,
  PERCPU_NEED_RESCHED,
  PERCPU_SELF,
  PERCPU_TOP_OF_STACK,
  PERCPU_TTWU_PENDING,
  TASK_DEAD,
  TASK_NEW,
  TASK_RUNNING,
  THREAD_SIZE,
  TIMER_VECTOR,
} from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { FdTable } from '../fs/files.js'
import { directMap } from '../guest-image.js'
import type { Kernel } from '../kernel.js'
import type { Mm } from '../mm/mm.js'
import { rseqPreempt } from './rseq.js'
import { Task, type TaskState } from './task.js'

/** A CPU's run queue: its per-CPU area, and the task on it. */
export interface Runqueue {
  percpu: number
  online: boolean
  current: Task
  idle: Task
}

export class Scheduler {
  readonly rq: Runqueue[] = []
  /** Tasks asleep in the guest (switched out in TASK_INTERRUPTIBLE / TASK_KILLABLE), in the order they slept. */
  private readonly sleepers = new Set<Task>()

  constructor(private readonly kernel: Kernel) {
    this.registerHypercalls()
  }

  /** sched_init / init_idle: CPU i's per-CPU area, boot stack, and idle task (swapper/i). */
  initCpu(i: number): void {
    const k = this.kernel
    const m = k.machine
    const alloc = (pages: number): number => m.frames.allocContiguous(pages) * 4096
    const percpuPhys = alloc(1)
    const stackPhys = alloc(THREAD_SIZE / 4096)
    const percpu = directMap(percpuPhys)
    k.writePhys64(percpuPhys + PERCPU_SELF, percpu)
    k.writePhys64(percpuPhys + PERCPU_CPU_NUMBER, i)
    k.writePhys64(percpuPhys + PERCPU_TOP_OF_STACK, directMap(stackPhys + THREAD_SIZE))
    // The idle task runs start_kernel and then cpu_idle on the boot stack.
    const idle = new Task(0, 0, null, `swapper/${i}`, null as unknown as Mm, new FdTable())
    idle.cwd = k.vfs.root
    idle.state = 'idle'
    k.guestTasks.attach(idle, stackPhys)
    k.guestTasks.setOnCpu(idle, true)
    k.writePhys64(percpuPhys + PERCPU_CURRENT_TASK, idle.guestTask)
    this.rq.push({ percpu, online: false, current: idle, idle })
  }

  current(cpu: Cpu): Task {
    return this.rq[cpu.id].current
  }

  private percpuPhys(cpu: number): number {
    return this.rq[cpu].percpu - PAGE_OFFSET
  }

  setNeedResched(cpu: Cpu | number): void {
    this.kernel.writePhys64(this.percpuPhys(typeof cpu === 'number' ? cpu : cpu.id) + PERCPU_NEED_RESCHED, 1)
  }

  /** The host's view of a task's state, mirrored in its task_struct.__state for guest code and probes. */
  setTaskState(t: Task, state: TaskState): void {
    if (state === 'sleeping') this.sleepers.add(t)
    else if (t.state === 'sleeping') this.sleepers.delete(t)
    t.state = state
    const guest =
      state === 'sleeping'
        ? t.sleepState
        : state === 'stopped'
          ? __TASK_STOPPED
          : state === 'traced'
            ? __TASK_TRACED
            : state === 'zombie'
              ? TASK_DEAD
              : state === 'new'
                ? TASK_NEW
                : TASK_RUNNING
    this.kernel.guestTasks.setState(t, guest)
  }

  /** Is t some CPU's current task (its kernel stack in use)? */
  isCurrentAnywhere(t: Task): boolean {
    for (const rq of this.rq) if (rq.current === t) return true
    return false
  }

  /** The CPU t runs on, or -1. */
  cpuOf(t: Task): number {
    return this.rq.findIndex((rq) => rq.current === t)
  }

  /**
   * pick_next_task's host half: the least recently run runnable task other
   * than prev (round robin, ties by pid), else prev if it may go on, else the
   * idle task. A task whose stack another CPU is still leaving (on_cpu) is
   * not taken. prev going to sleep is taken off the run queue here, unless
   * what it waits for already holds (a wake-up between prepare_to_wait and
   * schedule, which try_to_wake_up would have caught on Linux).
   */
  private pickNextTask(cpu: Cpu, prev: Task): Task {
    const { guestTasks, wait } = this.kernel
    if (prev.sleepPending) {
      prev.sleepPending = false
      if (wait.shouldWake(prev)) this.setTaskState(prev, 'running')
      else this.setTaskState(prev, 'sleeping')
    }
    let best: Task | null = null
    for (const t of this.kernel.tasks.values()) {
      if (t.state !== 'runnable' || t === prev || guestTasks.onCpu(t)) continue
      if (!best || t.lastRan < best.lastRan || (t.lastRan === best.lastRan && t.pid < best.pid)) best = t
    }
    const next = best ?? (prev.state === 'running' || prev.state === 'runnable' ? prev : this.rq[cpu.id].idle)
    if (prev !== next && prev.state === 'running') this.setTaskState(prev, 'runnable')
    if (next.state !== 'idle') {
      this.setTaskState(next, 'running')
      next.cpu = cpu.id
    }
    guestTasks.setOnCpu(next, true)
    return next
  }

  /** __switch_to's host half: what Linux's switch_mm, switch_fpu and FS/GS loading switch. */
  private switchTo(cpu: Cpu, prev: Task, next: Task): void {
    const k = this.kernel
    if (prev.state !== 'idle') {
      prev.xmm.set(cpu.xmm)
      prev.mxcsr = cpu.mxcsr
      restoreX87State(prev.x87, x87State(cpu))
      prev.fsBase = cpu.fsBase
      prev.gsBase = cpu.kernelGsBase
      prev.lastRan = cpu.instructions
      rseqPreempt(prev)
      prev.utime += k.machine.cycles(cpu.id) - prev.runStart
      if (prev.cpu === cpu.id) prev.cpu = -1
    }
    if (next.state === 'idle') cpu.setCr3(k.image.kernelSpace.root)
    else {
      next.runStart = k.machine.cycles(cpu.id)
      cpu.xmm.set(next.xmm)
      cpu.mxcsr = next.mxcsr
      restoreX87State(x87State(cpu), next.x87)
      cpu.fsBase = next.fsBase
      cpu.kernelGsBase = next.gsBase
      cpu.setCr3(next.mm.space.root)
      // rseq: a preempted or migrated task fixes up its critical section on the way to user mode.
      if (next.rseq) k.guestTasks.setTif(next, _TIF_NOTIFY_RESUME)
    }
    this.rq[cpu.id].current = next
  }

  /** try_to_wake_up's host half: 1 if p slept in one of @state and is now runnable. */
  private ttwu(p: Task, state: number): number {
    if (p.sleepPending && (p.sleepState & state) !== 0) {
      // Still on its CPU between prepare_to_wait and schedule: it simply does not go to sleep.
      p.sleepPending = false
      this.kernel.guestTasks.setState(p, TASK_RUNNING)
      return 1
    }
    if (p.state !== 'sleeping' || (p.sleepState & state) === 0) return 0
    this.setTaskState(p, 'runnable')
    this.kickIdleCpu()
    return 1
  }

  /** A task became runnable: an idle CPU (the lowest) leaves its halt to take it. */
  kickIdleCpu(): void {
    for (let i = 0; i < this.rq.length; i++) {
      if (this.rq[i].current.state === 'idle' && this.rq[i].online) {
        this.setNeedResched(i)
        this.kernel.machine.interrupt(i, TIMER_VECTOR)
        return
      }
    }
  }

  /** The next sleeper to wake (sched_ttwu_pending asks until there is none), in sleep order. */
  private ttwuPendingNext(): Task | null {
    if (this.sleepers.size === 0) return null
    for (const t of this.sleepers) if (this.kernel.wait.shouldWake(t)) return t
    return null
  }

  /** After host work that may have made sleepers ready: flag this CPU so the guest wakes them. */
  noteWakeups(cpu: Cpu): void {
    if (this.ttwuPendingNext()) this.kernel.writePhys64(this.percpuPhys(cpu.id) + PERCPU_TTWU_PENDING, 1)
  }

  /** Is there anything for a CPU to do but idle? */
  private hasRunnable(): boolean {
    for (const t of this.kernel.tasks.values()) if (t.state === 'runnable') return true
    return this.ttwuPendingNext() !== null
  }

  /** put_task_stack: a dead task's stack is free once no CPU is on it; its kretprobe instances go. */
  releaseTaskStack(t: Task): void {
    const k = this.kernel
    if (t.stackPhys < 0 || k.guestTasks.onCpu(t)) return
    for (const hook of k.taskDeadHooks) hook(t)
    k.guestTasks.freeStack(t)
    if (k.tasks.get(t.pid) !== t) k.guestTasks.forget(t)
  }

  // ------------------------------------------------------------------ what tracehooks may do to a task

  setSyscallTrace(task: Task, on: boolean): void {
    if (on) this.kernel.guestTasks.setTif(task, _TIF_SYSCALL_TRACE)
    else this.kernel.guestTasks.clearTif(task, _TIF_SYSCALL_TRACE)
  }

  /** set_notify_resume: the task passes the return-to-user safe point soon (a sleep goes on). */
  notifyResume(task: Task): void {
    this.kernel.guestTasks.setTif(task, _TIF_NOTIFY_RESUME)
    const cpu = this.cpuOf(task)
    if (cpu >= 0) this.kernel.machine.interrupt(cpu, TIMER_VECTOR)
  }

  /** signal_wake_up: the signal path soon - out of an interruptible sleep, off user mode on its CPU. */
  signalWakeUp(task: Task): void {
    this.kernel.guestTasks.setTif(task, _TIF_SIGPENDING)
    const cpu = this.cpuOf(task)
    if (cpu >= 0) this.kernel.machine.interrupt(cpu, TIMER_VECTOR)
    else if (task.state === 'sleeping' && this.kernel.wait.shouldWake(task)) {
      // Whichever CPU passes sched_ttwu_pending first wakes it; an idle one is asked to now.
      for (let i = 0; i < this.rq.length; i++)
        this.kernel.writePhys64(this.percpuPhys(i) + PERCPU_TTWU_PENDING, 1)
      this.kickIdleCpu()
    }
  }

  /** Hold the current task where it is (a safe point): it switches away and stays off the run queue. */
  hold(task: Task): void {
    if (task.state === 'zombie') return
    this.setTaskState(task, 'traced')
    const cpu = this.cpuOf(task)
    if (cpu >= 0) this.setNeedResched(cpu)
  }

  release(task: Task): void {
    if (task.state !== 'traced') return
    // Still on its CPU (it has not switched away yet): it simply goes on.
    this.setTaskState(task, this.isCurrentAnywhere(task) ? 'running' : 'runnable')
    this.kickIdleCpu()
  }

  /**
   * user_enable_single_step: TF in the user flags it returns to (the trap arrives as SIGTRAP), and
   * TIF_SINGLESTEP, by which a stepped syscall reports its own trap on its way out.
   */
  setUserSingleStep(task: Task, on: boolean): void {
    const flags = task.getReg('flags')
    task.setReg('flags', on ? flags | 0x100 : flags & ~0x100)
    if (on) this.kernel.guestTasks.setTif(task, _TIF_SINGLESTEP)
    else this.kernel.guestTasks.clearTif(task, _TIF_SINGLESTEP)
  }

  // ------------------------------------------------------------------ the guest's leaves

  private registerHypercalls(): void {
    const k = this.kernel
    const m = k.machine
    const taskAt = (addr: number) => k.guestTasks.taskAt(addr)
    m.registerHypercall(HC_TIMER_TICK, (c) => {
      if (c.id === 0) {
        k.jiffies++
        k.services.runDueWork(c, arg(c, 0))
        k.options.hostTick?.()
      }
      // scheduler_tick: sleepers whose time came are woken by the guest (sched_ttwu_pending); the time
      // slice ends if anything else may run. Switching waits for the return to user mode or the idle loop.
      this.noteWakeups(c)
      if (this.hasRunnable()) this.setNeedResched(c)
      ret(c, 0)
    })
    m.registerHypercall(HC_PICK_NEXT_TASK, (c) => {
      k.writePhys64(this.percpuPhys(c.id) + PERCPU_NEED_RESCHED, 0)
      ret(c, this.pickNextTask(c, taskAt(arg(c, 0))).guestTask)
    })
    m.registerHypercall(HC_SWITCH_TO, (c) => {
      this.switchTo(c, taskAt(arg(c, 0)), taskAt(arg(c, 1)))
      ret(c, 0)
    })
    m.registerHypercall(HC_PUT_TASK_STACK, (c) => {
      this.releaseTaskStack(taskAt(arg(c, 0)))
      ret(c, 0)
    })
    m.registerHypercall(HC_TTWU, (c) => ret(c, this.ttwu(taskAt(arg(c, 0)), arg(c, 1))))
    m.registerHypercall(HC_TTWU_PENDING, (c) => ret(c, this.ttwuPendingNext()?.guestTask ?? 0))
    m.registerHypercall(HC_WAKE_UP_NEW_TASK, (c) => {
      const p = taskAt(arg(c, 0))
      if (p.state === 'new') {
        this.setTaskState(p, 'runnable')
        this.kickIdleCpu()
        // A fork is a time to let the child run (and the parent lose its slice), as before.
        this.setNeedResched(c)
      }
      ret(c, 0)
    })
  }
}
