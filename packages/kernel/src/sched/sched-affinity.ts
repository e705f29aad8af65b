// sched_getaffinity(pid, len, mask) (kernel/sched/core.c): every task may
// run on every CPU of the machine (nothing sets an affinity here), so the
// mask is the online CPUs. glibc's sysconf(_SC_NPROCESSORS_ONLN) and
// get_nprocs fall back on it.

import { EINVAL, ESRCH } from '../errno.js'
import { copyToUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'

/** cpumask_size(): the machine has at most 64 CPUs, one unsigned long. */
const CPUMASK_SIZE = 8

export function sysSchedGetaffinity(ctx: SyscallContext, pid: number, len: number, mask: number): number {
  const cpus = ctx.kernel.machine.cpus.length
  len >>>= 0 // an unsigned int
  if (len * 8 < cpus || len % 8 !== 0) return -EINVAL
  pid |= 0 // pid_t
  const t = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!t || t.state === 'zombie') return -ESRCH
  const out = new Uint8Array(Math.min(len, CPUMASK_SIZE))
  for (let i = 0; i < cpus; i++) out[i >> 3] |= 1 << (i & 7)
  copyToUser(ctx.task.mm, mask, out)
  return out.length
}
