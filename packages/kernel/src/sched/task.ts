// Tasks (task_struct): a thread of a process. Each has a kernel stack in
// guest memory with its pt_regs (the user context it last entered the
// kernel with) at the top; a task off-CPU waits inside schedule() on that
// stack. The host keeps what Linux keeps in the rest of task_struct.

import { newX87State, type X87State } from '@probekit/x86-emu'
import { PT_REGS, PT_REGS_SIZE, type PtRegsField } from '../abi.js'
import type { FdTable } from '../fs/files.js'
import { FsStruct } from '../fs/fs-struct.js'
import type { Directory } from '../fs/vfs.js'
import type { Mm } from '../mm/mm.js'
import { type Capabilities, rootCapabilities } from '../process/capability.js'
import { defaultRlimits, type Rlimits } from '../process/rlimits.js'
import { type SigInfo, SignalHandlers } from '../signal/signals.js'
import type { RseqRegistration } from './rseq.js'

export type TaskState = 'new' | 'runnable' | 'running' | 'sleeping' | 'stopped' | 'traced' | 'zombie' | 'idle'

/** What a sleeping task waits for: the host leaf that said -EWOULDSLEEP set it. */
export interface SleepCondition {
  /** True once the task can go on (it then calls the leaf again). */
  ready: () => boolean
  /** The restart code a signal ends the sleep with (ERESTARTSYS unless the call says otherwise). */
  restartCode: number
  /** Undo what the leaf queued (a futex waiter) when a signal ends the sleep. */
  cancel?: () => void
}

/**
 * A task (task_struct): a thread of a process, with its kernel stack and
 * pt_regs in guest memory; the host keeps the rest of task_struct here.
 */
export class Task {
  /** Its pt_regs: the top of its kernel stack (a view into guest memory once the stack exists). */
  regs: Uint8Array = new Uint8Array(PT_REGS_SIZE)
  /** Physical address of its kernel stack (THREAD_SIZE bytes), or -1. */
  stackPhys = -1
  state: TaskState = 'runnable'
  /** While sleeping: TASK_INTERRUPTIBLE or TASK_KILLABLE. */
  sleepState = 0
  /** thread_info.flags as written to its task_struct (_TIF_SIGPENDING, _TIF_NOTIFY_RESUME). */
  tif = 0
  /** prepare_to_wait_event has run and schedule() has not yet taken it off its CPU. */
  sleepPending = false
  /** What it waits for (set by a leaf that returned -EWOULDSLEEP, cleared by finish_wait). */
  sleep: SleepCondition | null = null
  fsBase = 0
  /** The user GS base (in KERNEL_GS_BASE while the task is in the kernel). */
  gsBase = 0
  exitCode = 0
  /** Signal that killed it, or 0. */
  exitSignal = 0
  /** Its exit was reported to tracers (tracehook_report_exit, once). */
  exitReported = false
  children: Task[] = []
  /** CLONE_CHILD_CLEARTID / set_tid_address: cleared and futex-woken at exit. */
  clearChildTid = 0
  /** The CPU it runs on, or -1. */
  cpu = -1
  /** Address of its guest struct task_struct. */
  guestTask = 0
  /** Virtual time (instructions) it last ran, for fair round-robin. */
  lastRan = 0
  /** Set when a vfork child has exec'd or exited (the parent may go on). */
  vforkDone = false
  /** A signal whose default action kills it, delivered when it next reaches a CPU. */
  pendingKill = 0
  /** Chosen by the OOM killer (tsk_is_oom_victim): until it is gone, no other victim is chosen. */
  oomVictim = false
  /** Root and working directory (fs_struct): shared with the tasks cloned with CLONE_FS. */
  fs = new FsStruct()
  /** Capability sets (all of them: every task runs as root), capset may drop some. */
  caps: Capabilities = rootCapabilities()
  /** Working directory (set at creation: the file system root): its fs_struct's. */
  get cwd(): Directory {
    return this.fs.cwd
  }
  set cwd(dir: Directory) {
    this.fs.cwd = dir
  }
  /** File mode creation mask. */
  umask = 0o022
  /** Process group and session ids (setpgid, setsid); inherited across fork and exec. */
  pgid = 0
  sid = 0
  /** Resource limits (getrlimit/setrlimit/prlimit64), shared by the threads of a process. */
  rlimits: Rlimits = defaultRlimits(0)
  /** CPU time in virtual-clock ns: its own (closed at each switch-out, from runStart), and its waited-for children's. */
  utime = 0
  cutime = 0
  runStart = 0
  /** FPU/SSE state while off-CPU. */
  readonly xmm = new Int32Array(64)
  mxcsr = 0x1f80
  x87: X87State = newX87State()
  /** Signal actions, shared by the threads of a process. */
  sighand = new SignalHandlers()
  /** Blocked signals (bit n-1 for signal n). */
  blocked = 0n
  /** Pending signals with their info, in arrival order per signal. */
  readonly pending = new Map<number, SigInfo>()
  /** sigaltstack: sas_ss_sp, sas_ss_size, sas_ss_flags (SS_AUTODISARM, and the mode as given). */
  altStack = { sp: 0, size: 0, flags: 0 }
  /** The signal that stopped it (job control), and whether wait has reported the stop / the continue. */
  stopSignal = 0
  stopReported = true
  continueReported = true
  /** The mask rt_sigsuspend replaced, restored when its handler returns. */
  savedSigmask: bigint | null = null
  /** set_robust_list: the user address of its robust futex list head (0: none). */
  robustList = 0
  /** rseq registration (null: none). */
  rseq: RseqRegistration | null = null
  /** prctl PR_SET_PDEATHSIG: sent to this task when its parent exits (0: none; not inherited by fork). */
  pdeathSignal = 0
  /** prctl flags: SECURE_KEEP_CAPS (PR_SET_KEEPCAPS), signal->is_child_subreaper, no_new_privs. */
  keepCaps = false
  /** Linux's exit_signal: the signal the clone flags asked for at its death (-1 for a thread). */
  cloneExitSignal = 17
  isChildSubreaper = false
  noNewPrivs = false
  /** Per-syscall state kept across a restart (a sleep's deadline, a futex wake-up). */
  restart: { nr: number; deadline?: number; woken?: boolean } | null = null

  constructor(
    readonly pid: number,
    public tgid: number,
    public parent: Task | null,
    public comm: string,
    public mm: Mm,
    public files: FdTable,
  ) {}

  get isThreadGroupLeader(): boolean {
    return this.pid === this.tgid
  }

  private get view(): DataView {
    return new DataView(this.regs.buffer, this.regs.byteOffset, PT_REGS_SIZE)
  }

  getReg(f: PtRegsField): number {
    const v = this.view
    return v.getInt32(PT_REGS[f] + 4, true) * 0x1_0000_0000 + v.getUint32(PT_REGS[f], true)
  }

  setReg(f: PtRegsField, value: number): void {
    const v = this.view
    v.setInt32(PT_REGS[f], value | 0, true)
    v.setInt32(PT_REGS[f] + 4, Math.floor(value / 0x1_0000_0000) | 0, true)
  }
}
