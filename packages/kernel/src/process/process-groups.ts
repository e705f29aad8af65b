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

/** setpgid(pid, pgid): the caller or one of its children, into a group of the same session. */
export function sysSetpgid(ctx: SyscallContext, pidArg: number, pgidArg: number): number {
  const pid = pidArg | 0
  const pgid0 = pgidArg | 0
  if (pgid0 < 0) return -EINVAL
  const self = ctx.kernel.tasks.get(ctx.task.tgid) ?? ctx.task
  const target = processOf(ctx, pid)
  if (!target) return -ESRCH
  const pgid = pgid0 === 0 ? target.tgid : pgid0
  if (target !== self) {
    if (target.parent?.tgid !== self.tgid) return -ESRCH
    if (target.sid !== self.sid) return -EPERM
    // A live child with vforkDone has exec'd (exit would have made it a zombie).
    if (target.vforkDone) return -EACCES
  }
  if (target.sid === target.tgid) return -EPERM // a session leader stays in its group
  if (pgid !== target.tgid) {
    const member = [...ctx.kernel.tasks.values()].some(
      (t) => t.state !== 'zombie' && t.pgid === pgid && t.sid === self.sid,
    )
    if (!member) return -EPERM
  }
  setIds(ctx, target.tgid, pgid)
  return 0
}

/** setsid(): a new session and group led by the caller, unless a group with its id already exists. */
export function sysSetsid(ctx: SyscallContext): number {
  const tgid = ctx.task.tgid
  for (const t of ctx.kernel.tasks.values()) if (t.state !== 'zombie' && t.pgid === tgid) return -EPERM
  setIds(ctx, tgid, tgid, tgid)
  return tgid
}
