// wait4 and waitid (kernel/exit.c's do_wait): a child's exit, stop or
// continue, reported once; a zombie collected is reaped.

import { ECHILD } from '../errno.js'
import { copyToUser, writeUserU32 } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallResult } from '../syscalls.js'

const WNOHANG = 1
const WUNTRACED = 2
const WEXITED = 4
const WCONTINUED = 8
const WNOWAIT = 0x1000000

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
      if (!(pid === -1 || pid === 0 || c.pid === pid || (pid < -1 && c.tgid === -pid))) continue
      any = true
      if (exited && c.state === 'zombie') return { child: c, kind: 'exited' }
      if ((options & WUNTRACED) !== 0 && c.state === 'stopped' && !c.stopReported)
        return { child: c, kind: 'stopped' }
      if ((options & WCONTINUED) !== 0 && !c.continueReported) return { child: c, kind: 'continued' }
    }
  return any ? null : -ECHILD
}

/** wait4(pid, wstatus, options, rusage). */
export function wait4(ctx: SyscallContext, pid: number, wstatus: number, options: number): SyscallResult {
  const { kernel, task } = ctx
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

/** waitid(idtype, id, infop, options): the same events, reported as a siginfo. */
export function waitid(
  ctx: SyscallContext,
  idtype: number,
  id: number,
  infop: number,
  options: number,
): SyscallResult {
  const pid = idtype === 0 ? -1 : idtype === 1 ? id : idtype === 2 ? -id : Number.NaN
  if (Number.isNaN(pid) || (options & (WEXITED | WUNTRACED | WCONTINUED)) === 0) return -22
  const ev = findChildEvent(ctx, pid, options, (options & WEXITED) !== 0)
  if (typeof ev === 'number') return ev
  if (ev === null) {
    if ((options & WNOHANG) !== 0) {
      if (infop) copyToUserZero(ctx, infop)
      return 0
    }
    return {
      wouldBlock: true,
      ready: () => findChildEvent(ctx, pid, options, (options & WEXITED) !== 0) !== null,
    }
  }
  const c = ev.child
  const info = new Uint8Array(128)
  const v = new DataView(info.buffer)
  v.setInt32(0, 17, true) // SIGCHLD
  const code = ev.kind === 'stopped' ? 5 : ev.kind === 'continued' ? 6 : c.exitSignal ? 2 : 1
  v.setInt32(8, code, true)
  v.setInt32(16, c.pid, true)
  v.setInt32(
    24,
    ev.kind === 'stopped' ? c.stopSignal : ev.kind === 'continued' ? 18 : c.exitSignal || c.exitCode,
    true,
  )
  if (infop) copyToUserBytes(ctx, infop, info)
  if ((options & WNOWAIT) === 0) {
    if (ev.kind === 'exited') ctx.kernel.exit.reap(c)
    else if (ev.kind === 'stopped') c.stopReported = true
    else c.continueReported = true
  }
  return 0
}

function copyToUserZero(ctx: SyscallContext, addr: number): void {
  copyToUserBytes(ctx, addr, new Uint8Array(128))
}
function copyToUserBytes(ctx: SyscallContext, addr: number, b: Uint8Array): void {
  copyToUser(ctx.task.mm, addr, b)
}
