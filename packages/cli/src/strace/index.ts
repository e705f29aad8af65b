// The formatting half of `probekit run --strace`: a finished system call,
// a delivered signal or a task's end as the line strace -f prints.

export type { ExitStatus } from './format-exit.js'
export { formatExit } from './format-exit.js'
export type { SignalInfo } from './format-signal.js'
export { formatSignal } from './format-signal.js'
export type { StraceCall, StraceLineOptions } from './format-syscall.js'
export { formatSyscall, formatUnfinishedSyscall, RESULT_COLUMN, startSyscall } from './format-syscall.js'
export type { StraceMemory } from './memory.js'
