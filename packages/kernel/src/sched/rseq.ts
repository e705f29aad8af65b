// Restartable sequences (kernel/rseq.c): a thread registers a struct rseq
// (glibc does it for every thread at start-up); the kernel keeps its
// cpu_id_start/cpu_id current on every return to user space after the
// thread was switched out, migrated or sent a signal, and aborts a critical
// section (rseq_cs) that such an event interrupted by moving the ip to its
// abort handler, whose preceding 4 bytes must be the registered signature.

import type { Cpu } from '@probekit/x86-emu'
import { TASK_SIZE } from '../abi.js'
import { EBUSY, EFAULT, EINVAL, EPERM } from '../errno.js'
import type { Kernel, PtRegsFrame } from '../kernel.js'
import { BadAddress, copyFromUser, readUserU32, writeUserU32, writeUserU64 } from '../mm/user-memory.js'
import { SIGSEGV } from '../signal/signals.js'
import type { SyscallContext } from '../syscalls.js'
import type { Task } from './task.js'

/** A thread's registration (current->rseq, rseq_len, rseq_sig) and whether an event awaits the return to user. */
export interface RseqRegistration {
  addr: number
  len: number
  sig: number
  /** TIF_NOTIFY_RESUME for rseq: preempted, migrated or signalled since the fields were last written. */
  pending: boolean
}

// struct rseq (uapi/linux/rseq.h): the original ABI is 32 bytes, 32-byte aligned.
const ORIG_RSEQ_SIZE = 32
const RSEQ_CPU_ID_START = 0
const RSEQ_CPU_ID = 4
const RSEQ_CS = 8
const RSEQ_NODE_ID = 20
const RSEQ_MM_CID = 24
/** offsetof(struct rseq, end): the smallest extended registration. */
const RSEQ_END = 28
const RSEQ_FLAG_UNREGISTER = 1
const RSEQ_CPU_ID_UNINITIALIZED = -1

/** sys_rseq(rseq, rseq_len, flags, sig). */
export function sysRseq(ctx: SyscallContext, addr: number, len: number, flags: number, sig: number): number {
  const { task, cpu } = ctx
  const cur = task.rseq
  sig >>>= 0
  if ((flags & RSEQ_FLAG_UNREGISTER) !== 0) {
    if ((flags & ~RSEQ_FLAG_UNREGISTER) !== 0) return -EINVAL
    if (!cur || cur.addr !== addr) return -EINVAL
    if (cur.len !== len) return -EINVAL
    if (cur.sig !== sig) return -EPERM
    try {
      writeUserU32(task.mm, addr + RSEQ_CPU_ID_START, 0)
      writeUserU32(task.mm, addr + RSEQ_CPU_ID, RSEQ_CPU_ID_UNINITIALIZED)
    } catch (e) {
      if (e instanceof BadAddress) return -EFAULT
      throw e
    }
    task.rseq = null
    return 0
  }
  if (flags !== 0) return -EINVAL
  if (cur) {
    // Registered already: the same registration again is EBUSY, anything else is an error.
    if (cur.addr !== addr || cur.len !== len) return -EINVAL
    if (cur.sig !== sig) return -EPERM
    return -EBUSY
  }
  if (len < ORIG_RSEQ_SIZE || addr % ORIG_RSEQ_SIZE !== 0 || (len !== ORIG_RSEQ_SIZE && len < RSEQ_END))
    return -EINVAL
  if (addr <= 0 || addr + len > TASK_SIZE) return -EFAULT
  task.rseq = { addr, len, sig, pending: true }
  // The syscall returns to user space at once: the fields are set on the way (rseq_set_notify_resume).
  return rseqUpdate(task, cpu) ? 0 : -EFAULT
}

/** rseq_update_cpu_node_id: write cpu_id_start, cpu_id, node_id and mm_cid. */
function rseqUpdate(task: Task, cpu: Cpu): boolean {
  const r = task.rseq
  if (!r) return true
  try {
    writeUserU32(task.mm, r.addr + RSEQ_CPU_ID_START, cpu.id)
    writeUserU32(task.mm, r.addr + RSEQ_CPU_ID, cpu.id)
    // node_id and mm_cid (what was padding in the original 32 bytes): one node; a running thread's
    // CPU is a valid concurrency id (unique among the mm's running threads, below the CPU count).
    writeUserU32(task.mm, r.addr + RSEQ_NODE_ID, 0)
    writeUserU32(task.mm, r.addr + RSEQ_MM_CID, cpu.id)
    r.pending = false
    return true
  } catch (e) {
    if (e instanceof BadAddress) return false
    throw e
  }
}

/**
 * rseq_ip_fixup: if the interrupted ip lies in the registered critical
 * section (rseq->rseq_cs), clear rseq_cs and resume at its abort_ip.
 * Returns false for a malformed descriptor or a fault (the task gets SIGSEGV).
 */
function rseqIpFixup(task: Task, frame: PtRegsFrame): boolean {
  const r = task.rseq!
  try {
    const csPtr = readU64(task, r.addr + RSEQ_CS)
    if (csPtr === 0n) return true
    if (csPtr >= BigInt(TASK_SIZE)) return false
    const cs = new DataView(copyFromUser(task.mm, Number(csPtr), 32).buffer)
    const version = cs.getUint32(0, true)
    const startIp = cs.getBigUint64(8, true)
    const postCommitOffset = cs.getBigUint64(16, true)
    const abortIp = cs.getBigUint64(24, true)
    const limit = BigInt(TASK_SIZE)
    if (version > 0 || startIp >= limit || startIp + postCommitOffset >= limit || abortIp >= limit)
      return false
    // The abort handler must lie outside the critical section and follow the signature.
    if (abortIp - startIp < postCommitOffset && abortIp >= startIp) return false
    if (readUserU32(task.mm, Number(abortIp) - 4) >>> 0 !== r.sig) return false
    const ip = BigInt(frame.get('ip'))
    // Not in the critical section (any more): clear rseq_cs, leave the ip alone.
    if (ip < startIp || ip - startIp >= postCommitOffset) {
      writeUserU64(task.mm, r.addr + RSEQ_CS, 0)
      return true
    }
    writeUserU64(task.mm, r.addr + RSEQ_CS, 0)
    frame.set('ip', Number(abortIp))
    return true
  } catch (e) {
    if (e instanceof BadAddress) return false
    throw e
  }
}

function readU64(task: Task, addr: number): bigint {
  return new DataView(copyFromUser(task.mm, addr, 8).buffer).getBigUint64(0, true)
}

/** The task leaves a CPU (rseq_preempt / rseq_migrate): its fields must be refreshed before it runs user code again. */
export function rseqPreempt(task: Task): void {
  if (task.rseq) task.rseq.pending = true
}

/**
 * __rseq_handle_notify_resume, on the way back to user space with `frame`
 * the task's user context: abort an interrupted critical section, then
 * publish the CPU. A bad registration is a SIGSEGV, as in Linux.
 */
export function rseqHandleNotifyResume(kernel: Kernel, cpu: Cpu, task: Task, frame: PtRegsFrame): boolean {
  if (!task.rseq?.pending || (frame.get('cs') & 3) !== 3) return true
  if (rseqIpFixup(task, frame) && rseqUpdate(task, cpu)) return true
  task.rseq.pending = false
  kernel.signals.sendSignal(cpu, task, { signo: SIGSEGV, code: 0x80, pid: 0 }) // SI_KERNEL
  return false
}

/** rseq_signal_deliver: a signal handler is about to run; abort a critical section first (false: SIGSEGV instead). */
export function rseqSignalDeliver(kernel: Kernel, cpu: Cpu, task: Task, frame: PtRegsFrame): boolean {
  rseqPreempt(task)
  return rseqHandleNotifyResume(kernel, cpu, task, frame)
}

/** rseq_fork: a thread (CLONE_VM) starts unregistered; a forked process keeps the parent's registration. */
export function rseqFork(parent: Task, child: Task, cloneVm: boolean): void {
  child.rseq = cloneVm || !parent.rseq ? null : { ...parent.rseq, pending: true }
}
