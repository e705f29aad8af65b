// wait4 and waitid (kernel/exit.c's do_wait): a child's exit, stop or
// continue, reported once; a zombie collected is reaped.

import { EBADF, ECHILD, EINVAL, ESRCH } from '../errno.js'
import type { WouldBlock } from '../fs/files.js'
import { copyToUser, writeUserU32 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallResult } from '../syscalls.js'

const WNOHANG = 1
const WUNTRACED = 2
const WEXITED = 4
const WCONTINUED = 8
const WSTOPPED = WUNTRACED
const WNOWAIT = 0x1000000
const __WNOTHREAD = 0x20000000
const __WALL = 0x40000000
const __WCLONE = 0x80000000 | 0
const SIGCHLD = 17
const P_ALL = 0
const P_PID = 1
const P_PGID = 2
const P_PIDFD = 3

interface ChildEvent {
  child: Task
  kind: 'exited' | 'stopped' | 'continued'
}

/** The first reportable event among a task's children matching pid (wait4's pid rules). */
function findChildEvent(
  ctx: SyscallContext,
  pid: number,
  options: number,
  exited: boolean,
): ChildEvent | null | number {
  const { kernel, task } = ctx
  const leader = kernel.tasks.get(task.tgid) ?? task
  // No copies of the lists: a sleeping waiter is asked again at every wake-up, with every child there.
  let any = false
  for (const list of leader === task ? [leader.children] : [leader.children, task.children])
    for (const c of list) {
      if (!c.isThreadGroupLeader) continue
      // eligible_child: without __WALL, __WCLONE picks the children whose exit signal is not SIGCHLD.
      if ((options & __WALL) === 0 && (c.cloneExitSignal !== SIGCHLD) !== ((options & __WCLONE) !== 0))
        continue
      // pid > 0: that child; -1: any; 0: one in the caller's process group; < -1: one in group -pid.
      const pgid = pid === 0 ? task.pgid : -pid
      if (!(pid === -1 || c.pid === pid || (pid <= 0 && c.pgid === pgid))) continue
      any = true
      if (exited && c.state === 'zombie') return { child: c, kind: 'exited' }
      if ((options & WUNTRACED) !== 0 && c.state === 'stopped' && !c.stopReported)
        return { child: c, kind: 'stopped' }
      if ((options & WCONTINUED) !== 0 && !c.continueReported) return { child: c, kind: 'continued' }
    }
  return any ? null : -ECHILD
}

/** wait4(pid, wstatus, options, rusage): options are checked (EINVAL), then INT_MIN (ESRCH). */
export function wait4(ctx: SyscallContext, pid: number, wstatus: number, options: number): SyscallResult {
  const { kernel, task } = ctx
  options |= 0
  if ((options & ~(WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL)) !== 0) return -EINVAL
  if (pid === -0x8000_0000) return -ESRCH
  const ev = findChildEvent(ctx, pid, options, true)
  if (typeof ev === 'number') return ev
  if (ev === null) {
    if ((options & WNOHANG) !== 0) return 0
    return { wouldBlock: true, ready: () => findChildEvent(ctx, pid, options, true) !== null }
  }
  const z = ev.child
  let status: number
  if (ev.kind === 'stopped') {
    status = (z.stopSignal << 8) | 0x7f
    z.stopReported = true
  } else if (ev.kind === 'continued') {
    status = 0xffff
    z.continueReported = true
  } else status = z.exitSignal ? z.exitSignal & 0x7f : (z.exitCode & 0xff) << 8
  if (wstatus) writeUserU32(task.mm, wstatus, status)
  if (ev.kind === 'exited') kernel.exit.reap(z)
  return z.pid
}

/**
 * waitid(idtype, id, infop, options): the same events, reported as a
 * siginfo. kernel_waitid checks the options (EINVAL: an unknown bit, or none
 * of WEXITED, WSTOPPED, WCONTINUED), then the idtype and id; and whatever
 * it answers, infop (when given) is written: its si_signo, si_code, pid and
 * status, zeros when no child was reported, so a bad infop is EFAULT even
 * after an error.
 */
export function waitid(
  ctx: SyscallContext,
  idtype: number,
  id: number,
  infop: number,
  options: number,
): SyscallResult {
  const r = kernelWaitid(ctx, idtype | 0, id | 0, options | 0)
  if (typeof r !== 'number' && 'wouldBlock' in r) return r
  // si_signo, si_errno, si_code, then the pid, uid and status of the union: 28 bytes are written.
  const info = new Uint8Array(28)
  if (typeof r !== 'number') {
    const v = new DataView(info.buffer)
    v.setInt32(0, SIGCHLD, true)
    v.setInt32(8, r.code, true)
    v.setInt32(16, r.pid, true)
    v.setInt32(24, r.status, true)
  }
  if (infop) copyToUser(ctx.task.mm, infop, info)
  return typeof r === 'number' ? r : 0
}

interface WaitidEvent {
  code: number
  pid: number
  status: number
}

function kernelWaitid(
  ctx: SyscallContext,
  idtype: number,
  id: number,
  options: number,
): number | WaitidEvent | WouldBlock {
  const known = WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL
  if ((options & ~known) !== 0 || (options & (WEXITED | WSTOPPED | WCONTINUED)) === 0) return -EINVAL
  let pid: number
  if (idtype === P_ALL) pid = -1
  else if (idtype === P_PID) {
    if (id <= 0) return -EINVAL
    pid = id
  } else if (idtype === P_PGID) {
    if (id < 0) return -EINVAL
    pid = id === 0 ? -ctx.task.pgid : -id
  } else if (idtype === P_PIDFD)
    return id < 0 ? -EINVAL : -EBADF // no pidfds here
  else return -EINVAL
  const exited = (options & WEXITED) !== 0
  const ev = findChildEvent(ctx, pid, options, exited)
  if (typeof ev === 'number') return ev
  if (ev === null) {
    if ((options & WNOHANG) !== 0) return 0
    return { wouldBlock: true, ready: () => findChildEvent(ctx, pid, options, exited) !== null }
  }
  const c = ev.child
  const code = ev.kind === 'stopped' ? 5 : ev.kind === 'continued' ? 6 : c.exitSignal ? 2 : 1
  const status =
    ev.kind === 'stopped' ? c.stopSignal : ev.kind === 'continued' ? 18 : c.exitSignal || c.exitCode
  if ((options & WNOWAIT) === 0) {
    if (ev.kind === 'exited') ctx.kernel.exit.reap(c)
    else if (ev.kind === 'stopped') c.stopReported = true
    else c.continueReported = true
  }
  return { code, pid: c.pid, status }
}
