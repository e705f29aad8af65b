// poll and ppoll (fs/select.c): which descriptors are ready, waiting until
// one is or the timeout passes on the virtual clock. Readiness comes from
// the inode's poll() where it has one (pipes); everything else is always
// ready for reading and writing, as regular files are on Linux. ppoll's
// signal mask is not applied while waiting (a signal still interrupts the
// wait with EINTR).

import { EFAULT, EINVAL, ERESTARTNOHAND } from '../errno.js'
import { accessOk, copyFromUser, copyToUser, readUserU64 } from '../mm/user-memory.js'
import { RLIMIT_NOFILE } from '../process/rlimits.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallResult } from '../syscalls.js'

export const POLLIN = 0x1
export const POLLOUT = 0x4
export const POLLERR = 0x8
export const POLLHUP = 0x10
const POLLNVAL = 0x20
/** POLLRDNORM and POLLWRNORM: the same as POLLIN and POLLOUT for these files. */
const POLLRDNORM = 0x40
const POLLWRNORM = 0x100

/** The events of one descriptor that hold now (POLLERR, POLLHUP and POLLNVAL whether asked for or not). */
function revents(task: Task, fd: number, events: number): number {
  if (fd < 0) return 0
  const f = task.files.get(fd)
  if (!f) return POLLNVAL
  let mask = f.inode.poll ? f.inode.poll(f) : POLLIN | POLLOUT
  if (mask & POLLIN) mask |= POLLRDNORM
  if (mask & POLLOUT) mask |= POLLWRNORM
  return mask & (events | POLLERR | POLLHUP | POLLNVAL)
}

/** timeoutNs < 0: wait for ever. */
function doPoll(
  ctx: SyscallContext,
  nr: number,
  fds: number,
  nfds: number,
  timeoutNs: number,
): SyscallResult {
  const { kernel, task } = ctx
  nfds >>>= 0 // an unsigned int
  if (BigInt(nfds) > task.rlimits[RLIMIT_NOFILE].cur) return -EINVAL
  const raw = copyFromUser(task.mm, fds, nfds * 8)
  const v = new DataView(raw.buffer)
  const scan = (write: boolean): number => {
    let ready = 0
    for (let i = 0; i < nfds; i++) {
      const r = revents(task, v.getInt32(i * 8, true), v.getInt16(i * 8 + 4, true))
      if (write) v.setInt16(i * 8 + 6, r, true)
      if (r !== 0) ready++
    }
    return ready
  }
  const now = kernel.machine.cycles(0)
  const restarted = task.restart?.nr === nr ? task.restart : null
  const ready = scan(true)
  const timedOut = timeoutNs === 0 || (restarted?.deadline !== undefined && now >= restarted.deadline)
  if (ready > 0 || timedOut) {
    task.restart = null
    // The results go out through user_write_access_begin: even none need the array in user space.
    if (!accessOk(fds, nfds * 8)) return -EFAULT
    copyToUser(task.mm, fds, raw)
    return ready
  }
  if (!restarted) task.restart = { nr, deadline: timeoutNs < 0 ? undefined : now + timeoutNs }
  const deadline = task.restart?.deadline
  return {
    wouldBlock: true,
    ready: () => scan(false) > 0 || (deadline !== undefined && kernel.machine.cycles(0) >= deadline),
    restartCode: ERESTARTNOHAND,
  }
}

export function sysPoll(ctx: SyscallContext, fds: number, nfds: number, timeoutMs: number): SyscallResult {
  const ms = timeoutMs | 0
  return doPoll(ctx, 7, fds, nfds, ms < 0 ? -1 : ms * 1e6)
}

/**
 * ppoll: the timeout is copied in (EFAULT) and must be a valid timespec
 * (EINVAL); then the signal mask's size (EINVAL) and the mask (EFAULT);
 * then do_sys_poll.
 */
export function sysPpoll(
  ctx: SyscallContext,
  fds: number,
  nfds: number,
  tsp: number,
  sigmask: number,
  sigsetsize: number,
): SyscallResult {
  let ns = -1
  if (tsp) {
    const sec = readUserU64(ctx.task.mm, tsp)
    const nsec = readUserU64(ctx.task.mm, tsp + 8)
    if (sec < 0 || nsec < 0 || nsec >= 1e9) return -EINVAL
    ns = sec * 1e9 + nsec
  }
  if (sigmask) {
    if (sigsetsize !== 8) return -EINVAL
    copyFromUser(ctx.task.mm, sigmask, 8)
  }
  return doPoll(ctx, 271, fds, nfds, ns)
}
