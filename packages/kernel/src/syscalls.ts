// The host's system call table: everything do_syscall_64 does not route
// through a guest sys_* function reaches it via HC_SYSCALL (entry/common.ts).
// The table is assembled from the subsystems' own (fs/, mm/, net/,
// process/, sched/, signal/, time/ register theirs) and the few calls of
// kernel/sys.c and arch/x86 listed here. Each returns a value for rax
// (negative errno) or WouldBlock: the guest then sleeps and asks again once
// woken.

import type { Cpu } from '@probekit/x86-emu'
import { EINVAL } from './errno.js'
import { sysChroot } from './fs/chroot.js'
import type { WouldBlock } from './fs/files.js'
import { registerFsSyscalls } from './fs/syscalls.js'
import type { Kernel, PtRegsFrame } from './kernel.js'
import { registerMmSyscalls } from './mm/syscalls.js'
import { copyToUser, writeUserU64 } from './mm/user-memory.js'
import { registerNetSyscalls } from './net/socket.js'
import { sysCapget, sysCapset } from './process/capability.js'
import { registerProcessSyscalls } from './process/syscalls.js'
import { registerSchedSyscalls } from './sched/syscalls.js'
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
/** A call's answer: a bigint when it needs all 64 bits of rax (lseek's offsets past 2^53). */
export type SyscallFn = (ctx: SyscallContext, ...args: number[]) => SyscallResult | bigint

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

// ---------------------------------------------------------------- the subsystems' own

for (const register of [
  registerFsSyscalls,
  registerMmSyscalls,
  registerNetSyscalls,
  registerProcessSyscalls,
  registerSchedSyscalls,
  registerSignalSyscalls,
  registerTimeSyscalls,
])
  register(def)

// ---------------------------------------------------------------- kernel/sys.c, arch/x86

def(99, 'sysinfo', sysSysinfo)
def(125, 'capget', sysCapget)
def(126, 'capset', sysCapset)
def(161, 'chroot', sysChroot)

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
