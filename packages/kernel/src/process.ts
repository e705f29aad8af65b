// Process lifetime: fork/vfork/clone, execve, exit and exit_group, wait4,
// and futex wait/wake. Called from the hypercalls the guest's do_fork,
// do_execve and do_exit make, and from the host syscall table.

import { ECHILD, ENOENT, ESRCH } from './errno.js'
import { loadExecutable } from './exec-loader.js'
import type { SyscallContext, SyscallResult } from './syscalls.js'
import { Task } from './task.js'
import { copyFromUser, readUserU32, readUserU64, strncpyFromUser, writeUserU32 } from './user-memory.js'
import { RegularFile } from './vfs.js'

export const CLONE_VM = 0x100
export const CLONE_FILES = 0x400
export const CLONE_SIGHAND = 0x800
export const CLONE_VFORK = 0x4000
export const CLONE_PARENT = 0x8000
export const CLONE_THREAD = 0x10000
export const CLONE_SETTLS = 0x80000
export const CLONE_PARENT_SETTID = 0x100000
export const CLONE_CHILD_CLEARTID = 0x200000
export const CLONE_CHILD_SETTID = 0x1000000

/** do_fork's host half: a new task that returns 0 from the same syscall. */
export function forkTask(
  ctx: SyscallContext,
  flags: number,
  stack: number,
  parentTid: number,
  childTid: number,
): number {
  const { kernel, task: parent, frame } = ctx
  const pid = kernel.allocPid()
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
  child.cwd = parent.cwd
  child.umask = parent.umask
  frame.save(child.regs)
  child.setReg('ax', 0)
  if (stack) child.setReg('sp', stack)
  child.fsBase = (flags & CLONE_SETTLS) !== 0 ? frame.get('r8') : ctx.cpu.fsBase
  child.gsBase = ctx.cpu.kernelGsBase
  if ((flags & CLONE_PARENT_SETTID) !== 0 && parentTid) writeUserU32(parent.mm, parentTid, pid)
  if ((flags & CLONE_CHILD_SETTID) !== 0 && childTid) writeUserU32(mm, childTid, pid)
  if ((flags & CLONE_CHILD_CLEARTID) !== 0) child.clearChildTid = childTid
  child.lastRan = ctx.cpu.instructions
  realParent?.children.push(child)
  kernel.tasks.set(pid, child)
  kernel.attachGuestTask(child)
  if ((flags & CLONE_VFORK) !== 0) {
    // The parent sleeps (its syscall already returning the pid) until the child execs or exits.
    parent.state = 'parked'
    parent.waitCondition = () => child.vforkDone
  }
  kernel.requestReschedule(ctx.cpu)
  return pid
}

function readStringArray(ctx: SyscallContext, addr: number): string[] {
  const out: string[] = []
  if (addr === 0) return out
  for (let i = 0; i < 4096; i++) {
    const p = readUserU64(ctx.task.mm, addr + 8 * i)
    if (p === 0) return out
    const s = strncpyFromUser(ctx.task.mm, p, 131072)
    if (s === null) throw new RangeError('argument too long')
    out.push(s)
  }
  throw new RangeError('too many arguments')
}

/** do_execve's host half: replace the task's program; the frame then starts it. */
export function execTask(ctx: SyscallContext, path: string): number {
  const { kernel, task, frame, cpu } = ctx
  const node = kernel.vfs.lookup(path)
  if (typeof node === 'number') return node
  if (!(node instanceof RegularFile)) return -13
  const argv = readStringArray(ctx, frame.get('si'))
  const envp = readStringArray(ctx, frame.get('dx'))
  const oldMm = task.mm
  const mm = kernel.newMm()
  const prog = loadExecutable(mm, node.contents(), { filename: path, argv, envp }, cpu, {
    pageCache: kernel.pageCache,
    file: node,
  })
  task.mm = mm
  oldMm.release()
  cpu.setCr3(mm.space.root)
  for (const f of [
    'r15',
    'r14',
    'r13',
    'r12',
    'bp',
    'bx',
    'r11',
    'r10',
    'r9',
    'r8',
    'ax',
    'cx',
    'dx',
    'si',
    'di',
  ] as const)
    frame.set(f, 0)
  frame.set('ip', prog.entry)
  frame.set('sp', prog.sp)
  frame.set('cs', 0x33)
  frame.set('ss', 0x2b)
  frame.set('flags', 0x202)
  cpu.fsBase = 0
  task.fsBase = 0
  task.files.closeOnExec()
  task.sighand = task.sighand.clone()
  task.sighand.resetOnExec()
  task.pending.clear()
  task.comm = path.slice(path.lastIndexOf('/') + 1).slice(0, 15)
  kernel.updateGuestComm(task)
  task.vforkDone = true
  return 0
}

/** wait4(pid, wstatus, options, rusage). */
export function wait4(ctx: SyscallContext, pid: number, wstatus: number, options: number): SyscallResult {
  const { kernel, task } = ctx
  const WNOHANG = 1
  const leader = kernel.tasks.get(task.tgid) ?? task
  const kids = [...leader.children, ...(leader === task ? [] : task.children)].filter(
    (c) =>
      c.isThreadGroupLeader && (pid === -1 || pid === 0 || c.pid === pid || (pid < -1 && c.tgid === -pid)),
  )
  if (kids.length === 0) return -ECHILD
  const ready = () => kids.find((c) => c.state === 'zombie')
  const z = ready()
  if (!z) {
    if ((options & WNOHANG) !== 0) return 0
    return { wouldBlock: true, ready: () => ready() !== undefined }
  }
  if (wstatus) writeUserU32(task.mm, wstatus, z.exitSignal ? z.exitSignal & 0x7f : (z.exitCode & 0xff) << 8)
  kernel.reap(z)
  return z.pid
}

/** FUTEX_WAIT / FUTEX_WAKE (private or shared: one address space per key here). */
export function futex(
  ctx: SyscallContext,
  uaddr: number,
  op: number,
  val: number,
  val2 = 0,
  uaddr2 = 0,
  val3 = 0,
): SyscallResult {
  const { kernel, task } = ctx
  const cmd = op & 0x7f
  if (cmd === 0 || cmd === 9) {
    // FUTEX_WAIT(_BITSET)
    if (task.restart?.nr === 202 && task.restart.woken) {
      task.restart = null
      return 0
    }
    if (readUserU32(task.mm, uaddr) !== val) return -11 // EAGAIN
    task.restart = { nr: 202, woken: false }
    kernel.futexWaiters.push({ task, mm: task.mm, uaddr })
    const me = task
    return { wouldBlock: true, ready: () => me.restart?.woken === true }
  }
  if (cmd === 1 || cmd === 10) return kernel.futexWake(task.mm, uaddr, val)
  if (cmd === 3 || cmd === 4) {
    // FUTEX_REQUEUE / FUTEX_CMP_REQUEUE: wake val waiters, move up to val2 (the timeout slot) to uaddr2.
    if (cmd === 4 && readUserU32(task.mm, uaddr) !== val3) return -11
    const woken = kernel.futexWake(task.mm, uaddr, val)
    let moved = 0
    for (const w of kernel.futexWaiters) {
      if (moved >= val2) break
      if (w.mm === task.mm && w.uaddr === uaddr) {
        w.uaddr = uaddr2
        moved++
      }
    }
    return woken + moved
  }
  return -38 // ENOSYS: the PI variants are not implemented
}

export { copyFromUser, ENOENT, ESRCH }
