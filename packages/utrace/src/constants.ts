// The utrace ABI, API version 20091216 (include/linux/utrace.h): event bits,
// resume actions, the signal and syscall actions carried in a callback's
// action argument and return value, and the attach flags. The numbers are
// utrace's own, so code written against utrace reads the same here.

export const UTRACE_API_VERSION = 20091216

// ---------------------------------------------------------------- events (enum utrace_events)

export const _UTRACE_EVENT_QUIESCE = 0 // thread is available for examination
export const _UTRACE_EVENT_REAP = 1 // zombie reaped, no more tracing possible
export const _UTRACE_EVENT_CLONE = 2 // successful clone/fork/vfork just done
export const _UTRACE_EVENT_EXEC = 3 // successful execve just completed
export const _UTRACE_EVENT_EXIT = 4 // thread exit in progress
export const _UTRACE_EVENT_DEATH = 5 // thread has died
export const _UTRACE_EVENT_SYSCALL_ENTRY = 6 // user entered kernel for system call
export const _UTRACE_EVENT_SYSCALL_EXIT = 7 // returning to user after system call
export const _UTRACE_EVENT_SIGNAL = 8 // signal delivery will run a user handler
export const _UTRACE_EVENT_SIGNAL_IGN = 9 // no-op signal to be delivered
export const _UTRACE_EVENT_SIGNAL_STOP = 10 // signal delivery will suspend
export const _UTRACE_EVENT_SIGNAL_TERM = 11 // signal delivery will terminate
export const _UTRACE_EVENT_SIGNAL_CORE = 12 // signal delivery will dump core
export const _UTRACE_EVENT_JCTL = 13 // job control stop or continue completed
export const _UTRACE_NEVENTS = 14

/** UTRACE_EVENT(x) */
export const UTRACE_EVENT = {
  QUIESCE: 1 << _UTRACE_EVENT_QUIESCE,
  REAP: 1 << _UTRACE_EVENT_REAP,
  CLONE: 1 << _UTRACE_EVENT_CLONE,
  EXEC: 1 << _UTRACE_EVENT_EXEC,
  EXIT: 1 << _UTRACE_EVENT_EXIT,
  DEATH: 1 << _UTRACE_EVENT_DEATH,
  SYSCALL_ENTRY: 1 << _UTRACE_EVENT_SYSCALL_ENTRY,
  SYSCALL_EXIT: 1 << _UTRACE_EVENT_SYSCALL_EXIT,
  SIGNAL: 1 << _UTRACE_EVENT_SIGNAL,
  SIGNAL_IGN: 1 << _UTRACE_EVENT_SIGNAL_IGN,
  SIGNAL_STOP: 1 << _UTRACE_EVENT_SIGNAL_STOP,
  SIGNAL_TERM: 1 << _UTRACE_EVENT_SIGNAL_TERM,
  SIGNAL_CORE: 1 << _UTRACE_EVENT_SIGNAL_CORE,
  JCTL: 1 << _UTRACE_EVENT_JCTL,
} as const

export const UTRACE_EVENT_SYSCALL = UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT
export const UTRACE_EVENT_SIGNAL_ALL =
  UTRACE_EVENT.SIGNAL |
  UTRACE_EVENT.SIGNAL_IGN |
  UTRACE_EVENT.SIGNAL_STOP |
  UTRACE_EVENT.SIGNAL_TERM |
  UTRACE_EVENT.SIGNAL_CORE
export const _UTRACE_DEATH_EVENTS = UTRACE_EVENT.DEATH | UTRACE_EVENT.QUIESCE

/** The bit past the events that marks an engine (and the task) as keeping the thread stopped. */
export const ENGINE_STOP = 1 << _UTRACE_NEVENTS

// ---------------------------------------------------------------- resume actions (enum utrace_resume_action)

export const UTRACE_STOP = 0
export const UTRACE_INTERRUPT = 1
export const UTRACE_REPORT = 2
export const UTRACE_SINGLESTEP = 3
export const UTRACE_BLOCKSTEP = 4
export const UTRACE_RESUME = 5
export const UTRACE_DETACH = 6
export const UTRACE_RESUME_MAX = 7
/** (1 << UTRACE_RESUME_BITS) - 1, UTRACE_RESUME_BITS = ilog2(UTRACE_RESUME_MAX) + 1 */
export const UTRACE_RESUME_MASK = 7

export type UtraceResumeAction = 0 | 1 | 2 | 3 | 4 | 5 | 6

export const utrace_resume_action = (action: number): UtraceResumeAction =>
  (action & UTRACE_RESUME_MASK) as UtraceResumeAction

// ---------------------------------------------------------------- signal actions (enum utrace_signal_action)

export const UTRACE_SIGNAL_DELIVER = 0x00
export const UTRACE_SIGNAL_IGN = 0x10
export const UTRACE_SIGNAL_TERM = 0x20
export const UTRACE_SIGNAL_CORE = 0x30
export const UTRACE_SIGNAL_STOP = 0x40
export const UTRACE_SIGNAL_TSTP = 0x50
export const UTRACE_SIGNAL_REPORT = 0x60
export const UTRACE_SIGNAL_HANDLER = 0x70
export const UTRACE_SIGNAL_MASK = 0xf0
export const UTRACE_SIGNAL_HOLD = 0x100

export const utrace_signal_action = (action: number): number => action & UTRACE_SIGNAL_MASK

// ---------------------------------------------------------------- syscall actions (enum utrace_syscall_action)

export const UTRACE_SYSCALL_RUN = 0x00
export const UTRACE_SYSCALL_ABORT = 0x10
export const UTRACE_SYSCALL_MASK = 0xf0
export const UTRACE_SYSCALL_RESUMED = 0x100

export const utrace_syscall_action = (action: number): number => action & UTRACE_SYSCALL_MASK

// ---------------------------------------------------------------- attach flags

export const UTRACE_ATTACH_MATCH_OPS = 0x0001
export const UTRACE_ATTACH_MATCH_DATA = 0x0002
export const UTRACE_ATTACH_MATCH_MASK = 0x000f
export const UTRACE_ATTACH_CREATE = 0x0010
export const UTRACE_ATTACH_EXCLUSIVE = 0x0020

// ---------------------------------------------------------------- job control (report_jctl's type)

export const CLD_STOPPED = 5
export const CLD_CONTINUED = 6
