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
  HC_CPU_ONLINE,
  HC_EXCEPTION,
  HC_EXECVE,
  HC_EXIT,
  HC_FILE_OPEN,
  HC_FILE_READ,
  HC_FILE_WRITE,
  HC_FORK,
  HC_NOTIFY_DIE,
  HC_PRINTK,
  HC_SCHEDULE,
  HC_SYSCALL,
  HC_TIMER_TICK,
  KERNEL_CS,
  KERNEL_SS,
  NOTIFY_DONE,
  PAGE_OFFSET,
  PERCPU_CPU_NUMBER,
  PERCPU_CURRENT_TASK,
  PERCPU_NEED_RESCHED,
  PERCPU_SELF,
  PERCPU_TOP_OF_STACK,
  PT_REGS,
  PT_REGS_SIZE,
  type PtRegsField,
} from './abi.js'
import { makeDevFd } from './dev-fd.js'
import { ElfError } from './elf.js'
import { EBADF, EFAULT, ENOENT, ENOEXEC, ENOSYS, EPIPE } from './errno.js'
import { loadExecutable } from './exec-loader.js'
import { FdTable, O_RDWR, OpenFile, type WouldBlock } from './files.js'
import { directMap, type GuestImage, loadGuestImage } from './guest-image.js'
import { copyProcess, readKernelCloneArgs } from './kernel-clone-args.js'
import { Mm } from './mm.js'
import { PageCache } from './page-cache.js'
import { Printk } from './printk.js'
import { execTask } from './process.js'
import { defaultRlimits } from './rlimits.js'
import { exitRobustList } from './robust-futex.js'
import { rseqHandleNotifyResume, rseqPreempt, rseqSignalDeliver } from './rseq.js'
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
} from './signals.js'
import {
  hostOpen,
  type SyscallContext,
  type SyscallResult,
  syscallName,
  syscallTable,
  wallSeconds,
} from './syscalls.js'
import { Task } from './task.js'
import { BadAddress, writeUserU32 } from './user-memory.js'
import { utf8Decode, utf8Encode } from './utf8.js'
import { CharDevice, RegularFile, Vfs } from './vfs.js'

export const TIMER_VECTOR = 32
const KSTACK_SIZE = 16 * 1024

export interface KernelOptions {
  /** The guest kernel image (guest/vmlinux). */
  image: Uint8Array
  cpus?: number
  memorySize?: number
  /** Guest cycles between timer interrupts (the tick; default 100 000). */
  tickCycles?: number
  quantum?: number
  stdout?: (data: Uint8Array) => void
  stderr?: (data: Uint8Array) => void
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
  stackTop: number
  online: boolean
  current: Task
  idle: Task
}

export class Kernel {
  readonly machine: Machine
  readonly image: GuestImage
  readonly vfs = new Vfs()
  readonly printk = new Printk()
  readonly tasks = new Map<number, Task>()
  /** Shared file pages (executables' text). */
  readonly pageCache: PageCache
  /** text_poke, stop_machine, synchronize_rcu, delayed work. */
  readonly services = new KernelServices(this)
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
  private readonly stdout: (d: Uint8Array) => void
  private readonly stderr: (d: Uint8Array) => void
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
    this.pageCache = new PageCache(this.machine.memory, this.machine.frames)
    this.stdout = options.stdout ?? (() => {})
    this.stderr = options.stderr ?? (() => {})
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
    const stackPhys = alloc(KSTACK_SIZE / 4096)
    const percpu = directMap(percpuPhys)
    const stackTop = directMap(stackPhys + KSTACK_SIZE)
    this.writePhys64(percpuPhys + PERCPU_SELF, percpu)
    this.writePhys64(percpuPhys + PERCPU_CPU_NUMBER, i)
    this.writePhys64(percpuPhys + PERCPU_TOP_OF_STACK, stackTop)
    const idle = new Task(0, 0, null, `swapper/${i}`, null as unknown as Mm, new FdTable())
    idle.cwd = this.vfs.root
    idle.state = 'idle'
    this.attachGuestTask(idle)
    idle.setReg('ip', this.symbol('cpu_idle'))
    idle.setReg('cs', KERNEL_CS)
    idle.setReg('ss', KERNEL_SS)
    idle.setReg('sp', stackTop)
    idle.setReg('flags', 0x2) // cpu_idle does sti itself
    return { percpu, stackTop, online: false, current: idle, idle }
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
      c.setLinear(4, st.stackTop)
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
        this.stdout(data)
        return data.length
      },
      () => this.options.consoleIsTty ?? false,
    )
    const err = new CharDevice(
      () => new Uint8Array(0),
      (data) => {
        this.stderr(data)
        return data.length
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
    this.tasks.set(pid, task)
    this.attachGuestTask(task)
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

  private setNeedResched(cpu: Cpu): void {
    this.writePhys64(this.physOfDirect(this.cpuState[cpu.id].percpu) + PERCPU_NEED_RESCHED, 1)
  }

  private pickNext(cpu: Cpu, prev: Task): Task {
    // Wake parked tasks whose condition now holds.
    for (const t of this.tasks.values()) {
      if (t.state === 'parked' && t.waitCondition?.()) {
        t.state = 'runnable'
        t.waitCondition = null
      }
    }
    let best: Task | null = null
    for (const t of this.tasks.values()) {
      if (t.state !== 'runnable') continue
      if (!best || t.lastRan < best.lastRan || (t.lastRan === best.lastRan && t.pid < best.pid)) best = t
    }
    if (best) return best
    if (prev.state === 'running') return prev
    return this.cpuState[cpu.id].idle
  }

  /** Switch this CPU's entry frame from the current task to next. */
  private switchTo(cpu: Cpu, regs: number, next: Task): void {
    const st = this.cpuState[cpu.id]
    const prev = st.current
    if (next === prev) {
      if (prev.state !== 'idle') prev.state = 'running'
      return
    }
    const frame = this.frame(regs)
    frame.save(prev.regs)
    if (prev.state !== 'idle') {
      // The FPU/SSE context goes with the task (switch_fpu_prepare / switch_fpu_finish).
      prev.xmm.set(cpu.xmm)
      prev.mxcsr = cpu.mxcsr
      restoreX87State(prev.x87, x87State(cpu))
      prev.fsBase = cpu.fsBase
      prev.gsBase = cpu.kernelGsBase
      prev.lastRan = cpu.instructions
      rseqPreempt(prev)
      prev.utime += this.machine.cycles(cpu.id) - prev.runStart
      if (prev.state === 'running') prev.state = 'runnable'
      prev.cpu = -1
    }
    frame.load(next.regs)
    if (next.state !== 'idle') {
      next.state = 'running'
      next.cpu = cpu.id
      next.runStart = this.machine.cycles(cpu.id)
      cpu.xmm.set(next.xmm)
      cpu.mxcsr = next.mxcsr
      restoreX87State(x87State(cpu), next.x87)
      cpu.fsBase = next.fsBase
      cpu.kernelGsBase = next.gsBase
      cpu.setCr3(next.mm.space.root)
    }
    st.current = next
    this.writePhys64(this.physOfDirect(st.percpu) + PERCPU_CURRENT_TASK, next.guestTask)
  }

  private schedule(cpu: Cpu, regs: number): void {
    this.scheduleOnly(cpu, regs)
    const next = this.current(cpu)
    if (next.state === 'running') {
      rseqHandleNotifyResume(this, cpu, next, this.frame(regs))
      this.deliverSignals(cpu, next, this.frame(regs))
    }
  }

  private scheduleOnly(cpu: Cpu, regs: number): void {
    this.writePhys64(this.physOfDirect(this.cpuState[cpu.id].percpu) + PERCPU_NEED_RESCHED, 0)
    const prev = this.current(cpu)
    if (prev.pendingKill !== 0 && prev.state === 'running') {
      const sig = prev.pendingKill
      prev.pendingKill = 0
      this.exitTask(cpu, prev, 0, Math.max(sig, 0))
    }
    this.switchTo(cpu, regs, this.pickNext(cpu, prev))
  }

  // ------------------------------------------------------------------ hypercalls

  private registerHypercalls(): void {
    const m = this.machine
    const arg = (c: Cpu, n: number) => c.getLinear([7, 6, 2, 10, 8, 9][n])
    const ret = (c: Cpu, v: number) => c.setLinear(0, v)
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
      // Never switch here: the tick may have interrupted kernel code. Ask for a reschedule instead;
      // the guest schedules on its way back to user mode, or from the idle loop.
      const cur = this.current(c)
      if (cur.pendingKill !== 0 || this.hasRunnable() || (cur.state === 'idle' && this.hasRunnable()))
        this.setNeedResched(c)
      ret(c, 0)
    })
    m.registerHypercall(HC_SCHEDULE, (c) => {
      const before = this.current(c)
      this.schedule(c, arg(c, 0))
      const after = this.current(c)
      ret(c, after === before ? 0 : after.guestTask)
    })
    m.registerHypercall(HC_SYSCALL, (c) => {
      const regs = arg(c, 0)
      const r = this.syscall(c, regs)
      const frame = this.frame(regs)
      frame.set('ax', r)
      const task = this.current(c)
      if (task.state === 'running') this.deliverSignals(c, task, frame)
      // The guest stores the result in regs->ax: give it what the frame now holds.
      ret(c, frame.get('ax'))
    })
    m.registerHypercall(HC_FILE_WRITE, (c) => {
      const task = this.current(c)
      const f = task.files.get(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = this.fileWrite(c, task, f, this.readKernel(arg(c, 1), arg(c, 2)))
      ret(c, typeof r === 'number' ? r : this.park(c, task, r.ready))
    })
    m.registerHypercall(HC_FILE_READ, (c) => {
      const task = this.current(c)
      const f = task.files.get(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = f.read(arg(c, 2))
      if (typeof r === 'number') return ret(c, r)
      if (r instanceof Uint8Array) {
        this.writeKernel(arg(c, 1), r)
        return ret(c, r.length)
      }
      ret(c, this.park(c, task, r.ready))
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
      ret(
        c,
        this.withContext(c, arg(c, 1), (ctx) => execTask(ctx, path)),
      )
    })
    m.registerHypercall(HC_EXIT, (c) => {
      const task = this.current(c)
      const regs = arg(c, 1)
      const code = (arg(c, 0) >> 8) & 0xff // do_exit's code is a wait status
      if (this.frame(regs).get('orig_ax') === 231) this.exitGroup(c, task, code, 0)
      else this.exitTask(c, task, code, 0)
      // do_exit leaves through the frame: it must already describe what runs next.
      this.schedule(c, regs)
      ret(c, this.current(c).guestTask)
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
    for (const t of this.tasks.values())
      if (t.state === 'runnable' || (t.state === 'parked' && t.waitCondition?.())) return true
    return false
  }

  /** A task ends: it becomes a zombie (a thread is simply removed), and the CPU reschedules on its way out. */
  exitTask(c: Cpu, task: Task, code: number, signal: number): void {
    if (task.state === 'zombie') return
    // mm_release: robust futexes first, then the CLONE_CHILD_CLEARTID word.
    exitRobustList(this, task)
    if (task.clearChildTid) {
      try {
        writeUserU32(task.mm, task.clearChildTid, 0)
      } catch {}
      this.futexWake(task.mm, task.clearChildTid, 1)
    }
    task.state = 'zombie'
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
    if (!task.isThreadGroupLeader) this.reap(task)
    else if (task.parent && task.parent.state !== 'zombie') {
      const parent = task.parent
      const act = parent.sighand.actions[SIGCHLD]
      // A parent ignoring SIGCHLD (or with SA_NOCLDWAIT) leaves no zombie to wait for.
      if (act.handler === SIG_IGN || (act.flags & 2) !== 0) this.reap(task)
      this.sendSignal(c, parent, { signo: SIGCHLD, code: signal ? 2 : 1, pid: task.pid }) // CLD_KILLED / CLD_EXITED
    }
    if (task.cpu === c.id || this.current(c) === task) this.setNeedResched(c)
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

  /** Queue a signal for a task (kill, tgkill, faults). Ignored ones are dropped; a parked task is woken. */
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
    if (
      sig === SIGKILL ||
      (action.handler === SIG_DFL && (def === 'term' || def === 'core') && (target.blocked & bit(sig)) === 0n)
    ) {
      // A fatal signal ends the current task now; another task, as on Linux, when it next runs
      // (complete_signal wakes it, get_signal ends it): until then it is no zombie for wait4.
      // A stopped task does not run again by itself: SIGKILL ends it now (others wait for SIGCONT).
      if (target === this.current(c) || (target.state === 'stopped' && sig === SIGKILL)) {
        this.killTask(c, target, sig)
        return
      }
    }
    target.pending.set(sig, info)
    if (target.state === 'parked' && (target.blocked & bit(sig)) === 0n) {
      target.state = 'runnable'
      target.waitCondition = null
      target.interrupted = true
    }
    if (target.state === 'running' && target.cpu !== c.id) this.machine.interrupt(target.cpu, TIMER_VECTOR)
  }

  /** On the way back to user mode: run the first deliverable signal's handler (or its default action). */
  deliverSignals(c: Cpu, task: Task, frame: PtRegsFrame): void {
    if (
      task.pending.size === 0 ||
      task.state === 'zombie' ||
      task.state === 'idle' ||
      (frame.get('cs') & 3) !== 3
    )
      return
    for (const [sig, info] of task.pending) {
      if ((task.blocked & bit(sig)) !== 0n) continue
      task.pending.delete(sig)
      const action = task.sighand.actions[sig]
      if (action.handler === SIG_IGN) continue
      if (action.handler === SIG_DFL) {
        const def = defaultAction(sig)
        if (def === 'ign' || def === 'cont') continue
        if (def === 'stop') {
          this.stopGroup(c, task, sig)
          return
        }
        this.killTask(c, task, sig)
        return
      }
      // A syscall cut short by the signal: restart it after the handler (SA_RESTART) or fail it with EINTR.
      if (task.interrupted) {
        task.interrupted = false
        task.restart = null
        // pause and sigsuspend always fail with EINTR (ERESTARTNOHAND); others restart under SA_RESTART.
        const nr = frame.get('orig_ax')
        if ((action.flags & SA_RESTART) === 0 || nr === 34 || nr === 130) {
          frame.set('ip', frame.get('ip') + 2)
          frame.set('ax', -4)
        }
      }
      // sigsuspend's temporary mask: the handler's frame saves the mask from before the call.
      const oldMask = task.savedSigmask ?? task.blocked
      task.savedSigmask = null
      if (!rseqSignalDeliver(this, c, task, frame)) return
      if (
        !setupRtFrame(task, frame, info, action, oldMask, info.trapno ?? 0, info.err ?? 0, info.addr ?? 0, c)
      ) {
        this.killTask(c, task, SIGSEGV)
        return
      }
      task.blocked = sanitizeMask(
        task.blocked | action.mask | ((action.flags & SA_NODEFER) === 0 ? bit(sig) : 0n),
      )
      if ((action.flags & SA_RESETHAND) !== 0) Object.assign(action, { handler: SIG_DFL, flags: 0 })
      return
    }
  }

  /** Job control: a stop signal's default action stops every thread of the group; the parent hears SIGCHLD (CLD_STOPPED). */
  stopGroup(c: Cpu, task: Task, sig: number): void {
    for (const t of this.tasks.values()) {
      if (t.tgid !== task.tgid || t.state === 'zombie') continue
      if (t.state === 'running' && t.cpu !== c.id) {
        t.pendingKill = 0
        this.machine.interrupt(t.cpu, TIMER_VECTOR)
      }
      t.stopSignal = sig
      t.state = 'stopped'
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
        t.state = t.waitCondition ? 'parked' : 'runnable'
        any = true
      }
    }
    if (any) (this.tasks.get(task.tgid) ?? task).continueReported = false
  }

  /** A fatal signal (default action): the whole thread group ends with it. */
  killTask(c: Cpu, target: Task, sig: number): void {
    const leader = this.tasks.get(target.tgid) ?? target
    for (const t of [...this.tasks.values()]) {
      if (t.tgid !== leader.tgid || t.state === 'zombie') continue
      if (t.state === 'running' && t.cpu !== c.id) {
        t.pendingKill = sig
        this.machine.interrupt(t.cpu, TIMER_VECTOR)
      } else this.exitTask(c, t, 0, sig)
    }
  }

  /** exit_group / a fatal signal: every thread of the group ends; the leader's status is the group's. */
  exitGroup(c: Cpu, task: Task, code: number, signal: number): void {
    for (const t of [...this.tasks.values()]) {
      if (t.tgid === task.tgid && t !== task && t.state !== 'zombie') {
        if (t.state === 'running' && t.cpu !== c.id) {
          t.pendingKill = signal || -1
          this.machine.interrupt(t.cpu, TIMER_VECTOR)
        } else this.exitTask(c, t, code, signal)
      }
    }
    const leader = this.tasks.get(task.tgid)
    this.exitTask(c, task, code, signal)
    if (leader && leader !== task) {
      leader.exitCode = code
      leader.exitSignal = signal
    }
  }

  /**
   * An exception the guest passes on. First chance: a user-mode fault (demand
   * paging, copy-on-write, else a signal), or a kernel-mode #PF on a user
   * address (page it in, or return 0 so the exception table makes -EFAULT).
   * Fatal: an oops the guest already printed.
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
      if (task.state === 'idle') {
        this.machine.stop(`kernel oops: trap ${trapnr} at ${this.kallsyms.format(frame.get('ip'))}`, true)
        return 0
      }
      // Like make_task_dead(): the task dies and the CPU goes on with something else.
      this.killTask(c, task, SIGSEGV)
      this.schedule(c, regs)
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
    // A fault's signal cannot wait: blocked or ignored, it kills (force_sig_fault).
    const action = task.sighand.actions[signal]
    if ((task.blocked & bit(signal)) !== 0n || action.handler === SIG_IGN) action.handler = SIG_DFL
    // show_unhandled_signals: a fault that kills leaves its trace in dmesg, as on Linux.
    if (action.handler === SIG_DFL) {
      const hex = (v: number) => formatLinear(v, 0).slice(2)
      const what = trapnr === 14 ? `segfault at ${hex(cr2)}` : `trap ${trapnr}`
      this.printk.log(
        this.jiffies,
        `${task.comm}[${task.pid}]: ${what} ip ${hex(frame.get('ip'))} sp ${hex(frame.get('sp'))} error ${errorCode.toString(16)}`,
      )
    }
    task.pending.set(signal, info)
    this.deliverSignals(c, task, frame)
    if (task.state === 'zombie') this.schedule(c, regs)
    return 1
  }

  /** A call that must wait: park the task; the guest restarts the syscall (-ERESTARTNOINTR). */
  private park(c: Cpu, task: Task, ready: () => boolean): number {
    task.state = 'parked'
    task.waitCondition = ready
    this.setNeedResched(c)
    return -ERESTARTNOINTR
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
      frame: this.frame(regs || this.cpuState[c.id].stackTop - PT_REGS_SIZE),
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
    // The call must wait: restart it when ready, on whichever CPU runs the task next.
    task.state = 'parked'
    task.waitCondition = r.ready
    frame.set('ip', frame.get('ip') - 2)
    frame.set('ax', nr)
    this.setNeedResched(c)
    return nr
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

  private slab = { frame: -1, used: 4096 }
  /**
   * Give a task its guest struct task_struct (opaque to the guest code, which
   * only passes the pointer to __switch_to): pid at +0, tgid at +4, comm at
   * +16 (TASK_COMM_LEN 16), so probe handlers and fetchargs can read them.
   */
  attachGuestTask(t: Task): void {
    const SIZE = 256
    if (this.slab.used + SIZE > 4096) this.slab = { frame: this.machine.frames.alloc(), used: 0 }
    const phys = this.slab.frame * 4096 + this.slab.used
    this.slab.used += SIZE
    this.machine.memory.write32(phys, t.pid)
    this.machine.memory.write32(phys + 4, t.tgid)
    this.machine.memory.writeBytes(phys + 16, utf8Encode(t.comm.slice(0, 15)))
    t.guestTask = directMap(phys)
  }

  /** Keep the guest copy of comm current (after execve). */
  updateGuestComm(t: Task): void {
    if (!t.guestTask) return
    const phys = t.guestTask - PAGE_OFFSET
    this.machine.memory.fill(phys + 16, 16, 0)
    this.machine.memory.writeBytes(phys + 16, utf8Encode(t.comm.slice(0, 15)))
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
    this.tasks.delete(t.pid)
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

const ERESTARTNOINTR = 513

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
