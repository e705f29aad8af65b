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

/** do_prlimit: read the old limit, then set the new one (the caller is root: raising the hard limit is allowed). */
function doPrlimit(
  ctx: SyscallContext,
  target: Task,
  resource: number,
  newAddr: number,
  oldAddr: number,
): number {
  if (resource < 0 || resource >= RLIM_NLIMITS) return -EINVAL
  let next: Rlimit | null = null
  if (newAddr) {
    const v = new DataView(copyFromUser(ctx.task.mm, newAddr, 16).buffer)
    next = { cur: v.getBigUint64(0, true), max: v.getBigUint64(8, true) }
    if (next.cur > next.max) return -EINVAL
    // The descriptor table cannot grow past its size (like fs.nr_open).
    if (resource === RLIMIT_NOFILE && next.max > BigInt(FdTable.MAX)) return -EPERM
  }
  if (oldAddr) copyToUser(ctx.task.mm, oldAddr, rlimitBytes(target.rlimits[resource]))
  if (next) {
    target.rlimits[resource] = next
    if (resource === RLIMIT_STACK) target.mm.stackLimit = rlimitStackBytes(target.rlimits)
  }
  return 0
}

/** RLIMIT_STACK's soft limit in bytes, as the stack's growth checks it (the mm keeps a copy). */
export function rlimitStackBytes(rlimits: Rlimits): number {
  const cur = rlimits[RLIMIT_STACK].cur
  return cur === RLIM_INFINITY ? Number.POSITIVE_INFINITY : Number(cur)
}

export function sysGetrlimit(ctx: SyscallContext, resource: number, rlim: number): number {
  return doPrlimit(ctx, ctx.task, resource, 0, rlim)
}

export function sysSetrlimit(ctx: SyscallContext, resource: number, rlim: number): number {
  return doPrlimit(ctx, ctx.task, resource, rlim, 0)
}

export function sysPrlimit64(
  ctx: SyscallContext,
  pid: number,
  resource: number,
  newRlim: number,
  oldRlim: number,
): number {
  const target = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!target || target.state === 'zombie') return -ESRCH
  return doPrlimit(ctx, target, resource, newRlim, oldRlim)
}
