// fork/vfork/clone's host half (kernel/fork.c): copy_process makes the new
// task from the parent's, called from the hypercall the guest's
// copy_process makes (see kernel-clone-args.ts).

import { copyX87State, x87State } from '@probekit/x86-emu'
import { EAGAIN } from '../errno.js'
import { writeUserU32 } from '../mm/user-memory.js'
import { rseqFork } from '../sched/rseq.js'
import { Task } from '../sched/task.js'
import type { SyscallContext } from '../syscalls.js'

export const CLONE_VM = 0x100
export const CLONE_FS = 0x200
export const CLONE_FILES = 0x400
export const CLONE_SIGHAND = 0x800
export const CLONE_VFORK = 0x4000
export const CLONE_PARENT = 0x8000
export const CLONE_THREAD = 0x10000
export const CLONE_SETTLS = 0x80000
export const CLONE_PARENT_SETTID = 0x100000
export const CLONE_CHILD_CLEARTID = 0x200000
export const CLONE_CHILD_SETTID = 0x1000000

/**
 * copy_process's host half: a new task (TASK_NEW until wake_up_new_task) whose kernel stack returns
 * 0 from the same syscall through ret_from_fork (tls: clone3's; clone passes it in r8). Its pid, or
 * -EAGAIN (too many tasks, or no pid free).
 */
export function forkTask(
  ctx: SyscallContext,
  flags: number,
  stack: number,
  parentTid: number,
  childTid: number,
  tls = ctx.frame.get('r8'),
): number {
  const { kernel, task: parent, frame } = ctx
  // The system-wide task limit, then a free pid: EAGAIN, as copy_process and alloc_pid fail.
  if (kernel.pids.tooMany(kernel.tasks)) return -EAGAIN
  const pid = kernel.allocPid()
  if (pid < 0) return pid
  const shareVm = (flags & CLONE_VM) !== 0
  const mm = shareVm ? parent.mm : parent.mm.fork(kernel.image.kernelSpace)
  if (shareVm) mm.users++
  else kernel.machine.flushTlb() // the parent's pages just became read-only (copy-on-write)
  const files = (flags & CLONE_FILES) !== 0 ? parent.files : parent.files.clone()
  if (files === parent.files) files.users++
  const thread = (flags & CLONE_THREAD) !== 0
  const realParent = thread || (flags & CLONE_PARENT) !== 0 ? parent.parent : parent
  const child = new Task(pid, thread ? parent.tgid : pid, realParent, parent.comm, mm, files)
  child.sighand = (flags & CLONE_SIGHAND) !== 0 ? parent.sighand : parent.sighand.clone()
  child.blocked = parent.blocked
  // The child starts with the parent's FPU/SSE registers as they are now (on this CPU).
  child.xmm.set(ctx.cpu.xmm)
  child.mxcsr = ctx.cpu.mxcsr
  child.x87 = copyX87State(x87State(ctx.cpu))
  // copy_fs: one fs_struct (root and cwd) for both with CLONE_FS (threads), else a copy.
  child.fs = (flags & CLONE_FS) !== 0 ? parent.fs : parent.fs.copy()
  child.caps = { ...parent.caps }
  child.umask = parent.umask
  rseqFork(parent, child, shareVm)
  child.pgid = parent.pgid
  child.sid = parent.sid
  child.rlimits = thread ? parent.rlimits : parent.rlimits.map((r) => ({ ...r }))
  // exit_signal: a thread has none (-1); a process the CSIGNAL byte of its clone flags (wait's __WCLONE).
  child.cloneExitSignal = thread ? -1 : flags & 0xff
  child.noNewPrivs = parent.noNewPrivs
  child.state = 'new'
  try {
    kernel.attachGuestTask(child)
    frame.save(child.regs)
    child.setReg('ax', 0)
    if (stack) child.setReg('sp', stack)
    child.fsBase = (flags & CLONE_SETTLS) !== 0 ? tls : ctx.cpu.fsBase
    child.gsBase = ctx.cpu.kernelGsBase
    if ((flags & CLONE_PARENT_SETTID) !== 0 && parentTid) writeUserU32(parent.mm, parentTid, pid)
    if ((flags & CLONE_CHILD_SETTID) !== 0 && childTid) writeUserU32(mm, childTid, pid)
    if ((flags & CLONE_CHILD_CLEARTID) !== 0) child.clearChildTid = childTid
  } catch (e) {
    // Out of memory for its stack or tables, or a bad tid pointer: what the child holds goes back.
    if (child.stackPhys >= 0) {
      kernel.guestTasks.freeStack(child)
      kernel.guestTasks.forget(child)
    }
    mm.release()
    files.release()
    throw e
  }
  child.lastRan = ctx.cpu.instructions
  realParent?.children.push(child)
  kernel.tasks.set(pid, child)
  return pid
}
