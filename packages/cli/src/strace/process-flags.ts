// Process constants and small structs: clone flags (the exit signal in the
// low byte), wait4 options and status, resource limits.

import { readStruct, type StraceMemory } from './memory.js'
import { hex } from './numbers.js'
import { signalText } from './signals.js'
import { flags, type Xlat, xval } from './xlat.js'

export const CLONE_FLAGS: Xlat = [
  [0x00000100, 'CLONE_VM'],
  [0x00000200, 'CLONE_FS'],
  [0x00000400, 'CLONE_FILES'],
  [0x00000800, 'CLONE_SIGHAND'],
  [0x00001000, 'CLONE_PIDFD'],
  [0x00002000, 'CLONE_PTRACE'],
  [0x00004000, 'CLONE_VFORK'],
  [0x00008000, 'CLONE_PARENT'],
  [0x00010000, 'CLONE_THREAD'],
  [0x00020000, 'CLONE_NEWNS'],
  [0x00040000, 'CLONE_SYSVSEM'],
  [0x00080000, 'CLONE_SETTLS'],
  [0x00100000, 'CLONE_PARENT_SETTID'],
  [0x00200000, 'CLONE_CHILD_CLEARTID'],
  [0x00800000, 'CLONE_UNTRACED'],
  [0x01000000, 'CLONE_CHILD_SETTID'],
  [0x02000000, 'CLONE_NEWCGROUP'],
  [0x04000000, 'CLONE_NEWUTS'],
  [0x08000000, 'CLONE_NEWIPC'],
  [0x10000000, 'CLONE_NEWUSER'],
  [0x20000000, 'CLONE_NEWPID'],
  [0x40000000, 'CLONE_NEWNET'],
  [0x80000000, 'CLONE_IO'],
]

/** clone3 adds flags above bit 31. */
export const CLONE3_FLAGS: Xlat = [
  ...CLONE_FLAGS,
  [0x100000000n, 'CLONE_CLEAR_SIGHAND'],
  [0x200000000n, 'CLONE_INTO_CGROUP'],
]

export const CLONE = {
  PIDFD: 0x1000,
  SETTLS: 0x80000,
  PARENT_SETTID: 0x100000,
  CHILD_CLEARTID: 0x200000,
  CHILD_SETTID: 0x1000000,
} as const

/** clone's flags argument: named flags, then the exit signal ("...|SIGCHLD"). */
export function cloneFlagsText(value: number): string {
  const all = BigInt.asUintN(64, BigInt(value))
  const sig = Number(all & 0xffn)
  const rest = all & ~0xffn
  if (rest === 0n) return signalText(sig)
  const text = flags(CLONE_FLAGS, rest, 'CLONE_???')
  return sig ? `${text}|${signalText(sig)}` : text
}

export const WAIT_OPTIONS: Xlat = [
  [1, 'WNOHANG'],
  [4, 'WEXITED'],
  [2, 'WSTOPPED'],
  [8, 'WCONTINUED'],
  [0x01000000, 'WNOWAIT'],
  [0x80000000, '__WCLONE'],
  [0x40000000, '__WALL'],
  [0x20000000, '__WNOTHREAD'],
]

/** A wait status the way strace spells it: [{WIFEXITED(s) && WEXITSTATUS(s) == 0}]. */
export function waitStatusText(status: number): string {
  let s = status >>> 0
  let text: string
  const low = s & 0x7f
  if ((s & 0xff) === 0x7f) {
    const sig = (s >>> 8) & 0xff
    text = `{WIFSTOPPED(s) && WSTOPSIG(s) == ${signalText(sig & 0x7f)}${sig & 0x80 ? ' | 0x80' : ''}}`
    s &= ~((sig << 8) | 0x7f)
  } else if (low !== 0 && low !== 0x7f) {
    text = `{WIFSIGNALED(s) && WTERMSIG(s) == ${signalText(low)}${s & 0x80 ? ' && WCOREDUMP(s)' : ''}}`
    s &= ~(low | 0x80)
  } else if (low === 0) {
    text = `{WIFEXITED(s) && WEXITSTATUS(s) == ${(s >>> 8) & 0xff}}`
    s &= ~(s & 0xff00)
  } else if (s === 0xffff) {
    return '[{WIFCONTINUED(s)}]'
  } else {
    return `[${hex(s)}]`
  }
  const event = s >>> 16
  let tail = ''
  if (event) {
    tail += ` | ${event} << 16`
    s &= 0xffff
  }
  if (s) tail += ` | ${hex(s)}`
  return `[${text}${tail}]`
}

/** The status word at addr. */
export function waitStatusAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 4)
  return s ? waitStatusText(s.u32(0)) : hex(addr)
}

export const RLIMITS: Xlat = [
  [0, 'RLIMIT_CPU'],
  [1, 'RLIMIT_FSIZE'],
  [2, 'RLIMIT_DATA'],
  [3, 'RLIMIT_STACK'],
  [4, 'RLIMIT_CORE'],
  [5, 'RLIMIT_RSS'],
  [6, 'RLIMIT_NPROC'],
  [7, 'RLIMIT_NOFILE'],
  [8, 'RLIMIT_MEMLOCK'],
  [9, 'RLIMIT_AS'],
  [10, 'RLIMIT_LOCKS'],
  [11, 'RLIMIT_SIGPENDING'],
  [12, 'RLIMIT_MSGQUEUE'],
  [13, 'RLIMIT_NICE'],
  [14, 'RLIMIT_RTPRIO'],
  [15, 'RLIMIT_RTTIME'],
]

export function rlimitResourceText(value: number): string {
  return xval(RLIMITS, value >>> 0, 'RLIMIT_???')
}

function rlimValue(v: bigint): string {
  if (v === 0xffffffffffffffffn) return 'RLIM64_INFINITY'
  if (v > 0n && v % 1024n === 0n) return `${v / 1024n}*1024`
  return v.toString()
}

/** struct rlimit64: {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}. */
export function rlimitAt(mem: StraceMemory, addr: number): string {
  if (addr === 0) return 'NULL'
  const s = readStruct(mem, addr, 16)
  if (!s) return hex(addr)
  return `{rlim_cur=${rlimValue(s.u64(0))}, rlim_max=${rlimValue(s.u64(8))}}`
}
