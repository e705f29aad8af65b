// The guest kernel ABI (see ../ABI.md), host side. guest/include/abi.h mirrors
// these numbers; test/abi.test.ts checks that the two agree.

export const KERNEL_PHYS_BASE = 0x1000000
/** __START_KERNEL_map: kernel image virtual = physical + this (as a linear number). */
export const START_KERNEL_MAP = -0x80000000 // 0xffffffff80000000
/** _text, where the image is linked. */
export const KERNEL_TEXT = -0x7f000000 // 0xffffffff81000000
/** PAGE_OFFSET: the direct map of all physical memory. */
export const PAGE_OFFSET = -0x778000000000 // 0xffff888000000000
/** Highest user address + 1 (TASK_SIZE_MAX as Linux defines it). */
export const TASK_SIZE = 0x7ffffffff000

export const KERNEL_CS = 0x10
export const KERNEL_SS = 0x18
export const USER_SS = 0x2b
export const USER_CS = 0x33

// Hypercalls.
export const HC_CPU_ONLINE = 0x100
export const HC_PRINTK = 0x101
export const HC_SYSCALL = 0x102
export const HC_EXCEPTION = 0x104
export const HC_NOTIFY_DIE = 0x105
export const HC_TIMER_TICK = 0x106
export const HC_FILE_READ = 0x107
export const HC_FILE_WRITE = 0x108
export const HC_FILE_OPEN = 0x109
export const HC_FORK = 0x10a
export const HC_EXECVE = 0x10b
export const HC_EXIT = 0x10c
export const HC_KRETPROBE_TRAMPOLINE = 0x10d
export const HC_PICK_NEXT_TASK = 0x110
export const HC_SWITCH_TO = 0x111
export const HC_PUT_TASK_STACK = 0x112
export const HC_TTWU = 0x113
export const HC_TTWU_PENDING = 0x114
export const HC_WAKE_UP_NEW_TASK = 0x115
export const HC_PREPARE_TO_WAIT = 0x116
export const HC_FINISH_WAIT = 0x117
export const HC_SIGNAL = 0x118
export const HC_NOTIFY_RESUME = 0x119
export const HC_VFORK_WAIT = 0x11a
export const HC_SYSCALL_TRACE_ENTER = 0x11b
export const HC_SYSCALL_TRACE_EXIT = 0x11c
export const HC_FDGET = 0x11d
export const HC_FPUT = 0x11e
export const FDPUT_FPUT = 1
export const HC_HANDLE_MM_FAULT = 0x11f
export const HC_FIND_TASK = 0x120
export const HC_SEND_SIGNAL = 0x121
export const HC_OOM_SELECT = 0x122
export const HC_EXIT_REPORT = 0x123
/** An optprobe's detour buffer calls the host here (optimized_callback): rdi = probe id, rsi = its pt_regs. */
export const HC_OPTPROBE_CALLBACK = 0x124
/** jprobe_entry_stub (via jprobe_call_entry) runs the jprobe's entry: rdi = the probed function's pt_regs; returns the saved sp. */
export const HC_JPROBE_ENTRY = 0x125
/** do_group_exit's zap_other_threads: rdi = the exit status; returns the group's. */
export const HC_ZAP_OTHER_THREADS = 0x126
export const FAULT_FLAG_WRITE = 0x01
export const FAULT_FLAG_USER = 0x40
export const FAULT_FLAG_INSTRUCTION = 0x100
export const VM_FAULT_OOM = 0x01
export const VM_FAULT_SIGSEGV = 0x40
// struct oom_control (guest include/linux/oom.h).
export const OOM_TOTALPAGES = 0
export const OOM_CHOSEN = 8
export const OOM_CHOSEN_POINTS = 16
export const OOM_TOTAL_VM = 24
export const OOM_ANON_RSS = 32
export const OOM_FILE_RSS = 40
export const OOM_PGTABLES = 48
export const OOM_CONTROL_SIZE = 56
export const OOM_ABORT = -1

/** The local APIC timer's vector (the tick). */
export const TIMER_VECTOR = 32

// Per-CPU area offsets.
export const PERCPU_SELF = 0
export const PERCPU_CPU_NUMBER = 8
export const PERCPU_CURRENT_TASK = 16
export const PERCPU_TOP_OF_STACK = 24
export const PERCPU_USER_RSP = 32
export const PERCPU_NEED_RESCHED = 40
export const PERCPU_IRQ_COUNT = 48
export const PERCPU_TTWU_PENDING = 56
export const PERCPU_SIZE = 4096

// struct task_struct fields the host and the guest share (the rest is the host's).
export const TASK_PID = 0
export const TASK_TGID = 4
export const TASK_STATE = 8
export const TASK_ON_CPU = 12
export const TASK_COMM = 16
export const TASK_THREAD_SP = 32
export const TASK_STACK = 40
export const TASK_FLAGS = 48
export const TASK_EXIT_CODE = 56
export const TASK_STRUCT_SIZE = 256
/** A task's kernel stack; its pt_regs sit at the top. */
export const THREAD_SIZE = 16384
// __state values.
export const TASK_RUNNING = 0
export const TASK_INTERRUPTIBLE = 0x1
export const TASK_UNINTERRUPTIBLE = 0x2
export const __TASK_STOPPED = 0x4
export const __TASK_TRACED = 0x8
export const TASK_DEAD = 0x80
export const TASK_WAKEKILL = 0x100
export const TASK_NEW = 0x800
export const TASK_KILLABLE = TASK_WAKEKILL | TASK_UNINTERRUPTIBLE
export const TASK_NORMAL = TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE
// thread_info.flags.
export const _TIF_SYSCALL_TRACE = 0x1
export const _TIF_NOTIFY_RESUME = 0x2
export const _TIF_SIGPENDING = 0x4
/** user_enable_single_step: the syscall instruction's own step trap is masked, so its exit reports it. */
export const _TIF_SINGLESTEP = 0x8
/** struct inactive_task_frame: r15 r14 r13 r12 bx bp, then the return address. */
export const FRAME_RET_ADDR = 48
export const INACTIVE_TASK_FRAME_SIZE = 56
/** A host leaf that must wait returns -EWOULDSLEEP; the guest sleeps (wait_event_host) and calls it again. */
export const EWOULDSLEEP = 1000

// struct file: the guest face of a host open file.
export const FILE_F_OP = 0
export const FILE_F_FLAGS = 8
export const FILE_F_KIND = 12
export const FILE_F_HOST = 16
export const FILE_STRUCT_SIZE = 32
export const FILE_KIND_HOST = 0
export const FILE_KIND_PIPE = 1

/** struct pt_regs field offsets (Linux x86-64). */
export const PT_REGS = {
  r15: 0,
  r14: 8,
  r13: 16,
  r12: 24,
  bp: 32,
  bx: 40,
  r11: 48,
  r10: 56,
  r9: 64,
  r8: 72,
  ax: 80,
  cx: 88,
  dx: 96,
  si: 104,
  di: 112,
  orig_ax: 120,
  ip: 128,
  cs: 136,
  flags: 144,
  sp: 152,
  ss: 160,
} as const
export const PT_REGS_SIZE = 168
export type PtRegsField = keyof typeof PT_REGS

/** GPR number (rax=0 .. r15=15) to its pt_regs field. */
export const GPR_TO_PT_REGS: readonly PtRegsField[] = [
  'ax',
  'cx',
  'dx',
  'bx',
  'sp',
  'bp',
  'si',
  'di',
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
]

// notify_die values and notifier results (include/linux/kdebug.h, notifier.h).
export const DIE_OOPS = 1
export const DIE_INT3 = 2
export const DIE_DEBUG = 3
export const DIE_PANIC = 4
export const DIE_NMI = 5
export const DIE_DIE = 6
export const DIE_KERNELDEBUG = 7
export const DIE_TRAP = 8
export const DIE_GPF = 9
export const DIE_CALL = 10
export const DIE_PAGE_FAULT = 11
export const NOTIFY_DONE = 0
export const NOTIFY_OK = 1
export const NOTIFY_STOP_MASK = 0x8000
export const NOTIFY_STOP = NOTIFY_OK | NOTIFY_STOP_MASK
