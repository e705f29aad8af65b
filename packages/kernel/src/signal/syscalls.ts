// The host's system calls for signal actions, masks, sigsuspend, sigreturn, sigaltstack, kill (kernel/signal.c):
// registered into the kernel's syscall table by syscalls.ts.

import { EINVAL, ENOMEM, EPERM, ERESTARTNOHAND, ESRCH } from '../errno.js'
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
  // rt_sigaction: the set's size, the new action copied in (EFAULT), then do_sigaction's signal check
  // (an int; SIGKILL and SIGSTOP keep theirs), the change, and the old action out (EFAULT).
  def(13, 'rt_sigaction', ({ task }, sigArg, act, oldact, sigsetsize) => {
    if (sigsetsize !== 8) return -EINVAL
    const next = act ? new DataView(copyFromUser(task.mm, act, 32).buffer) : null
    const sig = sigArg | 0
    if (sig < 1 || sig > NSIG || (next && (sig === SIGKILL || sig === SIGSTOP))) return -EINVAL
    const a = task.sighand.actions[sig]
    const old = new Uint8Array(32)
    const ov = new DataView(old.buffer)
    ov.setBigUint64(0, BigInt.asUintN(64, BigInt(a.handler)), true)
    ov.setBigUint64(8, BigInt(a.flags >>> 0), true)
    ov.setBigUint64(16, BigInt.asUintN(64, BigInt(a.restorer)), true)
    ov.setBigUint64(24, a.mask, true)
    if (next) {
      a.handler = Number(BigInt.asIntN(64, next.getBigUint64(0, true)))
      a.flags = Number(next.getBigUint64(8, true) & 0xffffffffn)
      a.restorer = Number(BigInt.asIntN(64, next.getBigUint64(16, true)))
      a.mask = sanitizeMask(next.getBigUint64(24, true))
    }
    if (oldact) copyToUser(task.mm, oldact, old)
    return 0
  })
  def(14, 'rt_sigprocmask', ({ task }, howArg, set, oldset, sigsetsize) => {
    const how = howArg | 0 // an int
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
  // rt_sigpending: a size past sigset_t is EINVAL; a smaller one gets that many bytes of the set.
  def(127, 'rt_sigpending', ({ task }, set, sigsetsize) => {
    if (sigsetsize < 0 || sigsetsize > 8) return -EINVAL
    let m = 0n
    for (const sig of task.pending.keys()) m |= bit(sig)
    const b = new Uint8Array(8)
    new DataView(b.buffer).setBigUint64(0, m & task.blocked, true)
    copyToUser(task.mm, set, b.subarray(0, sigsetsize))
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
  /**
   * sigaltstack (do_sigaltstack): the new stack is copied in first (EFAULT);
   * changing it while on it is EPERM, a mode other than 0, SS_ONSTACK or
   * SS_DISABLE (with SS_AUTODISARM) EINVAL, a request for what is there
   * already succeeds, a stack below MINSIGSTKSZ is ENOMEM. The old one is
   * written out only when all went well.
   */
  def(131, 'sigaltstack', ({ task, frame }, ss, oldss) => {
    const SS_ONSTACK = 1
    const SS_DISABLE = 2
    const SS_AUTODISARM = 0x80000000
    const MINSIGSTKSZ = 2048
    const sp = frame.get('sp')
    const alt = task.altStack
    // on_sig_stack, in unsigned longs (a stack at -1 of size 2^64-1 holds no sp); never with SS_AUTODISARM.
    const base = BigInt.asUintN(64, BigInt(alt.sp))
    const at = BigInt.asUintN(64, BigInt(sp))
    const size = alt.size >= 2 ** 64 ? (1n << 64n) - 1n : BigInt(alt.size)
    const onAlt = (alt.flags & SS_AUTODISARM) === 0 && at > base && at - base <= size
    const old = new Uint8Array(24)
    const ov = new DataView(old.buffer)
    ov.setBigUint64(0, BigInt.asUintN(64, BigInt(alt.sp)), true)
    ov.setInt32(8, (alt.size === 0 ? SS_DISABLE : onAlt ? SS_ONSTACK : 0) | (alt.flags & SS_AUTODISARM), true)
    ov.setBigUint64(16, BigInt(alt.size), true)
    if (ss) {
      const v = new DataView(copyFromUser(task.mm, ss, 24).buffer)
      const ssSp = Number(BigInt.asIntN(64, v.getBigUint64(0, true)))
      const flags = v.getUint32(8, true)
      const ssSize = Number(v.getBigUint64(16, true))
      if (onAlt) return -EPERM
      const mode = flags & ~SS_AUTODISARM
      if (mode !== SS_DISABLE && mode !== SS_ONSTACK && mode !== 0) return -EINVAL
      if (!(alt.sp === ssSp && alt.size === ssSize && alt.flags === flags)) {
        if (mode === SS_DISABLE) task.altStack = { sp: 0, size: 0, flags }
        else if (ssSize < MINSIGSTKSZ) return -ENOMEM
        else task.altStack = { sp: ssSp, size: ssSize, flags }
      }
    }
    if (oldss) copyToUser(task.mm, oldss, old)
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
