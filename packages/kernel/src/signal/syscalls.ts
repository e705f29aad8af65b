// The host's system calls for signal actions, masks, sigsuspend, sigreturn, sigaltstack, kill (kernel/signal.c):
// registered into the kernel's syscall table by syscalls.ts.

import { EINVAL, EPERM, ERESTARTNOHAND, ESRCH } from '../errno.js'
import { copyFromUser, copyToUser } from '../mm/user-memory.js'
import type { Task } from '../sched/task.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { bit, NSIG, restoreRtFrame, SIGKILL, SIGSEGV, SIGSTOP, sanitizeMask } from './signals.js'

/** Is a signal pending that the current mask lets through? */
function deliverable(task: Task): boolean {
  for (const sig of task.pending.keys()) if ((task.blocked & bit(sig)) === 0n) return true
  return false
}
function sendSignal(ctx: SyscallContext, target: Task, sig: number, code = 0): number {
  if (sig < 0 || sig > NSIG) return -EINVAL
  if (sig === 0) return 0
  ctx.kernel.signals.sendSignal(ctx.cpu, target, { signo: sig, code, pid: ctx.task.tgid })
  return 0
}

export function registerSignalSyscalls(def: SyscallDef): void {
  def(13, 'rt_sigaction', ({ task }, sig, act, oldact, sigsetsize) => {
    if (sig < 1 || sig > NSIG || sigsetsize !== 8) return -EINVAL
    const a = task.sighand.actions[sig]
    if (oldact) {
      const b = new Uint8Array(32)
      const v = new DataView(b.buffer)
      v.setBigUint64(0, BigInt.asUintN(64, BigInt(a.handler)), true)
      v.setBigUint64(8, BigInt(a.flags >>> 0), true)
      v.setBigUint64(16, BigInt.asUintN(64, BigInt(a.restorer)), true)
      v.setBigUint64(24, a.mask, true)
      copyToUser(task.mm, oldact, b)
    }
    if (act) {
      if (sig === SIGKILL || sig === SIGSTOP) return -EINVAL
      const v = new DataView(copyFromUser(task.mm, act, 32).buffer)
      a.handler = Number(BigInt.asIntN(64, v.getBigUint64(0, true)))
      a.flags = Number(v.getBigUint64(8, true) & 0xffffffffn)
      a.restorer = Number(BigInt.asIntN(64, v.getBigUint64(16, true)))
      a.mask = sanitizeMask(v.getBigUint64(24, true))
    }
    return 0
  })
  def(14, 'rt_sigprocmask', ({ task }, how, set, oldset, sigsetsize) => {
    if (sigsetsize !== 8) return -EINVAL
    const old = task.blocked
    if (set) {
      const m = new DataView(copyFromUser(task.mm, set, 8).buffer).getBigUint64(0, true)
      if (how === 0) task.blocked = sanitizeMask(old | m)
      else if (how === 1) task.blocked = sanitizeMask(old & ~m)
      else if (how === 2) task.blocked = sanitizeMask(m)
      else return -EINVAL
    }
    if (oldset) {
      const b = new Uint8Array(8)
      new DataView(b.buffer).setBigUint64(0, old, true)
      copyToUser(task.mm, oldset, b)
    }
    return 0
  })
  def(127, 'rt_sigpending', ({ task }, set) => {
    let m = 0n
    for (const sig of task.pending.keys()) m |= bit(sig)
    const b = new Uint8Array(8)
    new DataView(b.buffer).setBigUint64(0, m & task.blocked, true)
    copyToUser(task.mm, set, b)
    return 0
  })
  def(130, 'rt_sigsuspend', ({ task }, mask, size) => {
    if (size !== 8) return -EINVAL
    if (task.savedSigmask === null) task.savedSigmask = task.blocked
    task.blocked = sanitizeMask(new DataView(copyFromUser(task.mm, mask, 8).buffer).getBigUint64(0, true))
    // As Linux's sigsuspend: -ERESTARTNOHAND however the signal came (already pending, or while asleep);
    // the handler's frame turns it into EINTR on the way out, with the old mask saved.
    if (deliverable(task)) return -ERESTARTNOHAND
    return { wouldBlock: true, ready: () => false, restartCode: ERESTARTNOHAND } // only a signal wakes it
  })
  def(34, 'pause', ({ task }) =>
    deliverable(task)
      ? -ERESTARTNOHAND
      : { wouldBlock: true, ready: () => false, restartCode: ERESTARTNOHAND },
  )
  def(15, 'rt_sigreturn', ({ kernel, cpu, task, frame }) => {
    const mask = restoreRtFrame(task, frame, cpu)
    if (mask === null) {
      kernel.signals.killTask(cpu, task, SIGSEGV)
      return 0
    }
    task.blocked = sanitizeMask(mask)
    return frame.get('ax')
  })
  def(131, 'sigaltstack', ({ task, frame }, ss, oldss) => {
    const SS_ONSTACK = 1
    const SS_DISABLE = 2
    const sp = frame.get('sp')
    const alt = task.altStack
    const onAlt = alt.size > 0 && sp > alt.sp && sp <= alt.sp + alt.size
    if (oldss) {
      const b = new Uint8Array(24)
      const v = new DataView(b.buffer)
      v.setBigUint64(0, BigInt.asUintN(64, BigInt(alt.sp)), true)
      v.setInt32(8, alt.size === 0 ? SS_DISABLE : onAlt ? SS_ONSTACK : 0, true)
      v.setBigUint64(16, BigInt(alt.size), true)
      copyToUser(task.mm, oldss, b)
    }
    if (ss) {
      if (onAlt) return -EPERM
      const v = new DataView(copyFromUser(task.mm, ss, 24).buffer)
      const flags = v.getInt32(8, true)
      if ((flags & ~(SS_DISABLE | 0x80000000)) !== 0) return -EINVAL
      if ((flags & SS_DISABLE) !== 0) task.altStack = { sp: 0, size: 0 }
      else {
        const size = Number(v.getBigUint64(16, true))
        if (size < 2048) return -12 // ENOMEM: below MINSIGSTKSZ
        task.altStack = { sp: Number(BigInt.asIntN(64, v.getBigUint64(0, true))), size }
      }
    }
    return 0
  })

  // kill of a pid, tkill and tgkill run in the guest (kernel/signal.c) down to send_signal's leaf;
  // kill of a process group (0: the caller's, -PGID) or of -1 (everyone) comes here, as
  // kill_something_info: 0 when one process got it, else -ESRCH (or the last error).
  def(62, 'kill', (ctx, pidArg, sig) => {
    const pid = pidArg | 0 // pid_t: an int, whatever the register's upper half holds
    if (pid > 0) {
      const t = ctx.kernel.tasks.get(pid)
      return t && t.state !== 'zombie' ? sendSignal(ctx, t, sig) : -ESRCH
    }
    if (sig < 0 || sig > NSIG) return -EINVAL
    if (pid === -0x8000_0000) return -ESRCH // INT_MIN: its negation is not a pid
    const pgid = pid === 0 ? ctx.task.pgid : -pid
    let sent = 0
    let err = -ESRCH
    for (const t of ctx.kernel.tasks.values()) {
      // One delivery per process (group_send_sig_info), to its leader, never to a zombie.
      if (t.pid !== t.tgid || t.state === 'zombie') continue
      // kill(-1): everyone but init and the caller's own process.
      if (pid === -1 ? t.tgid === 1 || t.tgid === ctx.task.tgid : t.pgid !== pgid) continue
      const r = sendSignal(ctx, t, sig)
      if (r === 0) sent++
      else err = r
    }
    return sent > 0 ? 0 : err
  })
}
