// execve's host half (fs/exec.c): the guest's do_execveat_common ...
// load_elf_binary reach it through HC_EXECVE with the file name; the task's
// program is replaced and its pt_regs start the new one.

import { newX87State, restoreX87State, x87State } from '@probekit/x86-emu'
import { HC_EXECVE } from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { taskRoot } from '../fs/fs-struct.js'
import { saveExecLayout } from '../fs/proc/exec-layout.js'
import type { Kernel } from '../kernel.js'
import { readUserU64, strncpyFromUser } from '../mm/user-memory.js'
import { capBprmCreds } from '../process/capability.js'
import { rlimitStackBytes } from '../process/rlimits.js'
import { exitRobustList } from '../process/robust-futex.js'
import type { SyscallContext } from '../syscalls.js'
import { openExec, resolveBinary } from './binfmt.js'
import { ExecError, loadExecutable } from './exec-loader.js'

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
  const argv = readStringArray(ctx, frame.get('si'))
  const envp = readStringArray(ctx, frame.get('dx'))
  const root = taskRoot(kernel.vfs, task)
  const bin = resolveBinary(kernel.vfs, path, argv, task.cwd, root)
  if (typeof bin === 'number') return bin
  const mm = kernel.newMm()
  mm.stackLimit = rlimitStackBytes(task.rlimits)
  let prog: ReturnType<typeof loadExecutable>
  try {
    prog = loadExecutable(mm, bin, { filename: path, argv: bin.argv, envp }, cpu, (p) =>
      openExec(kernel.vfs, p, task.cwd, root),
    )
  } catch (e) {
    // Not loadable, or out of memory: the old program goes on, the new image's pages go back.
    mm.release()
    if (e instanceof ExecError) return -e.errno
    throw e
  }
  // /proc/PID/exe is the file that runs (a script's interpreter).
  if (bin.file) saveExecLayout(kernel.vfs, task.cwd, bin.path, bin.file, mm, prog.sp)
  // exec_mm_release: robust futexes are released and the rseq registration dropped with the old image.
  exitRobustList(kernel, task)
  capBprmCreds(task)
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

export function registerExecve(kernel: Kernel): void {
  kernel.machine.registerHypercall(HC_EXECVE, (c) => {
    const path = kernel.readKernelString(arg(c, 0))
    const task = kernel.current(c)
    const r = kernel.entry.withContext(c, arg(c, 1), (ctx) => execTask(ctx, path))
    if (r === 0) {
      kernel.tracehooks.reportExec(task, path, kernel.frame(arg(c, 1)))
      // uprobe_mmap for the new image's text (after the exec report: tracers of the old image are done with it).
      for (const vma of [...task.mm.vmas]) kernel.notifyMmap(task, vma)
    }
    kernel.signals.recalcSigpending(task)
    kernel.sched.noteWakeups(c) // a vfork parent
    ret(c, r)
  })
}
