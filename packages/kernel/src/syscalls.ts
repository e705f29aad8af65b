// The host's system call table: everything do_syscall_64 does not route
// through a guest sys_* function reaches it via HC_SYSCALL. The table is
// assembled from the subsystems' own (fs/, mm/, signal/, time/ register
// theirs) and the calls listed here. Each returns a value for rax (negative
// errno) or WouldBlock: the guest then sleeps and asks again once woken.

import type { Cpu } from '@probekit/x86-emu'
import { sysGetgroups, sysGetresid } from './credentials.js'
import { EBADF, EINVAL } from './errno.js'
import type { OpenFile, WouldBlock } from './fs/files.js'
import { sysAccess, sysChmod, sysFaccessat, sysFaccessat2, sysFchmod, sysFchmodat } from './fs/permissions.js'
import { sysPoll, sysPpoll } from './fs/poll.js'
import { sysFstatfs, sysStatfs } from './fs/statfs.js'
import { registerFsSyscalls } from './fs/syscalls.js'
import type { Kernel, PtRegsFrame } from './kernel.js'
import { registerMmSyscalls } from './mm/syscalls.js'
import { copyToUser, writeUserU64 } from './mm/user-memory.js'
import { sysConnect, sysGetpeername, sysGetsockname, sysSocket } from './net/socket.js'
import { sysPrctl } from './prctl.js'
import { futex, wait4, waitid } from './process.js'
import { sysGetpgid, sysGetpgrp, sysGetsid, sysSetpgid, sysSetsid } from './process-groups.js'
import { sysGetrlimit, sysPrlimit64, sysSetrlimit } from './rlimits.js'
import { sysGetRobustList, sysSetRobustList } from './robust-futex.js'
import { sysGetrusage, sysTimes } from './sched/cputime.js'
import { sysRseq } from './sched/rseq.js'
import { sysSchedGetaffinity } from './sched/sched-affinity.js'
import type { Task } from './sched/task.js'
import { registerSignalSyscalls } from './signal/syscalls.js'
import { SYSCALL_NAMES_64 } from './syscall-names.js'
import { sysSysinfo } from './sysinfo.js'
import { registerTimeSyscalls } from './time/syscalls.js'
import { utf8Encode } from './utf8.js'

export interface SyscallContext {
  kernel: Kernel
  cpu: Cpu
  task: Task
  frame: PtRegsFrame
  regs: number
}

export type SyscallResult = number | WouldBlock
export type SyscallFn = (ctx: SyscallContext, ...args: number[]) => SyscallResult

export const syscallTable = new Map<number, SyscallFn>()
const names = new Map<number, string>()

export type SyscallDef = (nr: number, name: string, fn: SyscallFn) => void

function def(nr: number, name: string, fn: SyscallFn): void {
  syscallTable.set(nr, fn)
  names.set(nr, name)
}

export function syscallName(nr: number): string {
  return names.get(nr) ?? SYSCALL_NAMES_64[nr] ?? `syscall_${nr}`
}

/** A descriptor argument is a C int: the register's upper half is not part of it (mov $-100, %edi leaves it zero). */
function _fileOf(t: Task, fd: number): OpenFile | number {
  return t.files.get(fd | 0) ?? -EBADF
}

// ---------------------------------------------------------------- process state

def(39, 'getpid', ({ task }) => task.tgid)
def(186, 'gettid', ({ task }) => task.pid)
def(110, 'getppid', ({ task }) => task.parent?.tgid ?? 0)
for (const [nr, name] of [
  [102, 'getuid'],
  [104, 'getgid'],
  [107, 'geteuid'],
  [108, 'getegid'],
] as const)
  def(nr, name, () => 0)
def(218, 'set_tid_address', ({ task }, tidptr) => {
  task.clearChildTid = tidptr
  return task.pid
})
def(273, 'set_robust_list', sysSetRobustList)
def(274, 'get_robust_list', sysGetRobustList)
def(334, 'rseq', sysRseq)
def(204, 'sched_getaffinity', sysSchedGetaffinity)
def(99, 'sysinfo', sysSysinfo)
def(157, 'prctl', sysPrctl)
def(7, 'poll', sysPoll)
def(271, 'ppoll', sysPpoll)
// do_sched_yield: the caller goes to the back of the run queue at its return to user mode (schedule()).
def(24, 'sched_yield', ({ kernel, cpu }) => {
  kernel.requestReschedule(cpu)
  return 0
})

const ARCH_SET_GS = 0x1001
const ARCH_SET_FS = 0x1002
const ARCH_GET_FS = 0x1003
const ARCH_GET_GS = 0x1004
def(158, 'arch_prctl', ({ task, cpu }, code, addr) => {
  switch (code) {
    case ARCH_SET_FS:
      cpu.fsBase = addr
      task.fsBase = addr
      return 0
    case ARCH_SET_GS:
      cpu.kernelGsBase = addr
      task.gsBase = addr
      return 0
    case ARCH_GET_FS:
      writeUserU64(task.mm, addr, cpu.fsBase)
      return 0
    case ARCH_GET_GS:
      writeUserU64(task.mm, addr, cpu.kernelGsBase)
      return 0
    default:
      return -EINVAL
  }
})

def(63, 'uname', ({ task }, buf) => {
  const fields = ['Linux', 'probekit', '2.6.26-probekit', '#1 SMP', 'x86_64', '(none)']
  const out = new Uint8Array(65 * 6)
  fields.forEach((f, i) => {
    out.set(utf8Encode(f), i * 65)
  })
  copyToUser(task.mm, buf, out)
  return 0
})

// ---------------------------------------------------------------- processes

def(61, 'wait4', (ctx, pid, status, options) => wait4(ctx, pid | 0, status, options))
def(247, 'waitid', (ctx, idtype, id, infop, options) => waitid(ctx, idtype, id | 0, infop, options))
def(202, 'futex', (ctx, uaddr, op, val, val2, uaddr2, val3) =>
  futex(ctx, uaddr, op, val, val2, uaddr2, val3 | 0),
)

// ---------------------------------------------------------------- the subsystems' own

for (const register of [registerFsSyscalls, registerMmSyscalls, registerSignalSyscalls, registerTimeSyscalls])
  register(def)

// ---------------------------------------------------------------- in their own files

def(21, 'access', sysAccess)
def(269, 'faccessat', sysFaccessat)
def(439, 'faccessat2', sysFaccessat2)
def(90, 'chmod', sysChmod)
def(91, 'fchmod', sysFchmod)
def(268, 'fchmodat', sysFchmodat)
def(137, 'statfs', sysStatfs)
def(138, 'fstatfs', sysFstatfs)
def(97, 'getrlimit', sysGetrlimit)
def(160, 'setrlimit', sysSetrlimit)
def(302, 'prlimit64', sysPrlimit64)
def(98, 'getrusage', sysGetrusage)
def(100, 'times', sysTimes)
def(111, 'getpgrp', sysGetpgrp)
def(121, 'getpgid', sysGetpgid)
def(109, 'setpgid', sysSetpgid)
def(124, 'getsid', sysGetsid)
def(112, 'setsid', sysSetsid)
def(115, 'getgroups', sysGetgroups)
def(118, 'getresuid', sysGetresid)
def(120, 'getresgid', sysGetresid)
def(41, 'socket', sysSocket)
def(42, 'connect', sysConnect)
def(51, 'getsockname', sysGetsockname)
def(52, 'getpeername', sysGetpeername)
