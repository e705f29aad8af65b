// The kernel: boots the guest image on every vCPU, runs processes, and
// provides the host services the guest kernel's leaf functions reach
// through vmcall.
//
// Context switches happen only by rewriting an entry's pt_regs frame (in
// HC_SCHEDULE, or in HC_TIMER_TICK when the tick interrupted the idle loop
// or ended a time slice): guest kernel code never blocks, so each vCPU's
// single kernel stack is empty whenever a task is switched out.

import {
  type Cpu,
  CR0_NE,
  CR0_PE,
  CR0_PG,
  CR0_WP,
  CR4_OSFXSR,
  CR4_OSXMMEXCPT,
  CR4_PAE,
  CR4_PGE,
  EFER_LMA,
  EFER_NXE,
  formatLinear,
  Machine,
  type RunResult,
  restoreX87State,
  x87State,
} from '@probekit/x86-emu'
import {
  __TASK_STOPPED,
  __TASK_TRACED,
  _TIF_NOTIFY_RESUME,
  _TIF_SIGPENDING,
  _TIF_SYSCALL_TRACE,
  EWOULDSLEEP,
  FAULT_FLAG_INSTRUCTION,
  FAULT_FLAG_WRITE,
  FDPUT_FPUT,
  HC_CPU_ONLINE,
  HC_EXCEPTION,
  HC_EXECVE,
  HC_EXIT,
  HC_FDGET,
  HC_FILE_OPEN,
  HC_FILE_READ,
  HC_FILE_WRITE,
  HC_FIND_TASK,
  HC_FINISH_WAIT,
  HC_FORK,
  HC_FPUT,
  HC_HANDLE_MM_FAULT,
  HC_NOTIFY_DIE,
  HC_NOTIFY_RESUME,
  HC_PICK_NEXT_TASK,
  HC_PREPARE_TO_WAIT,
  HC_PRINTK,
  HC_PUT_TASK_STACK,
  HC_SEND_SIGNAL,
  HC_SIGNAL,
  HC_SWITCH_TO,
  HC_SYSCALL,
  HC_SYSCALL_TRACE_ENTER,
  HC_SYSCALL_TRACE_EXIT,
  HC_TIMER_TICK,
  HC_TTWU,
  HC_TTWU_PENDING,
  HC_VFORK_WAIT,
  HC_WAKE_UP_NEW_TASK,
  KERNEL_CS,
  KERNEL_SS,
  NOTIFY_DONE,
  PAGE_OFFSET,
  PERCPU_CPU_NUMBER,
  PERCPU_CURRENT_TASK,
  PERCPU_NEED_RESCHED,
  PERCPU_SELF,
  PERCPU_TOP_OF_STACK,
  PERCPU_TTWU_PENDING,
  PT_REGS,
  PT_REGS_SIZE,
  type PtRegsField,
  TASK_DEAD,
  TASK_INTERRUPTIBLE,
  TASK_NEW,
  TASK_RUNNING,
  TASK_WAKEKILL,
  THREAD_SIZE,
  VM_FAULT_SIGSEGV,
} from './abi.js'
import {
  EBADF,
  EFAULT,
  EINTR,
  ENOENT,
  ENOEXEC,
  ENOSYS,
  EPIPE,
  ERESTART_RESTARTBLOCK,
  ERESTARTNOHAND,
  ERESTARTNOINTR,
  ERESTARTSYS,
} from './errno.js'
import { ElfError } from './exec/elf.js'
import { loadExecutable } from './exec/exec-loader.js'
import { makeDevFd } from './fs/dev-fd.js'
import { FdTable, O_RDWR, OpenFile, type WouldBlock } from './fs/files.js'
import { GuestFiles } from './fs/guest-file.js'
import { hostOpen } from './fs/syscalls.js'
import { CharDevice, RegularFile, Vfs } from './fs/vfs.js'
import { directMap, type GuestImage, loadGuestImage } from './guest-image.js'
import { copyProcess, readKernelCloneArgs } from './kernel-clone-args.js'
import { Mm } from './mm/mm.js'
import { PageCache } from './mm/page-cache.js'
import { BadAddress, writeUserU32 } from './mm/user-memory.js'
import { Printk } from './printk.js'
import { execTask } from './process.js'
import { defaultRlimits } from './rlimits.js'
import { exitRobustList } from './robust-futex.js'
import { GuestTasks } from './sched/guest-task.js'
import { rseqHandleNotifyResume, rseqPreempt, rseqSignalDeliver } from './sched/rseq.js'
import { type SleepCondition, Task, type TaskState } from './sched/task.js'
import { KernelServices } from './services.js'
import {
  bit,
  defaultAction,
  FPE_INTDIV,
  fpuExceptionCode,
  SA_NODEFER,
  SA_RESETHAND,
  SA_RESTART,
  SIG_DFL,
  SIG_IGN,
  SIGCHLD,
  SIGCONT,
  SIGKILL,
  SIGPIPE,
  SIGSEGV,
  SIGSTOP,
  SIGTSTP,
  SIGTTIN,
  SIGTTOU,
  type SigInfo,
  sanitizeMask,
  setupRtFrame,
} from './signal/signals.js'
import { type SyscallContext, type SyscallResult, syscallName, syscallTable } from './syscalls.js'
import { wallSeconds } from './time/clock.js'
import { type TracehookKernel, Tracehooks } from './trace/tracehook.js'
import { utf8Decode, utf8Encode } from './utf8.js'

export const TIMER_VECTOR = 32

export interface KernelOptions {
  /** The guest kernel image (guest/vmlinux). */
  image: Uint8Array
  cpus?: number
  memorySize?: number
  /** Guest cycles between timer interrupts (the tick; default 100 000). */
  tickCycles?: number
  quantum?: number
  /**
   * Where the console's output goes. A negative errno returned (-EPIPE: nobody reads any more,
   * -ENOSPC: a full disk) is what the guest's write gets, as from a pipe or file (EPIPE also
   * sends SIGPIPE, as pipe_write does); anything else means the data was written.
   */
  stdout?: (data: Uint8Array) => unknown
  stderr?: (data: Uint8Array) => unknown
  /** The console is a terminal (TCGETS succeeds, so libc line-buffers it); default false, as when piped. */
  consoleIsTty?: boolean
  /** Bytes for stdin (EOF after them), or a function called for each read (an empty result is EOF). */
  stdin?: Uint8Array | ((max: number) => Uint8Array)
}

export interface ExitStatus {
  /** Exit status as a shell reports it: the code, or 128 + signal. */
  status: number
  code: number
  signal: number
}

interface CpuState {
  percpu: number
  online: boolean
  current: Task
  idle: Task
}

export class Kernel implements TracehookKernel {
  readonly machine: Machine
  readonly image: GuestImage
  readonly vfs = new Vfs()
  readonly printk = new Printk()
  readonly tasks = new Map<number, Task>()
  /** Shared file pages (executables' text). */
  readonly pageCache: PageCache
  /** text_poke, stop_machine, synchronize_rcu, delayed work. */
  readonly services = new KernelServices(this)
  /** Every task's struct task_struct and kernel stack in guest memory. */
  readonly guestTasks: GuestTasks
  /** Every open file's struct file in guest memory. */
  readonly guestFiles: GuestFiles
  /** Tasks by their guest task_struct address (what the guest's scheduler hands the host). */
  private readonly byGuestTask = new Map<number, Task>()
  /** Tasks asleep in the guest (switched out in TASK_INTERRUPTIBLE / TASK_KILLABLE), in the order they slept. */
  private readonly sleepers = new Set<Task>()
  /** Called when a dead task's kernel stack is freed (kprobe_flush_task's moment: its kretprobe instances go). */
  readonly taskDeadHooks: ((t: Task) => void)[] = []
  /** Where the kernel reports each task's life to the tracers attached to it (utrace). */
  readonly tracehooks = new Tracehooks(this)
  jiffies = 0
  private readonly cpuState: CpuState[] = []
  private nextPid = 1
  private booting = false
  private init: Task | null = null
  readonly futexWaiters: { task: Task; mm: Mm; uaddr: number }[] = []
  /** Instructions met that the emulator does not implement (#UD for the guest), by description. */
  readonly unimplementedInstructions = new Map<string, number>()
  /** Syscall numbers met that the kernel does not implement (reported by name). */
  readonly unimplemented = new Map<number, number>()
  private readonly stdout: (d: Uint8Array) => unknown
  private readonly stderr: (d: Uint8Array) => unknown
  private stdinData: Uint8Array | ((max: number) => Uint8Array)
  private stdinPos = 0

  constructor(readonly options: KernelOptions) {
    const cpus = options.cpus ?? 1
    this.machine = new Machine({
      memorySize: options.memorySize ?? 256 * 1024 * 1024,
      cpus,
      quantum: options.quantum ?? 2000,
      timer: { period: options.tickCycles ?? 100_000, vector: TIMER_VECTOR },
    })
    this.image = loadGuestImage(this.machine, options.image)
    this.guestTasks = new GuestTasks(this.machine, this.symbol('ret_from_fork'))
    this.guestFiles = new GuestFiles(this.machine)
    this.pageCache = new PageCache(this.machine.memory, this.machine.frames)
    this.stdout = options.stdout ?? (() => undefined)
    this.stderr = options.stderr ?? (() => undefined)
    this.stdinData = options.stdin ?? new Uint8Array(0)
    this.setupDevices()
    this.registerHypercalls()
    // Instructions the emulator does not implement reach the guest as #UD (SIGILL); say which.
    this.machine.trapHandler = (cpu, ev) => {
      if (ev.vector === 6 && ev.unimplemented) {
        const n = (this.unimplementedInstructions.get(ev.detail) ?? 0) + 1
        this.unimplementedInstructions.set(ev.detail, n)
        if (n === 1) this.printk.log(this.jiffies, `cpu ${cpu.id}: ${ev.detail}`)
      }
      return 'deliver'
    }
    for (let i = 0; i < cpus; i++) this.cpuState.push(this.setupCpu(i))
  }

  get kallsyms() {
    return this.image.kallsyms
  }

  // ------------------------------------------------------------------ boot

  private setupCpu(i: number): CpuState {
    const m = this.machine
    const alloc = (pages: number): number => m.frames.allocContiguous(pages) * 4096
    const percpuPhys = alloc(1)
    const stackPhys = alloc(THREAD_SIZE / 4096)
    const percpu = directMap(percpuPhys)
    this.writePhys64(percpuPhys + PERCPU_SELF, percpu)
    this.writePhys64(percpuPhys + PERCPU_CPU_NUMBER, i)
    this.writePhys64(percpuPhys + PERCPU_TOP_OF_STACK, directMap(stackPhys + THREAD_SIZE))
    // The idle task (swapper/N) runs start_kernel and then cpu_idle on the boot stack.
    const idle = new Task(0, 0, null, `swapper/${i}`, null as unknown as Mm, new FdTable())
    idle.cwd = this.vfs.root
    idle.state = 'idle'
    this.guestTasks.attach(idle, stackPhys)
    this.guestTasks.setOnCpu(idle, true)
    this.byGuestTask.set(idle.guestTask, idle)
    this.writePhys64(percpuPhys + PERCPU_CURRENT_TASK, idle.guestTask)
    return { percpu, online: false, current: idle, idle }
  }

  symbol(name: string): number {
    const a = this.image.kallsyms.lookupName(name)
    if (a === undefined) throw new Error(`guest kernel has no symbol ${name}`)
    return a
  }

  /** Start every vCPU at startup_64 and run until each reports HC_CPU_ONLINE. */
  boot(): void {
    const entry = this.symbol('startup_64')
    this.machine.cpus.forEach((c, i) => {
      const st = this.cpuState[i]
      // NE: x87 errors as #MF; OSFXSR/OSXMMEXCPT: SSE enabled, SIMD errors as #XM (as Linux sets them).
      c.cr0 = CR0_PG | CR0_WP | CR0_NE | CR0_PE
      c.cr4 = CR4_PAE | CR4_PGE | CR4_OSFXSR | CR4_OSXMMEXCPT
      c.efer = EFER_LMA | EFER_NXE
      c.setCr3(this.image.kernelSpace.root)
      c.setCpl(0)
      c.cs = KERNEL_CS
      c.ss = KERNEL_SS
      c.rflags = 0x2
      c.rip = entry
      c.setLinear(4, this.readKernel64(st.percpu + PERCPU_TOP_OF_STACK))
      c.setReg(7, i)
      c.setLinear(6, st.percpu)
    })
    this.booting = true
    const r = this.machine.run({ maxInstructions: 50_000_000 })
    this.booting = false
    if (!this.cpuState.every((s) => s.online)) {
      throw new Error(`guest kernel did not come up: ${r.reason}: ${r.detail}\n${this.printk.text()}`)
    }
  }

  // ------------------------------------------------------------------ devices and processes

  private setupDevices(): void {
    const console = new CharDevice(
      (count) => {
        // A function is asked for each read (an interactive host stdin); bytes are consumed in order.
        if (typeof this.stdinData === 'function') return this.stdinData(count)
        const out = this.stdinData.subarray(this.stdinPos, this.stdinPos + count)
        this.stdinPos += out.length
        return out
      },
      (data) => {
        const r = this.stdout(data)
        return typeof r === 'number' && r < 0 ? r : data.length
      },
      () => this.options.consoleIsTty ?? false,
    )
    const err = new CharDevice(
      () => new Uint8Array(0),
      (data) => {
        const r = this.stderr(data)
        return typeof r === 'number' && r < 0 ? r : data.length
      },
    )
    const dev = this.vfs.mkdirp('/dev')
    dev.children.set('console', console)
    dev.children.set('stderr-console', err)
    dev.children.set(
      'null',
      new CharDevice(
        () => new Uint8Array(0),
        (d) => d.length,
      ),
    )
    makeDevFd(dev, () => this.serving?.files)
    this.vfs.mkdirp('/tmp')
    // The user and group databases a fresh Debian system starts with (root only, and nogroup/nobody):
    // programs look their names up (tar headers, ls -l, id, whoami). Files, so a program may replace them.
    this.vfs.writeFile(
      '/etc/passwd',
      utf8Encode(
        'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
      ),
      0o644,
    )
    this.vfs.writeFile('/etc/group', utf8Encode('root:x:0:\nnogroup:x:65534:\n'), 0o644)
  }

  /** The task whose system call the host is serving now ("current" for /dev/fd). */
  private serving: Task | null = null

  /** Make a process from an executable in the file system; it becomes init (pid 1) if it is the first. */
  spawn(path: string, argv: readonly string[], envp: readonly string[] = []): Task {
    const node = this.vfs.lookup(path)
    if (typeof node === 'number' || !(node instanceof RegularFile)) throw new Error(`${path}: no such file`)
    const mm = new Mm(this.machine.memory, this.machine.frames, this.image.kernelSpace)
    const files = new FdTable()
    const consoleIn = this.vfs.lookup('/dev/console')
    const consoleErr = this.vfs.lookup('/dev/stderr-console')
    if (typeof consoleIn === 'number' || typeof consoleErr === 'number') throw new Error('no console')
    files.install(new OpenFile(consoleIn, O_RDWR, '/dev/console'))
    files.install(new OpenFile(consoleIn, O_RDWR, '/dev/console'))
    files.install(new OpenFile(consoleErr, O_RDWR, '/dev/stderr-console'))
    const pid = this.nextPid++
    const task = new Task(pid, pid, null, basename(path), mm, files)
    this.attachGuestTask(task)
    task.cwd = this.vfs.root
    task.pgid = pid // the first process leads its own session and process group, like init
    task.sid = pid
    task.rlimits = defaultRlimits(this.machine.memory.size)
    const prog = loadExecutable(mm, node.contents(), { filename: path, argv, envp }, this.machine.cpus[0], {
      pageCache: this.pageCache,
      file: node,
    })
    task.setReg('ip', prog.entry)
    task.setReg('sp', prog.sp)
    task.setReg('cs', 0x33)
    task.setReg('ss', 0x2b)
    task.setReg('flags', 0x202)
    task.setReg('orig_ax', -1) // it returns to user mode through ret_from_fork from no syscall
    this.tasks.set(pid, task)
    if (!this.init) this.init = task
    // Kick CPU 0 so it leaves the idle loop for the new task.
    this.machine.interrupt(0, TIMER_VECTOR)
    return task
  }

  /** Run until init exits (or the budget runs out). */
  run(maxInstructions = Number.POSITIVE_INFINITY): { result: RunResult; exit: ExitStatus | null } {
    const result = this.machine.run({ maxInstructions })
    const init = this.init
    const exit = init && init.state === 'zombie' ? exitStatus(init) : null
    return { result, exit }
  }

  // ------------------------------------------------------------------ guest memory

  private physOfDirect(addr: number): number {
    const phys = addr - PAGE_OFFSET
    if (phys < 0 || phys >= this.machine.memory.size)
      throw new Error(`not a direct-map address: ${formatLinear(addr)}`)
    return phys
  }

  writePhys64(phys: number, v: number): void {
    this.machine.memory.write32(phys, v | 0)
    this.machine.memory.write32(phys + 4, Math.floor(v / 0x1_0000_0000) | 0)
  }

  /** A pt_regs frame in guest memory (on a kernel stack, in the direct map). */
  frame(regs: number): PtRegsFrame {
    const memory = this.machine.memory
    return new PtRegsFrame(memory.bytes, this.physOfDirect(regs), memory.view)
  }

  /** Read kernel memory (direct map or image) for a hypercall argument. */
  readKernel(addr: number, len: number): Uint8Array {
    return this.machine.memory.readBytes(this.physOfKernel(addr), len)
  }

  writeKernel(addr: number, data: Uint8Array): void {
    this.machine.memory.writeBytes(this.physOfKernel(addr), data)
  }

  /** A kernel address (direct map, or the image at __START_KERNEL_map) as a physical one. */
  private physOfKernel(addr: number): number {
    return addr >= PAGE_OFFSET && addr < PAGE_OFFSET + this.machine.memory.size
      ? addr - PAGE_OFFSET
      : addr + 0x80000000
  }

  current(cpu: Cpu): Task {
    return this.cpuState[cpu.id].current
  }

  // ------------------------------------------------------------------ scheduling

  private percpuPhys(cpu: number): number {
    return this.physOfDirect(this.cpuState[cpu].percpu)
  }

  private setNeedResched(cpu: Cpu | number): void {
    this.writePhys64(this.percpuPhys(typeof cpu === 'number' ? cpu : cpu.id) + PERCPU_NEED_RESCHED, 1)
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
    this.guestTasks.setState(t, guest)
  }

  /** Is the last thread of t's group dead? */
  private groupDead(t: Task): boolean {
    for (const o of this.tasks.values()) if (o.tgid === t.tgid && o.state !== 'zombie') return false
    return true
  }

  /** Is t some CPU's current task (its kernel stack in use)? */
  private isCurrentAnywhere(t: Task): boolean {
    for (const st of this.cpuState) if (st.current === t) return true
    return false
  }

  /** The CPU t runs on, or -1. */
  private cpuOf(t: Task): number {
    return this.cpuState.findIndex((st) => st.current === t)
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
    if (prev.sleepPending) {
      prev.sleepPending = false
      if (this.shouldWake(prev)) this.setTaskState(prev, 'running')
      else this.setTaskState(prev, 'sleeping')
    }
    let best: Task | null = null
    for (const t of this.tasks.values()) {
      if (t.state !== 'runnable' || t === prev || this.guestTasks.onCpu(t)) continue
      if (!best || t.lastRan < best.lastRan || (t.lastRan === best.lastRan && t.pid < best.pid)) best = t
    }
    const next =
      best ?? (prev.state === 'running' || prev.state === 'runnable' ? prev : this.cpuState[cpu.id].idle)
    if (prev !== next && prev.state === 'running') this.setTaskState(prev, 'runnable')
    if (next.state !== 'idle') {
      this.setTaskState(next, 'running')
      next.cpu = cpu.id
    }
    this.guestTasks.setOnCpu(next, true)
    return next
  }

  /** __switch_to's host half: what Linux's switch_mm, switch_fpu and FS/GS loading switch. */
  private switchTo(cpu: Cpu, prev: Task, next: Task): void {
    if (prev.state !== 'idle') {
      prev.xmm.set(cpu.xmm)
      prev.mxcsr = cpu.mxcsr
      restoreX87State(prev.x87, x87State(cpu))
      prev.fsBase = cpu.fsBase
      prev.gsBase = cpu.kernelGsBase
      prev.lastRan = cpu.instructions
      rseqPreempt(prev)
      prev.utime += this.machine.cycles(cpu.id) - prev.runStart
      if (prev.cpu === cpu.id) prev.cpu = -1
    }
    if (next.state === 'idle') cpu.setCr3(this.image.kernelSpace.root)
    else {
      next.runStart = this.machine.cycles(cpu.id)
      cpu.xmm.set(next.xmm)
      cpu.mxcsr = next.mxcsr
      restoreX87State(x87State(cpu), next.x87)
      cpu.fsBase = next.fsBase
      cpu.kernelGsBase = next.gsBase
      cpu.setCr3(next.mm.space.root)
      // rseq: a preempted or migrated task fixes up its critical section on the way to user mode.
      if (next.rseq) this.setTif(next, _TIF_NOTIFY_RESUME)
    }
    this.cpuState[cpu.id].current = next
  }

  // ------------------------------------------------------------------ sleeping and waking

  /** A leaf that must wait: remember what for; the guest sleeps (wait_event_host) and calls it again. */
  private sleepOn(task: Task, r: WouldBlock): number {
    const sleep: SleepCondition = { ready: r.ready, restartCode: r.restartCode ?? ERESTARTSYS }
    if (r.cancel) sleep.cancel = r.cancel
    task.sleep = sleep
    return -EWOULDSLEEP
  }

  /** signal_pending_state: does a signal (or a tracer's stop, as utrace's signal_wake_up) end a sleep in this state? */
  private signalInterrupts(t: Task, state: number): boolean {
    if (t.state === 'zombie' || t.pendingKill !== 0) return true
    if ((state & TASK_INTERRUPTIBLE) !== 0)
      return this.hasDeliverableSignal(t) || this.tracehooks.stopPending(t)
    if ((state & TASK_WAKEKILL) !== 0) return t.pending.has(SIGKILL)
    return false
  }

  private hasDeliverableSignal(t: Task): boolean {
    for (const sig of t.pending.keys()) if ((t.blocked & bit(sig)) === 0n) return true
    return false
  }

  /** Should a sleeper wake: what it waits for holds, or a signal ends the sleep. */
  private shouldWake(t: Task): boolean {
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
    this.guestTasks.setState(task, state)
    return 0
  }

  private finishWait(task: Task): void {
    task.sleepPending = false
    task.sleep = null
    if (task.state === 'running') this.guestTasks.setState(task, TASK_RUNNING)
  }

  /** try_to_wake_up's host half: 1 if p slept in one of @state and is now runnable. */
  private ttwu(p: Task, state: number): number {
    if (p.sleepPending && (p.sleepState & state) !== 0) {
      // Still on its CPU between prepare_to_wait and schedule: it simply does not go to sleep.
      p.sleepPending = false
      this.guestTasks.setState(p, TASK_RUNNING)
      return 1
    }
    if (p.state !== 'sleeping' || (p.sleepState & state) === 0) return 0
    this.setTaskState(p, 'runnable')
    this.kickIdleCpu()
    return 1
  }

  /** A task became runnable: an idle CPU (the lowest) leaves its halt to take it. */
  private kickIdleCpu(): void {
    for (let i = 0; i < this.cpuState.length; i++) {
      if (this.cpuState[i].current.state === 'idle' && this.cpuState[i].online) {
        this.setNeedResched(i)
        this.machine.interrupt(i, TIMER_VECTOR)
        return
      }
    }
  }

  /** The next sleeper to wake (sched_ttwu_pending asks until there is none), in sleep order. */
  private ttwuPendingNext(): Task | null {
    if (this.sleepers.size === 0) return null
    for (const t of this.sleepers) if (this.shouldWake(t)) return t
    return null
  }

  /** After host work that may have made sleepers ready: flag this CPU so the guest wakes them. */
  private noteWakeups(cpu: Cpu): void {
    if (this.ttwuPendingNext()) this.writePhys64(this.percpuPhys(cpu.id) + PERCPU_TTWU_PENDING, 1)
  }

  // thread_info.flags: only the host writes them, so t.tif mirrors the guest's word exactly.
  private setTif(t: Task, bits: number): void {
    if ((t.tif & bits) === bits || !t.guestTask) return
    t.tif |= bits
    this.guestTasks.setFlags(t, t.tif)
  }

  private clearTif(t: Task, bits: number): void {
    if ((t.tif & bits) === 0 || !t.guestTask) return
    t.tif &= ~bits
    this.guestTasks.setFlags(t, t.tif)
  }

  /** recalc_sigpending: TIF_SIGPENDING iff a signal the mask lets through is pending (or the task must die). */
  recalcSigpending(t: Task): void {
    if (t.pendingKill !== 0 || (t.pending.size > 0 && this.hasDeliverableSignal(t)))
      this.setTif(t, _TIF_SIGPENDING)
    else this.clearTif(t, _TIF_SIGPENDING)
  }

  // ------------------------------------------------------------------ what tracehooks may do to a task

  setSyscallTrace(task: Task, on: boolean): void {
    if (on) this.setTif(task, _TIF_SYSCALL_TRACE)
    else this.clearTif(task, _TIF_SYSCALL_TRACE)
  }

  /** Make the task reach a safe point soon: out of an interruptible sleep, off user mode on its CPU. */
  notifyResume(task: Task): void {
    this.setTif(task, _TIF_NOTIFY_RESUME)
    const cpu = this.cpuOf(task)
    if (cpu >= 0) this.machine.interrupt(cpu, TIMER_VECTOR)
    else if (task.state === 'sleeping' && this.shouldWake(task)) {
      // Whichever CPU passes sched_ttwu_pending first wakes it; an idle one is asked to now.
      for (let i = 0; i < this.cpuState.length; i++)
        this.writePhys64(this.percpuPhys(i) + PERCPU_TTWU_PENDING, 1)
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

  /** user_enable_single_step: TF in the user flags it returns to (the trap arrives as SIGTRAP). */
  setUserSingleStep(task: Task, on: boolean): void {
    const flags = task.getReg('flags')
    task.setReg('flags', on ? flags | 0x100 : flags & ~0x100)
  }

  /** put_task_stack: a dead task's stack is free once no CPU is on it; its kretprobe instances go. */
  private releaseTaskStack(t: Task): void {
    if (t.stackPhys < 0 || this.guestTasks.onCpu(t)) return
    for (const hook of this.taskDeadHooks) hook(t)
    this.guestTasks.freeStack(t)
    if (!this.tasks.has(t.pid) || this.tasks.get(t.pid) !== t) this.byGuestTask.delete(t.guestTask)
  }

  // ------------------------------------------------------------------ hypercalls

  private registerHypercalls(): void {
    const m = this.machine
    const arg = (c: Cpu, n: number) => c.getLinear([7, 6, 2, 10, 8, 9][n])
    const ret = (c: Cpu, v: number) => c.setLinear(0, v)
    const taskAt = (addr: number): Task => {
      const t = this.byGuestTask.get(addr)
      if (!t) throw new Error(`no task_struct at ${formatLinear(addr)}`)
      return t
    }
    m.registerHypercall(HC_CPU_ONLINE, (c) => {
      this.cpuState[c.id].online = true
      ret(c, 0)
      if (this.booting && this.cpuState.every((s) => s.online)) this.machine.stop('all CPUs online')
    })
    m.registerHypercall(HC_PRINTK, (c) => {
      this.printk.log(this.jiffies, utf8Decode(this.readKernel(arg(c, 0), arg(c, 1))))
      ret(c, 0)
    })
    m.registerHypercall(HC_TIMER_TICK, (c) => {
      if (c.id === 0) {
        this.jiffies++
        this.services.runDueWork()
      }
      // scheduler_tick: sleepers whose time came are woken by the guest (sched_ttwu_pending); the time
      // slice ends if anything else may run. Switching waits for the return to user mode or the idle loop.
      this.noteWakeups(c)
      if (this.hasRunnable()) this.setNeedResched(c)
      ret(c, 0)
    })
    m.registerHypercall(HC_PICK_NEXT_TASK, (c) => {
      this.writePhys64(this.percpuPhys(c.id) + PERCPU_NEED_RESCHED, 0)
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
    m.registerHypercall(HC_PREPARE_TO_WAIT, (c) => ret(c, this.prepareToWait(this.current(c), arg(c, 0))))
    m.registerHypercall(HC_FINISH_WAIT, (c) => {
      this.finishWait(this.current(c))
      ret(c, 0)
    })
    m.registerHypercall(HC_VFORK_WAIT, (c) => {
      const child = this.byGuestTask.get(arg(c, 0))
      if (!child) return ret(c, 0) // gone already: it let go of the memory long ago
      ret(
        c,
        child.vforkDone
          ? 0
          : this.sleepOn(this.current(c), { wouldBlock: true, ready: () => child.vforkDone }),
      )
    })
    m.registerHypercall(HC_SIGNAL, (c) => {
      const task = this.current(c)
      const dies = this.doSignal(c, task, this.frame(arg(c, 0)))
      this.recalcSigpending(task)
      this.noteWakeups(c)
      ret(c, dies ? 1 : 0)
    })
    m.registerHypercall(HC_NOTIFY_RESUME, (c) => {
      const task = this.current(c)
      const frame = this.frame(arg(c, 0))
      this.clearTif(task, _TIF_NOTIFY_RESUME)
      rseqHandleNotifyResume(this, c, task, frame)
      this.tracehooks.notifyResume(task, frame)
      ret(c, 0)
    })
    m.registerHypercall(HC_SYSCALL_TRACE_ENTER, (c) => {
      this.tracehooks.reportSyscallEntry(this.current(c), this.frame(arg(c, 0)))
      ret(c, 0)
    })
    m.registerHypercall(HC_SYSCALL_TRACE_EXIT, (c) => {
      this.tracehooks.reportSyscallExit(this.current(c), this.frame(arg(c, 0)))
      ret(c, 0)
    })
    m.registerHypercall(HC_SYSCALL, (c) => {
      const task = this.current(c)
      const r = this.syscall(c, arg(c, 0))
      // The mask may have changed (sigprocmask, sigsuspend, sigreturn) and sleepers may be ready.
      this.recalcSigpending(task)
      this.noteWakeups(c)
      ret(c, r)
    })
    m.registerHypercall(HC_FDGET, (c) => {
      const task = this.current(c)
      const f = task.files.get(arg(c, 0) | 0)
      if (!f) return ret(c, 0)
      // A table other tasks share: hold a reference while the guest uses the file (fdput drops it).
      if (task.files.users > 1) {
        f.refs++
        return ret(c, this.guestFiles.face(f) + FDPUT_FPUT)
      }
      ret(c, this.guestFiles.face(f))
    })
    m.registerHypercall(HC_HANDLE_MM_FAULT, (c) => {
      // handle_mm_fault: demand paging and copy-on-write in the current task's address space.
      const task = this.current(c)
      const address = arg(c, 0)
      const flags = arg(c, 1)
      const ok =
        task.state !== 'idle' &&
        task.mm.handleFault(address, (flags & FAULT_FLAG_WRITE) !== 0, (flags & FAULT_FLAG_INSTRUCTION) !== 0)
      if (ok) c.invlpg(address)
      ret(c, ok ? 0 : VM_FAULT_SIGSEGV)
    })
    m.registerHypercall(HC_FIND_TASK, (c) => {
      const t = this.tasks.get(arg(c, 0) | 0)
      ret(c, t && t.state !== 'zombie' ? t.guestTask : 0)
    })
    m.registerHypercall(HC_SEND_SIGNAL, (c) => {
      // struct kernel_siginfo: si_signo +0, si_code +8, si_pid +16.
      const info = arg(c, 1)
      const word = (off: number) => readI32(this.readKernel(info + off, 4))
      this.sendSignal(c, taskAt(arg(c, 2)), { signo: arg(c, 0), code: word(8), pid: word(16) })
      this.noteWakeups(c)
      ret(c, 0)
    })
    m.registerHypercall(HC_FPUT, (c) => {
      this.guestFiles.byAddress(arg(c, 0))?.release()
      ret(c, 0)
    })
    m.registerHypercall(HC_FILE_WRITE, (c) => {
      const task = this.current(c)
      const f = this.guestFiles.byHostId(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = this.fileWrite(c, task, f, this.readKernel(arg(c, 1), arg(c, 2)))
      this.noteWakeups(c)
      ret(c, typeof r === 'number' ? r : this.sleepOn(task, r))
    })
    m.registerHypercall(HC_FILE_READ, (c) => {
      const task = this.current(c)
      const f = this.guestFiles.byHostId(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = f.read(arg(c, 2))
      if (typeof r === 'number') return ret(c, r)
      if (r instanceof Uint8Array) {
        this.writeKernel(arg(c, 1), r)
        this.noteWakeups(c) // a writer waiting for room
        return ret(c, r.length)
      }
      ret(c, this.sleepOn(task, r))
    })
    m.registerHypercall(HC_FILE_OPEN, (c) => {
      const path = this.readKernelString(arg(c, 0))
      ret(
        c,
        this.withContext(c, 0, (ctx) => hostOpen(ctx, path, arg(c, 1) | 0, arg(c, 2), arg(c, 3) | 0)),
      )
    })
    m.registerHypercall(HC_FORK, (c) => {
      const args = readKernelCloneArgs(this, arg(c, 0))
      ret(
        c,
        this.withContext(c, args.regs, (ctx) => copyProcess(ctx, args)),
      )
    })
    m.registerHypercall(HC_EXECVE, (c) => {
      const path = this.readKernelString(arg(c, 0))
      const task = this.current(c)
      const r = this.withContext(c, arg(c, 1), (ctx) => execTask(ctx, path))
      if (r === 0) this.tracehooks.reportExec(task, path, this.frame(arg(c, 1)))
      this.recalcSigpending(task)
      this.noteWakeups(c) // a vfork parent
      ret(c, r)
    })
    m.registerHypercall(HC_EXIT, (c) => {
      const task = this.current(c)
      const status = arg(c, 0)
      // do_exit's code is a wait status: the exit code in bits 8-15, or the signal that killed it.
      const code = (status >> 8) & 0xff
      const signal = status & 0x7f
      if (task.state !== 'zombie') {
        if (arg(c, 1) !== 0) this.exitGroup(c, task, code, signal)
        else this.exitTask(c, task, code, signal)
      }
      this.noteWakeups(c)
      ret(c, 0)
    })
    m.registerHypercall(HC_NOTIFY_DIE, (c) => {
      const fn = this.dieNotifiers[arg(c, 3)]
      // struct die_args (r8): err at +16 (the error code; DR6 for #DB).
      const dieArgs = arg(c, 4)
      const err = dieArgs !== 0 ? this.readKernel64(dieArgs + 16) : 0
      ret(c, fn ? fn(arg(c, 0), arg(c, 1), arg(c, 2), c, err) : NOTIFY_DONE)
    })
    m.registerHypercall(HC_EXCEPTION, (c) => {
      ret(c, this.exception(c, arg(c, 0), arg(c, 1), arg(c, 2), arg(c, 3) === 1, arg(c, 4)))
    })
  }

  private hasRunnable(): boolean {
    for (const t of this.tasks.values()) if (t.state === 'runnable') return true
    return this.ttwuPendingNext() !== null
  }

  /**
   * A task ends: it becomes a zombie (a thread is simply removed). If it is
   * some CPU's current task, it switches away for good (do_task_dead) and the
   * next task's finish_task_switch frees its stack; otherwise (killed while
   * switched out) its stack goes now.
   */
  exitTask(c: Cpu, task: Task, code: number, signal: number): void {
    if (task.state === 'zombie') return
    this.tracehooks.reportExit(task, signal ? signal : code << 8)
    // mm_release: robust futexes first, then the CLONE_CHILD_CLEARTID word.
    exitRobustList(this, task)
    if (task.clearChildTid) {
      try {
        writeUserU32(task.mm, task.clearChildTid, 0)
      } catch {}
      this.futexWake(task.mm, task.clearChildTid, 1)
    }
    task.sleep?.cancel?.()
    task.sleep = null
    task.sleepPending = false
    task.pendingKill = 0
    this.setTaskState(task, 'zombie')
    task.exitCode = code
    task.exitSignal = signal
    task.vforkDone = true
    task.files.release()
    task.mm.release()
    for (let i = this.futexWaiters.length - 1; i >= 0; i--)
      if (this.futexWaiters[i].task === task) this.futexWaiters.splice(i, 1)
    // Orphans go to init (init's own are left as they are: it is the last to go); those that asked
    // (PR_SET_PDEATHSIG) get their signal (forget_original_parent).
    const heir = task === this.init ? null : this.init
    for (const child of task.children) {
      child.parent = heir
      if (heir && child !== heir) heir.children.push(child)
      if (child.pdeathSignal !== 0 && child.state !== 'zombie')
        this.sendSignal(c, child, { signo: child.pdeathSignal, code: 0, pid: task.tgid })
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
      this.sendSignal(c, parent, { signo: SIGCHLD, code: signal ? 2 : 1, pid: task.pid }) // CLD_KILLED / CLD_EXITED
    }
    this.tracehooks.reportDeath(task, this.groupDead(task))
    if (autoreap) this.reap(task)
    if (this.current(c) === task) this.setNeedResched(c)
    else if (!this.isCurrentAnywhere(task)) this.releaseTaskStack(task)
    if (task === this.init) this.machine.stop(`init exited with status ${exitStatus(task).status}`)
  }

  /**
   * The host side of every write (write through HC_FILE_WRITE, writev, sendfile): a regular file's
   * modification time moves; a pipe nobody reads gives -EPIPE and, as pipe_write sends it, SIGPIPE.
   */
  fileWrite(c: Cpu, task: Task, f: OpenFile, data: Uint8Array): number | WouldBlock {
    const r = f.write(data)
    if (r === -EPIPE) this.sendSignal(c, task, { signo: SIGPIPE, code: 0, pid: task.tgid })
    else if (typeof r === 'number' && r > 0 && f.inode instanceof RegularFile)
      f.inode.mtime = wallSeconds(this, c.id)
    return r
  }

  /**
   * Queue a signal for a task (kill, tgkill, faults, SIGCHLD, SIGPIPE).
   * Ignored ones are dropped. The target acts on it on its way back to user
   * mode (get_signal): a sleeper the signal interrupts is woken for that
   * (signal_wake_up, through sched_ttwu_pending), a task running on another
   * CPU is interrupted.
   */
  sendSignal(c: Cpu, target: Task, info: SigInfo): void {
    const sig = info.signo
    const action = target.sighand.actions[sig]
    const def = defaultAction(sig)
    if (sig === SIGCONT) {
      this.continueGroup(target)
      for (const s of [SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU]) target.pending.delete(s)
    } else if (defaultAction(sig) === 'stop') target.pending.delete(SIGCONT)
    const blocked = (target.blocked & bit(sig)) !== 0n
    // An ignored signal is dropped at once, unless it is blocked (a handler may be installed before it is unblocked).
    if (
      sig !== SIGKILL &&
      !blocked &&
      (action.handler === SIG_IGN || (action.handler === SIG_DFL && (def === 'ign' || def === 'cont')))
    )
      return
    // A stopped task does not run again by itself: SIGKILL ends it now (others wait for SIGCONT).
    if (target.state === 'stopped' && sig === SIGKILL) {
      this.killTask(c, target, sig)
      return
    }
    target.pending.set(sig, info)
    this.recalcSigpending(target)
    if (target.state === 'sleeping' && this.signalInterrupts(target, target.sleepState)) this.noteWakeups(c)
    const cpu = this.cpuOf(target)
    if (cpu >= 0 && cpu !== c.id) this.machine.interrupt(cpu, TIMER_VECTOR)
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
    if (task.pendingKill !== 0) {
      // Another thread's exit_group or fatal signal: this one ends with the group's status.
      const sig = task.pendingKill
      task.pendingKill = 0
      const leader = this.tasks.get(task.tgid) ?? task
      this.guestTasks.setExitCode(task, sig > 0 ? sig : (leader.exitCode << 8) | leader.exitSignal)
      return true
    }
    const r = this.deliverSignals(c, task, frame)
    if (r > 0) {
      this.guestTasks.setExitCode(task, r)
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
   * when none ran (nothing deliverable, ignored, or a stop), or the signal
   * number when its default action kills.
   */
  private deliverSignals(c: Cpu, task: Task, frame: PtRegsFrame): number {
    for (const [queued, queuedInfo] of task.pending) {
      if ((task.blocked & bit(queued)) !== 0n) continue
      task.pending.delete(queued)
      // Tracers see it before its action is taken: they may change it, discard it, or decide the action.
      const verdict = this.tracehooks.reportSignal(task, frame, queuedInfo, task.sighand.actions[queued])
      if (verdict?.action === 'ignore') continue
      const info = verdict?.action === 'deliver' && verdict.info ? verdict.info : queuedInfo
      const sig = verdict?.action === 'deliver' && verdict.signo ? verdict.signo : queued
      if (verdict?.action === 'terminate' || verdict?.action === 'core') return sig
      if (verdict?.action === 'stop') {
        this.stopGroup(c, task, sig)
        return -1
      }
      const action = task.sighand.actions[sig]
      if (action.handler === SIG_IGN) continue
      if (action.handler === SIG_DFL) {
        const def = defaultAction(sig)
        if (def === 'ign' || def === 'cont') continue
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
      if (!rseqSignalDeliver(this, c, task, frame)) return SIGSEGV
      if (
        !setupRtFrame(task, frame, info, action, oldMask, info.trapno ?? 0, info.err ?? 0, info.addr ?? 0, c)
      )
        return SIGSEGV
      task.blocked = sanitizeMask(
        task.blocked | action.mask | ((action.flags & SA_NODEFER) === 0 ? bit(sig) : 0n),
      )
      if ((action.flags & SA_RESETHAND) !== 0) Object.assign(action, { handler: SIG_DFL, flags: 0 })
      return 0
    }
    return -1
  }

  /** Job control: a stop signal's default action stops every thread of the group; the parent hears SIGCHLD (CLD_STOPPED). */
  stopGroup(c: Cpu, task: Task, sig: number): void {
    for (const t of this.tasks.values()) {
      if (t.tgid !== task.tgid || t.state === 'zombie') continue
      const cpu = this.cpuOf(t)
      if (cpu >= 0 && cpu !== c.id) {
        t.pendingKill = 0
        this.machine.interrupt(cpu, TIMER_VECTOR)
      }
      t.stopSignal = sig
      this.tracehooks.reportJctl(t, 5, sig) // CLD_STOPPED
      // A sleeper stays asleep under the stop: SIGCONT puts it back to sleep, what it waits for unchanged.
      this.setTaskState(t, 'stopped')
    }
    const leader = this.tasks.get(task.tgid) ?? task
    leader.stopReported = false
    this.setNeedResched(c)
    const parent = leader.parent
    if (parent && (parent.sighand.actions[SIGCHLD].flags & 1) === 0) {
      this.sendSignal(c, parent, { signo: SIGCHLD, code: 5, pid: leader.pid }) // CLD_STOPPED
    }
  }

  /** SIGCONT: a stopped group runs again. */
  continueGroup(task: Task): void {
    let any = false
    for (const t of this.tasks.values()) {
      if (t.tgid === task.tgid && t.state === 'stopped') {
        this.tracehooks.reportJctl(t, 6, SIGCONT) // CLD_CONTINUED
        if (t.sleep && !t.sleepPending) this.setTaskState(t, 'sleeping')
        else {
          this.setTaskState(t, 'runnable')
          this.kickIdleCpu()
        }
        any = true
      }
    }
    if (any) (this.tasks.get(task.tgid) ?? task).continueReported = false
  }

  /**
   * A fatal signal: the whole thread group ends with it. A thread some CPU is
   * running dies on its way back to user mode (do_group_exit); one switched
   * out ends now.
   */
  killTask(c: Cpu, target: Task, sig: number): void {
    const leader = this.tasks.get(target.tgid) ?? target
    for (const t of [...this.tasks.values()]) {
      if (t.tgid !== leader.tgid || t.state === 'zombie') continue
      this.zap(c, t, sig, 0, sig)
    }
  }

  /** One thread of a dying group: marked if on a CPU (it dies at its exit to user mode), else ended now. */
  private zap(c: Cpu, t: Task, mark: number, code: number, signal: number): void {
    const cpu = this.cpuOf(t)
    if (cpu < 0) {
      this.exitTask(c, t, code, signal)
      return
    }
    t.pendingKill = mark
    this.recalcSigpending(t)
    if (cpu !== c.id) this.machine.interrupt(cpu, TIMER_VECTOR)
  }

  /** exit_group / a fatal signal: every thread of the group ends; the leader's status is the group's. */
  exitGroup(c: Cpu, task: Task, code: number, signal: number): void {
    const leader = this.tasks.get(task.tgid)
    if (leader && leader !== task) {
      leader.exitCode = code
      leader.exitSignal = signal
    }
    for (const t of [...this.tasks.values()])
      if (t.tgid === task.tgid && t !== task && t.state !== 'zombie')
        this.zap(c, t, signal || -1, code, signal)
    this.exitTask(c, task, code, signal)
  }

  /**
   * An exception the guest passes on. First chance: a user-mode fault (demand
   * paging, copy-on-write, else a signal, delivered on the way back to user
   * mode), or a kernel-mode #PF on a user address (page it in, or return 0 so
   * the exception table makes -EFAULT). Fatal: an oops the guest already
   * printed; in a task the guest then ends it (make_task_dead).
   */
  private exception(
    c: Cpu,
    regs: number,
    trapnr: number,
    errorCode: number,
    fatal: boolean,
    cr2: number,
  ): number {
    const task = this.current(c)
    const frame = this.frame(regs)
    const fromUser = (frame.get('cs') & 3) === 3
    if (fatal || (!fromUser && trapnr !== 14)) {
      this.printk.log(
        this.jiffies,
        `oops: trap ${trapnr} error 0x${errorCode.toString(16)} at ${this.kallsyms.format(frame.get('ip'))} in ${task.comm}`,
      )
      if (task.state === 'idle' || !fatal) {
        this.machine.stop(`kernel oops: trap ${trapnr} at ${this.kallsyms.format(frame.get('ip'))}`, true)
        return 0
      }
      return 1
    }
    if (trapnr === 14 && task.state !== 'idle') {
      if (task.mm.handleFault(cr2, (errorCode & 2) !== 0, (errorCode & 16) !== 0)) {
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
    // show_unhandled_signals: a fault that kills leaves its trace in dmesg, as on Linux.
    if (action.handler === SIG_DFL) {
      const hex = (v: number) => formatLinear(v, 0).slice(2)
      const what = trapnr === 14 ? `segfault at ${hex(cr2)}` : `trap ${trapnr}`
      this.printk.log(
        this.jiffies,
        `${task.comm}[${task.pid}]: ${what} ip ${hex(frame.get('ip'))} sp ${hex(frame.get('sp'))} error ${errorCode.toString(16)}`,
      )
    }
    // Synchronous signals go first (dequeue_synchronous_signal): ahead of anything already pending.
    const others = [...task.pending].filter(([s]) => s !== signal)
    task.pending.clear()
    task.pending.set(signal, info)
    for (const [s, i] of others) task.pending.set(s, i)
    this.recalcSigpending(task)
    return 1
  }

  // ------------------------------------------------------------------ die notifiers

  private readonly dieNotifiers: (DieNotifier | undefined)[] = []

  /**
   * register_die_notifier for host code (kprobes): links one of the guest's
   * host_notifier_blocks into die_chain by priority, so every exception walks
   * it in guest code (notifier_call_chain) before its default handling.
   */
  registerDieNotifier(fn: DieNotifier, priority = 0): number {
    const index = this.dieNotifiers.length
    if (index >= 16) throw new Error('no free host notifier block')
    this.dieNotifiers.push(fn)
    const blocks = this.symbol('host_notifier_blocks')
    const block = blocks + index * 24
    this.writeKernel(block + 16, le32(priority))
    // Insert by descending priority, as notifier_chain_register does.
    let link = this.symbol('die_chain')
    for (;;) {
      const next = this.readKernel64(link)
      if (next === 0 || readI32(this.readKernel(next + 16, 4)) < priority) {
        this.writeKernel(block + 8, le64(next))
        this.writeKernel(link, le64(block))
        return index
      }
      link = next + 8
    }
  }

  readKernel64(addr: number): number {
    const memory = this.machine.memory
    const phys = this.physOfKernel(addr)
    memory.check(phys, 8)
    return memory.view.getInt32(phys + 4, true) * 0x1_0000_0000 + memory.view.getUint32(phys, true)
  }

  /** A NUL-terminated string in kernel memory (a getname() buffer). */
  readKernelString(addr: number): string {
    const bytes: number[] = []
    for (let i = 0; i < 4096; i++) {
      const b = this.readKernel(addr + i, 1)[0]
      if (b === 0) break
      bytes.push(b)
    }
    return utf8Decode(Uint8Array.from(bytes))
  }

  /** Run a host service with a syscall context (faults on user memory become -EFAULT). */
  private withContext(c: Cpu, regs: number, fn: (ctx: SyscallContext) => number): number {
    this.serving = this.current(c)
    const ctx: SyscallContext = {
      kernel: this,
      cpu: c,
      task: this.serving,
      frame: this.frame(
        regs || this.readKernel64(this.cpuState[c.id].percpu + PERCPU_TOP_OF_STACK) - PT_REGS_SIZE,
      ),
      regs,
    }
    try {
      return fn(ctx)
    } catch (e) {
      if (e instanceof BadAddress) return -EFAULT
      if (e instanceof ElfError) return -ENOEXEC
      if (e instanceof RangeError) return -7 // E2BIG
      throw e
    }
  }

  private syscall(c: Cpu, regs: number): number {
    const frame = this.frame(regs)
    const nr = frame.get('orig_ax')
    const task = this.current(c)
    const fn = syscallTable.get(nr)
    if (!fn) {
      this.unimplemented.set(nr, (this.unimplemented.get(nr) ?? 0) + 1)
      if (this.unimplemented.get(nr) === 1)
        this.printk.log(
          this.jiffies,
          `unimplemented syscall ${nr} (${syscallName(nr)}) called by ${task.comm}`,
        )
      return -ENOSYS
    }
    const args = [
      frame.get('di'),
      frame.get('si'),
      frame.get('dx'),
      frame.get('r10'),
      frame.get('r8'),
      frame.get('r9'),
    ]
    let r: SyscallResult
    this.serving = task
    try {
      r = fn({ kernel: this, cpu: c, task, frame, regs }, ...args)
    } catch (e) {
      if (e instanceof BadAddress) return -EFAULT
      if (e instanceof ElfError) return -ENOEXEC
      throw e
    }
    if (typeof r === 'number') {
      if (task.restart?.nr === nr) task.restart = null
      return r
    }
    // The call must wait: the guest sleeps (sys_ni_host) and calls again once woken.
    return this.sleepOn(task, r)
  }

  private randomState = 0x9e3779b9
  /** The kernel's deterministic random stream (getrandom, AT_RANDOM-like uses): xorshift32 from a fixed seed. */
  randomBytes(n: number): Uint8Array {
    const out = new Uint8Array(n)
    let x = this.randomState
    for (let i = 0; i < n; i++) {
      x ^= x << 13
      x ^= x >>> 17
      x ^= x << 5
      out[i] = x & 0xff
    }
    this.randomState = x
    return out
  }

  allocPid(): number {
    return this.nextPid++
  }

  /** Give a task its struct task_struct and kernel stack; a new one first runs through ret_from_fork. */
  attachGuestTask(t: Task): void {
    this.guestTasks.attach(t)
    this.guestTasks.setupForkFrame(t)
    this.setTaskState(t, t.state)
    this.byGuestTask.set(t.guestTask, t)
  }

  /** Keep the guest copy of comm current (after execve). */
  updateGuestComm(t: Task): void {
    if (t.guestTask) this.guestTasks.updateComm(t)
  }

  newMm(): Mm {
    return new Mm(this.machine.memory, this.machine.frames, this.image.kernelSpace)
  }

  /** Ask this CPU to reschedule on its way out of the kernel. */
  requestReschedule(cpu: Cpu): void {
    this.setNeedResched(cpu)
  }

  /** Remove a zombie after wait4 collected it. */
  reap(t: Task): void {
    this.tracehooks.reportReap(t)
    this.tasks.delete(t.pid)
    // A thread is reaped as it exits, while its stack may still be in use: that one waits for put_task_stack.
    if (t.stackPhys < 0) this.byGuestTask.delete(t.guestTask)
    // Its CPU time (and its own children's) now counts as its parent's children's (RUSAGE_CHILDREN, tms_cutime).
    if (t.parent && t.isThreadGroupLeader) t.parent.cutime += t.utime + t.cutime
    if (t.parent) t.parent.children = t.parent.children.filter((c) => c !== t)
  }

  /** Wake up to n futex waiters on (mm, uaddr); returns how many woke. */
  futexWake(mm: Mm, uaddr: number, n: number): number {
    let woken = 0
    for (let i = 0; i < this.futexWaiters.length && woken < n; ) {
      const w = this.futexWaiters[i]
      if (w.mm === mm && w.uaddr === uaddr) {
        this.futexWaiters.splice(i, 1)
        if (w.task.restart?.nr === 202) w.task.restart.woken = true
        woken++
      } else i++
    }
    return woken
  }

  /** Read a file's bytes from the VFS (for exec). */
  readFile(path: string): Uint8Array | number {
    const node = this.vfs.lookup(path)
    if (typeof node === 'number') return node
    if (!(node instanceof RegularFile)) return -ENOENT
    return node.contents()
  }
}

/** A host die notifier: (val, regs, trapnr, cpu, err) -> NOTIFY_* (err: die_args.err, DR6 for DIE_DEBUG). */
export type DieNotifier = (val: number, regs: number, trapnr: number, cpu: Cpu, err: number) => number

/** The frame entered the kernel through syscall (orig_ax holds its number; exceptions store -1). */
function isSyscallFrame(frame: PtRegsFrame): boolean {
  return frame.get('orig_ax') >= 0
}

/** Point the frame back at the syscall instruction, to run the same call again. */
function restartSyscall(frame: PtRegsFrame): void {
  frame.set('ax', frame.get('orig_ax'))
  frame.set('ip', frame.get('ip') - 2)
}

function le32(v: number): Uint8Array {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setInt32(0, v | 0, true)
  return b
}
function le64(v: number): Uint8Array {
  const b = new Uint8Array(8)
  const d = new DataView(b.buffer)
  d.setInt32(0, v | 0, true)
  d.setInt32(4, Math.floor(v / 0x1_0000_0000) | 0, true)
  return b
}
function readI32(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset).getInt32(0, true)
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1).slice(0, 15)
}

export function exitStatus(t: Task): ExitStatus {
  return { status: t.exitSignal ? 128 + t.exitSignal : t.exitCode, code: t.exitCode, signal: t.exitSignal }
}

/** A pt_regs frame in guest physical memory. */
export class PtRegsFrame {
  // One DataView over all of guest memory (the machine's own): a frame is just an offset into it.
  private readonly view: DataView
  constructor(
    readonly bytes: Uint8Array,
    readonly phys: number,
    view?: DataView,
  ) {
    this.view = view ?? new DataView(bytes.buffer, bytes.byteOffset)
  }
  get(f: PtRegsField): number {
    const at = this.phys + PT_REGS[f]
    return this.view.getInt32(at + 4, true) * 0x1_0000_0000 + this.view.getUint32(at, true)
  }
  set(f: PtRegsField, v: number): void {
    const at = this.phys + PT_REGS[f]
    this.view.setInt32(at, v | 0, true)
    this.view.setInt32(at + 4, Math.floor(v / 0x1_0000_0000) | 0, true)
  }
  save(into: Uint8Array): void {
    into.set(this.bytes.subarray(this.phys, this.phys + PT_REGS_SIZE))
  }
  load(from: Uint8Array): void {
    this.bytes.set(from, this.phys)
  }
}
