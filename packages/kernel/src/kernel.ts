// The kernel: boots the guest image on every vCPU, runs processes, and
// provides the host services the guest kernel's leaf functions reach
// through vmcall. This file is boot, the devices, the first process and
// the wiring; each subsystem's host half lives in its own folder and
// registers its own hypercalls, as the guest's C tree mirrors Linux's:
//
//   sched/core.ts      pick_next_task, __switch_to, try_to_wake_up, the tick
//   sched/wait.ts      prepare_to_wait / finish_wait: tasks sleep in the guest
//   signal/delivery.ts send_signal, get_signal, job control
//   process/exit.ts    do_exit, exit_notify, release_task
//   process/copy-process.ts, exec/execve.ts   fork and exec's host halves
//   entry/common.ts    the syscall path (and syscalls.ts, its table)
//   arch/traps.ts      exceptions and die notifiers; mm/fault.ts handle_mm_fault
//   mm/oom-kill.ts     select_bad_process: whom the guest's OOM killer kills
//   fs/file-io.ts      fdget/fput and the reads, writes, opens of the VFS
//   trace/tracehook.ts where tracers hear of a task's life

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
} from '@probekit/x86-emu'
import {
  HC_CPU_ONLINE,
  HC_PRINTK,
  KERNEL_CS,
  KERNEL_SS,
  PAGE_OFFSET,
  PERCPU_TOP_OF_STACK,
  PT_REGS,
  PT_REGS_SIZE,
  type PtRegsField,
  TIMER_VECTOR,
} from './abi.js'
import { hcArg as arg, hcRet as ret } from './arch/hypercall.js'
import { Traps } from './arch/traps.js'
import { SyscallEntry } from './entry/common.js'
import { ENOENT, ENOSPC, ENOTDIR } from './errno.js'
import { errnoMessage } from './errno-names.js'
import { openExec, resolveBinary } from './exec/binfmt.js'
import { ExecError, loadExecutable } from './exec/exec-loader.js'
import { registerExecve } from './exec/execve.js'
import { makeDevFd } from './fs/dev-fd.js'
import { FileIo } from './fs/file-io.js'
import { FdTable, O_RDWR, OpenFile, type WouldBlock } from './fs/files.js'
import { GuestFiles } from './fs/guest-file.js'
import { saveExecLayout } from './fs/proc/exec-layout.js'
import { mountProc } from './fs/proc/root.js'
import { CharDevice, Directory, RegularFile, Vfs } from './fs/vfs.js'
import { type GuestImage, loadGuestImage } from './guest-image.js'
import { registerHandleMmFault } from './mm/fault.js'
import { Mm, PROT_EXEC, type Vma } from './mm/mm.js'
import { registerOomKill } from './mm/oom-kill.js'
import { PageCache } from './mm/page-cache.js'
import { Printk } from './printk.js'
import { registerCopyProcess } from './process/copy-process.js'
import { type ExitStatus, exitStatus, TaskExit } from './process/exit.js'
import { Futexes } from './process/futex.js'
import { Pids } from './process/pid.js'
import { defaultRlimits } from './process/rlimits.js'
import { Scheduler } from './sched/core.js'
import { GuestTasks } from './sched/guest-task.js'
import { Task } from './sched/task.js'
import { Wait } from './sched/wait.js'
import { KernelServices } from './services.js'
import { SignalDelivery } from './signal/delivery.js'
import { Sysctls } from './sysctl.js'
import { Tracehooks } from './trace/tracehook.js'
import { utf8Decode, utf8Encode } from './utf8.js'

export type { DieNotifier } from './arch/traps.js'
export { type ExitStatus, exitStatus } from './process/exit.js'
export { TIMER_VECTOR }

export interface KernelOptions {
  /** The guest kernel image (guest/vmlinux). */
  image: Uint8Array
  cpus?: number
  memorySize?: number
  /** tmpfs's size= for the in-memory file system, in bytes (default: half of memorySize, as tmpfs). */
  tmpfsSize?: number
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
  /**
   * Bytes for stdin (EOF after them), or a function called for each read (an empty result is EOF;
   * a WouldBlock makes the reader sleep until it is ready or a signal ends the sleep, as a tty read does).
   */
  stdin?: Uint8Array | ((max: number) => Uint8Array | WouldBlock)
  /**
   * Called on every timer tick of CPU 0, inside the guest's timer interrupt: a point fixed by guest
   * time, where the host may act on what happened outside it (a Ctrl-C: ttyIsig) without making the
   * run depend on when the host looked.
   */
  hostTick?: () => void
}

/**
 * The kernel: boots the guest image on every vCPU, runs processes, and
 * provides the host services the guest kernel's leaf functions reach through
 * vmcall. Construct it with a {@link KernelOptions}, then spawn and run programs.
 */
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
  /** Every task's struct task_struct and kernel stack in guest memory. */
  readonly guestTasks: GuestTasks
  /** Every open file's struct file in guest memory. */
  readonly guestFiles: GuestFiles
  /** Called when a dead task's kernel stack is freed (kprobe_flush_task's moment: its kretprobe instances go). */
  readonly taskDeadHooks: ((t: Task) => void)[] = []
  /** The run queues, context switches and wake-ups. */
  readonly sched: Scheduler
  /** Tasks sleeping in the guest on what a host leaf waits for. */
  readonly wait: Wait
  readonly signals: SignalDelivery
  readonly exit: TaskExit
  readonly futex = new Futexes()
  /** Exceptions and the die notifier chain. */
  readonly traps: Traps
  /** The syscall path's host half. */
  readonly entry: SyscallEntry
  readonly fileIo: FileIo
  /** Where the kernel reports each task's life to the tracers attached to it (utrace). */
  readonly tracehooks: Tracehooks
  /** Named settings (/proc/sys, sysctl NAME=VALUE). */
  readonly sysctls = new Sysctls()
  /**
   * Host code running where the kernel cannot sleep (preempt_count: kprobe handlers raise it). A call
   * that may sleep (register_uprobe's quiesce) refuses to run while it is non-zero: in_atomic().
   */
  preemptCount = 0
  /** Called for each file mapping made with PROT_EXEC (mmap, and each text segment exec maps): uprobe_mmap's hook. */
  readonly mmapHooks: ((task: Task, vma: Vma) => void)[] = []
  jiffies = 0
  /** Pid allocation, pid_max and threads-max. */
  readonly pids: Pids
  private booting = false
  /** The first process (pid 1): orphans' new parent; its exit ends the run. */
  init: Task | null = null
  /** Instructions met that the emulator does not implement (#UD for the guest), by description. */
  readonly unimplementedInstructions = new Map<string, number>()
  /** Syscall numbers met that the kernel does not implement (reported by name). */
  readonly unimplemented = new Map<number, number>()
  private readonly stdout: (d: Uint8Array) => unknown
  private readonly stderr: (d: Uint8Array) => unknown
  private stdinData: Uint8Array | ((max: number) => Uint8Array | WouldBlock)
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
    this.pids = new Pids(this.machine.memory.size)
    this.pids.registerSysctls(this.sysctls)
    this.guestTasks = new GuestTasks(this.machine, this.symbol('ret_from_fork'))
    this.guestFiles = new GuestFiles(this.machine)
    this.pageCache = new PageCache(this.machine.memory, this.machine.frames)
    // tmpfs: sized by RAM; an unlinked file's pages stay while a process maps it, and leave the page cache after.
    const shmem = this.vfs.shmem
    shmem.setSize(options.tmpfsSize ?? this.machine.memory.size / 2)
    shmem.maxRead = this.machine.memory.size
    shmem.mapped = (file) => [...this.tasks.values()].some((t) => t.mm.vmas.some((v) => v.file === file))
    shmem.evictHooks.push((file) => this.pageCache.forget(file as RegularFile))
    this.stdout = options.stdout ?? (() => undefined)
    this.stderr = options.stderr ?? (() => undefined)
    this.stdinData = options.stdin ?? new Uint8Array(0)
    // Each subsystem registers the hypercalls of its leaves.
    this.sched = new Scheduler(this)
    this.wait = new Wait(this)
    this.signals = new SignalDelivery(this)
    this.exit = new TaskExit(this)
    this.traps = new Traps(this)
    this.entry = new SyscallEntry(this)
    this.fileIo = new FileIo(this)
    const sched = this.sched
    this.tracehooks = new Tracehooks({
      setSyscallTrace: (t, on) => sched.setSyscallTrace(t, on),
      notifyResume: (t) => sched.notifyResume(t),
      signalWakeUp: (t) => sched.signalWakeUp(t),
      hold: (t) => sched.hold(t),
      release: (t) => sched.release(t),
      setUserSingleStep: (t, on) => sched.setUserSingleStep(t, on),
      pushBackSignal: (t, info) => this.signals.pushBackSignal(t, info),
    })
    registerCopyProcess(this)
    registerExecve(this)
    registerHandleMmFault(this)
    registerOomKill(this)
    this.machine.registerHypercall(HC_CPU_ONLINE, (c) => {
      this.sched.rq[c.id].online = true
      ret(c, 0)
      if (this.booting && this.sched.rq.every((s) => s.online)) this.machine.stop('all CPUs online')
    })
    this.machine.registerHypercall(HC_PRINTK, (c) => {
      this.printk.log(this.jiffies, utf8Decode(this.readKernel(arg(c, 0), arg(c, 1))))
      ret(c, 0)
    })
    this.setupDevices()
    // Instructions the emulator does not implement reach the guest as #UD (SIGILL); say which.
    this.machine.trapHandler = (cpu, ev) => {
      if (ev.vector === 6 && ev.unimplemented) {
        const n = (this.unimplementedInstructions.get(ev.detail) ?? 0) + 1
        this.unimplementedInstructions.set(ev.detail, n)
        if (n === 1) this.printk.log(this.jiffies, `cpu ${cpu.id}: ${ev.detail}`)
      }
      return 'deliver'
    }
    for (let i = 0; i < cpus; i++) this.sched.initCpu(i)
  }

  get kallsyms() {
    return this.image.kallsyms
  }

  // ------------------------------------------------------------------ boot

  symbol(name: string): number {
    const a = this.image.kallsyms.lookupName(name)
    if (a === undefined) throw new Error(`guest kernel has no symbol ${name}`)
    return a
  }

  /** Start every vCPU at startup_64 and run until each reports HC_CPU_ONLINE. */
  boot(): void {
    const entry = this.symbol('startup_64')
    this.machine.cpus.forEach((c, i) => {
      const st = this.sched.rq[i]
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
    if (!this.sched.rq.every((s) => s.online)) {
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
    // /dev/zero and /dev/full read zeros (a write to full is ENOSPC); /dev/random and /dev/urandom read
    // the kernel's seeded stream, so runs stay deterministic; /dev/tty is the console when it is a terminal.
    const zeros = (count: number) => new Uint8Array(Math.min(count, 1 << 20))
    dev.children.set('zero', new CharDevice(zeros, (d) => d.length))
    dev.children.set('full', new CharDevice(zeros, () => -ENOSPC))
    for (const name of ['random', 'urandom'])
      dev.children.set(
        name,
        new CharDevice(
          (count) => this.randomBytes(Math.min(count, 1 << 20)),
          (d) => d.length,
        ),
      )
    if (this.options.consoleIsTty) dev.children.set('tty', console)
    makeDevFd(dev, () => this.entry.serving?.files)
    mountProc(this)
    this.vfs.mkdirp('/tmp')
    // The user and group databases a fresh Debian system starts with (root only, and nogroup/nobody):
    // programs look their names up (tar headers, ls -l, id, whoami). Files, so a program may replace them;
    // a host tree laid under /etc (probekit run's) brings the host's own instead.
    this.vfs.writeDefaultFile(
      '/etc/passwd',
      utf8Encode(
        'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
      ),
    )
    this.vfs.writeDefaultFile('/etc/group', utf8Encode('root:x:0:\nnogroup:x:65534:\n'))
  }

  /**
   * Make a process from an executable in the file system (a static or
   * dynamically linked ELF, or a #! script), as init's execve would; it
   * becomes init (pid 1) if it is the first. cwd: its working directory
   * (default /). Throws ExecError (with the errno execve would return) or
   * ElfError when it cannot run.
   */
  spawn(
    path: string,
    argv: readonly string[],
    envp: readonly string[] = [],
    options: { cwd?: string } = {},
  ): Task {
    const cwd = this.vfs.lookup(options.cwd ?? '/')
    if (!(cwd instanceof Directory)) throw new ExecError(ENOTDIR, `${options.cwd}: not a directory`)
    const bin = resolveBinary(this.vfs, path, argv, cwd)
    if (typeof bin === 'number') throw new ExecError(-bin, `${path}: ${errnoMessage(-bin)}`)
    const mm = this.newMm()
    const files = new FdTable()
    const consoleIn = this.vfs.lookup('/dev/console')
    const consoleErr = this.vfs.lookup('/dev/stderr-console')
    if (typeof consoleIn === 'number' || typeof consoleErr === 'number') throw new Error('no console')
    files.install(new OpenFile(consoleIn, O_RDWR, '/dev/console'))
    files.install(new OpenFile(consoleIn, O_RDWR, '/dev/console'))
    files.install(new OpenFile(consoleErr, O_RDWR, '/dev/stderr-console'))
    let prog: ReturnType<typeof loadExecutable>
    try {
      prog = loadExecutable(mm, bin, { filename: path, argv: bin.argv, envp }, this.machine.cpus[0], (p) =>
        openExec(this.vfs, p, cwd),
      )
    } catch (e) {
      mm.release()
      throw e
    }
    const pid = this.allocPid()
    if (pid < 0) {
      mm.release()
      throw new ExecError(-pid, `${path}: ${errnoMessage(pid)}`)
    }
    const task = new Task(pid, pid, null, basename(path), mm, files)
    this.attachGuestTask(task)
    task.cwd = cwd
    task.pgid = pid // the first process leads its own session and process group, like init
    task.sid = pid
    task.rlimits = defaultRlimits(this.machine.memory.size)
    if (bin.file) saveExecLayout(this.vfs, cwd, bin.path, bin.file, mm, prog.sp)
    task.setReg('ip', prog.entry)
    task.setReg('sp', prog.sp)
    task.setReg('cs', 0x33)
    task.setReg('ss', 0x2b)
    task.setReg('flags', 0x202)
    task.setReg('orig_ax', -1) // it returns to user mode through ret_from_fork from no syscall
    this.tasks.set(pid, task)
    if (!this.init) this.init = task
    for (const vma of [...mm.vmas]) this.notifyMmap(task, vma)
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

  /** current: the task on this CPU. */
  /** in_atomic(): is the host running code that must not sleep (a kprobe handler)? */
  in_atomic(): boolean {
    return this.preemptCount > 0
  }

  /** uprobe_mmap: tell the hooks of an executable file mapping just made in task's mm. */
  notifyMmap(task: Task, vma: Vma): void {
    if (vma.file && (vma.prot & PROT_EXEC) !== 0) for (const hook of this.mmapHooks) hook(task, vma)
  }

  current(cpu: Cpu): Task {
    return this.sched.rq[cpu.id].current
  }

  readKernel64(addr: number): number {
    const memory = this.machine.memory
    const phys = this.physOfKernel(addr)
    memory.check(phys, 8)
    return memory.view.getInt32(phys + 4, true) * 0x1_0000_0000 + memory.view.getUint32(phys, true)
  }

  readKernel32(addr: number): number {
    const phys = this.physOfKernel(addr)
    this.machine.memory.check(phys, 4)
    return this.machine.memory.view.getInt32(phys, true)
  }

  writeKernel32(addr: number, v: number): void {
    const b = new Uint8Array(4)
    new DataView(b.buffer).setInt32(0, v | 0, true)
    this.writeKernel(addr, b)
  }

  writeKernel64(addr: number, v: number): void {
    this.writePhys64(this.physOfKernel(addr), v)
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

  // ------------------------------------------------------------------ tasks

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

  /** A new task's pid, or -EAGAIN (none free below pid_max). */
  allocPid(): number {
    return this.pids.alloc(this.tasks)
  }

  /** Give a task its struct task_struct and kernel stack; a new one first runs through ret_from_fork. */
  attachGuestTask(t: Task): void {
    this.guestTasks.attach(t)
    this.guestTasks.setupForkFrame(t)
    this.sched.setTaskState(t, t.state)
  }

  /** Keep the guest copy of comm current (after execve). */
  updateGuestComm(t: Task): void {
    if (t.guestTask) this.guestTasks.updateComm(t)
  }

  /** A fresh address space whose file mappings come from the page cache. */
  newMm(): Mm {
    const mm = new Mm(this.machine.memory, this.machine.frames, this.image.kernelSpace)
    mm.pageCache = this.pageCache
    mm.tlbShootdown = (va) => this.machine.flushTlb(va)
    return mm
  }

  /** Read a file's bytes from the VFS (for exec). */
  readFile(path: string): Uint8Array | number {
    const node = this.vfs.lookup(path)
    if (typeof node === 'number') return node
    if (!(node instanceof RegularFile)) return -ENOENT
    return node.contents()
  }
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1).slice(0, 15)
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
