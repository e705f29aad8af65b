// Resource limits (struct rlimit, signal_struct->rlim): getrlimit, setrlimit
// and prlimit64. The first process gets Linux's boot defaults (init_task's
// INIT_RLIMITS, RLIMIT_NPROC from set_max_threads for the machine's memory);
// fork copies them, threads share them, exec keeps them. RLIMIT_STACK bounds
// the stack's growth (the mm's stackLimit mirrors it).

import { EINVAL, EPERM, ESRCH } from '../errno.js'
import { FdTable } from '../fs/files.js'
import { copyFromUser, copyToUser } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext } from '../syscalls.js'
import { maxThreadsFor } from './pid.js'

export interface Rlimit {
  cur: bigint
  max: bigint
}
export type Rlimits = Rlimit[]

export const RLIM_INFINITY = (1n << 64n) - 1n
export const RLIMIT_FSIZE = 1
export const RLIMIT_STACK = 3
export const RLIMIT_NPROC = 6
export const RLIMIT_NOFILE = 7
export const RLIMIT_SIGPENDING = 11
const RLIM_NLIMITS = 16

/** INIT_RLIMITS; RLIMIT_NPROC is half of max_threads (what set_max_threads derives from the memory size). */
export function defaultRlimits(memoryBytes: number): Rlimits {
  const n = BigInt(Math.floor(maxThreadsFor(memoryBytes) / 2))
  const lim = (cur: bigint, max = cur): Rlimit => ({ cur, max })
  const inf = lim(RLIM_INFINITY)
  return [
    inf, // CPU
    inf, // FSIZE
    inf, // DATA
    lim(8n << 20n, RLIM_INFINITY), // STACK: _STK_LIM
    lim(0n, RLIM_INFINITY), // CORE
    inf, // RSS
    lim(n), // NPROC
    lim(BigInt(FdTable.MAX)), // NOFILE: the descriptor table's size
    lim(8n << 20n), // MEMLOCK
    inf, // AS
    inf, // LOCKS
    lim(n), // SIGPENDING
    lim(819200n), // MSGQUEUE
    lim(0n), // NICE
    lim(0n), // RTPRIO
    inf, // RTTIME
  ]
}

function rlimitBytes(r: Rlimit): Uint8Array {
  const b = new Uint8Array(16)
  const v = new DataView(b.buffer)
  v.setBigUint64(0, r.cur, true)
  v.setBigUint64(8, r.max, true)
  return b
}

/** struct rlimit from user memory. */
function readRlimit(ctx: SyscallContext, addr: number): Rlimit {
  const v = new DataView(copyFromUser(ctx.task.mm, addr, 16).buffer)
  return { cur: v.getBigUint64(0, true), max: v.getBigUint64(8, true) }
}

/**
 * do_prlimit: resource is an unsigned int; the new limit (already copied in)
 * must have cur <= max, and RLIMIT_NOFILE no more than the descriptor table
 * (fs.nr_open). The caller is root: raising the hard limit is allowed.
 * Returns the old limit, or -errno.
 */
function doPrlimit(target: Task, resource: number, next: Rlimit | null): Rlimit | number {
  resource >>>= 0
  if (resource >= RLIM_NLIMITS) return -EINVAL
  if (next) {
    if (next.cur > next.max) return -EINVAL
    if (resource === RLIMIT_NOFILE && next.max > BigInt(FdTable.MAX)) return -EPERM
  }
  const old = target.rlimits[resource]
  if (next) {
    target.rlimits[resource] = next
    if (resource === RLIMIT_STACK) target.mm.stackLimit = rlimitStackBytes(target.rlimits)
  }
  return old
}

/** RLIMIT_STACK's soft limit in bytes, as the stack's growth checks it (the mm keeps a copy). */
export function rlimitStackBytes(rlimits: Rlimits): number {
  const cur = rlimits[RLIMIT_STACK].cur
  return cur === RLIM_INFINITY ? Number.POSITIVE_INFINITY : Number(cur)
}

/** getrlimit: the limit, then the copy out (EFAULT). */
export function sysGetrlimit(ctx: SyscallContext, resource: number, rlim: number): number {
  const old = doPrlimit(ctx.task, resource, null)
  if (typeof old === 'number') return old
  copyToUser(ctx.task.mm, rlim, rlimitBytes(old))
  return 0
}

/** setrlimit: the new limit is copied in (EFAULT) before the resource is looked at. */
export function sysSetrlimit(ctx: SyscallContext, resource: number, rlim: number): number {
  const r = doPrlimit(ctx.task, resource, readRlimit(ctx, rlim))
  return typeof r === 'number' ? r : 0
}

/** prlimit64: the new limit copied in (EFAULT), the pid (an int: ESRCH), do_prlimit, the old one out. */
export function sysPrlimit64(
  ctx: SyscallContext,
  pid: number,
  resource: number,
  newRlim: number,
  oldRlim: number,
): number {
  const next = newRlim ? readRlimit(ctx, newRlim) : null
  pid |= 0
  const target = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!target || target.state === 'zombie') return -ESRCH
  const old = doPrlimit(target, resource, next)
  if (typeof old === 'number') return old
  if (oldRlim) copyToUser(ctx.task.mm, oldRlim, rlimitBytes(old))
  return 0
}
