// Process lifetime: fork/vfork/clone, execve, exit and exit_group, wait4,
// and futex wait/wake. Called from the hypercalls the guest's do_fork,
// do_execve and do_exit make, and from the host syscall table.

import { copyX87State, newX87State, restoreX87State, x87State } from '@probekit/x86-emu'
import { ECHILD, ENOENT, ESRCH } from './errno.js'
import { loadExecutable } from './exec/exec-loader.js'
import { RegularFile } from './fs/vfs.js'
import {
  copyFromUser,
  copyToUser,
  readUserU32,
  readUserU64,
  strncpyFromUser,
  writeUserU32,
} from './mm/user-memory.js'
import { exitRobustList } from './robust-futex.js'
import { rseqFork } from './sched/rseq.js'
import { Task } from './sched/task.js'
import type { SyscallContext, SyscallResult } from './syscalls.js'

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

/**
 * copy_process's host half: a new task (TASK_NEW until wake_up_new_task) whose kernel stack returns
 * 0 from the same syscall through ret_from_fork (tls: clone3's; clone passes it in r8). Its pid.
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
  // The child starts with the parent's FPU/SSE registers as they are now (on this CPU).
  child.xmm.set(ctx.cpu.xmm)
  child.mxcsr = ctx.cpu.mxcsr
  child.x87 = copyX87State(x87State(ctx.cpu))
  child.cwd = parent.cwd
  child.umask = parent.umask
  rseqFork(parent, child, shareVm)
  child.pgid = parent.pgid
  child.sid = parent.sid
  child.rlimits = thread ? parent.rlimits : parent.rlimits.map((r) => ({ ...r }))
  child.state = 'new'
  kernel.attachGuestTask(child)
  frame.save(child.regs)
  child.setReg('ax', 0)
  if (stack) child.setReg('sp', stack)
  child.fsBase = (flags & CLONE_SETTLS) !== 0 ? tls : ctx.cpu.fsBase
  child.gsBase = ctx.cpu.kernelGsBase
  if ((flags & CLONE_PARENT_SETTID) !== 0 && parentTid) writeUserU32(parent.mm, parentTid, pid)
  if ((flags & CLONE_CHILD_SETTID) !== 0 && childTid) writeUserU32(mm, childTid, pid)
  if ((flags & CLONE_CHILD_CLEARTID) !== 0) child.clearChildTid = childTid
  child.lastRan = ctx.cpu.instructions
  realParent?.children.push(child)
  kernel.tasks.set(pid, child)
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
  const mm = kernel.newMm()
  const prog = loadExecutable(mm, node.contents(), { filename: path, argv, envp }, cpu, {
    pageCache: kernel.pageCache,
    file: node,
  })
  // exec_mm_release: robust futexes are released and the rseq registration dropped with the old image.
  exitRobustList(kernel, task)
  task.rseq = null
  const oldMm = task.mm
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
  cpu.xmm.fill(0)
  cpu.mxcsr = 0x1f80
  restoreX87State(x87State(cpu), newX87State())
  task.files.closeOnExec()
  task.sighand = task.sighand.clone()
  task.sighand.resetOnExec()
  task.pending.clear()
  task.comm = path.slice(path.lastIndexOf('/') + 1).slice(0, 15)
  kernel.updateGuestComm(task)
  task.vforkDone = true
  return 0
}

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
  const kids = [...leader.children, ...(leader === task ? [] : task.children)].filter(
    (c) =>
      c.isThreadGroupLeader && (pid === -1 || pid === 0 || c.pid === pid || (pid < -1 && c.tgid === -pid)),
  )
  if (kids.length === 0) return -ECHILD
  for (const c of kids) {
    if (exited && c.state === 'zombie') return { child: c, kind: 'exited' }
    if ((options & WUNTRACED) !== 0 && c.state === 'stopped' && !c.stopReported)
      return { child: c, kind: 'stopped' }
    if ((options & WCONTINUED) !== 0 && !c.continueReported) return { child: c, kind: 'continued' }
  }
  return null
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
  if (ev.kind === 'exited') kernel.reap(z)
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
    if (ev.kind === 'exited') ctx.kernel.reap(c)
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
    return {
      wouldBlock: true,
      ready: () => me.restart?.woken === true,
      // A signal ends the wait: this waiter must not take a later wake-up.
      cancel: () => {
        const i = kernel.futexWaiters.findIndex((w) => w.task === me)
        if (i >= 0) kernel.futexWaiters.splice(i, 1)
      },
    }
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
