// Process groups and sessions (job control's bookkeeping): getpgrp,
// getpgid, setpgid, getsid, setsid, with Linux's permission rules. The ids
// belong to the process (every thread of it carries the same ones).

import { EACCES, EINVAL, EPERM, ESRCH } from '../errno.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext } from '../syscalls.js'

function processOf(ctx: SyscallContext, pid: number): Task | undefined {
  const t = pid === 0 ? ctx.task : ctx.kernel.tasks.get(pid)
  if (!t || t.state === 'zombie') return undefined
  return ctx.kernel.tasks.get(t.tgid) ?? t
}

function setIds(ctx: SyscallContext, tgid: number, pgid: number, sid?: number): void {
  for (const t of ctx.kernel.tasks.values()) {
    if (t.tgid !== tgid) continue
    t.pgid = pgid
    if (sid !== undefined) t.sid = sid
  }
}

export function sysGetpgrp(ctx: SyscallContext): number {
  return ctx.task.pgid
}

export function sysGetpgid(ctx: SyscallContext, pid: number): number {
  const t = processOf(ctx, pid | 0)
  return t ? t.pgid : -ESRCH
}

export function sysGetsid(ctx: SyscallContext, pid: number): number {
  const t = processOf(ctx, pid | 0)
  return t ? t.sid : -ESRCH
}

/**
 * setpgid(pid, pgid), in ksys_setpgid's order: 0 means the caller (pid) and
 * pid (pgid), then a negative pgid is EINVAL; the task must exist (ESRCH, a
 * zombie too), lead its thread group (EINVAL), and be the caller or its
 * child (ESRCH) in its session (EPERM) that has not exec'd (EACCES); a
 * session leader stays (EPERM); another group must exist in the session.
 */
export function sysSetpgid(ctx: SyscallContext, pidArg: number, pgidArg: number): number {
  const self = ctx.kernel.tasks.get(ctx.task.tgid) ?? ctx.task
  const pid = pidArg | 0 || self.tgid
  const pgid = pgidArg | 0 || pid
  if (pgid < 0) return -EINVAL
  const p = pid > 0 ? ctx.kernel.tasks.get(pid) : undefined
  if (!p) return -ESRCH
  if (!p.isThreadGroupLeader) return -EINVAL
  if (p.parent?.tgid === self.tgid) {
    if (p.sid !== self.sid) return -EPERM
    // A live child with vforkDone has exec'd (exit would have made it a zombie).
    if (p.vforkDone && p.state !== 'zombie') return -EACCES
  } else if (p !== self) return -ESRCH
  if (p.sid === p.tgid) return -EPERM // a session leader stays in its group
  if (pgid !== pid) {
    const member = [...ctx.kernel.tasks.values()].some((t) => t.pgid === pgid && t.sid === self.sid)
    if (!member) return -EPERM
  }
  setIds(ctx, p.tgid, pgid)
  return 0
}

/** setsid(): a new session and group led by the caller, unless a group with its id already exists. */
export function sysSetsid(ctx: SyscallContext): number {
  const tgid = ctx.task.tgid
  for (const t of ctx.kernel.tasks.values()) if (t.state !== 'zombie' && t.pgid === tgid) return -EPERM
  setIds(ctx, tgid, tgid, tgid)
  return tgid
}
