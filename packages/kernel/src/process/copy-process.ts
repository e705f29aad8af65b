// copy_process's host half (kernel/fork.c): the guest's kernel_clone ->
// copy_process hands over its struct kernel_clone_args with HC_FORK; the
// host copies the task (fork.ts) and the tracers hear of the child. A vfork
// parent waits here (wait_for_vfork_done) until the child execs or exits.

import { HC_FORK, HC_VFORK_WAIT } from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import type { Kernel } from '../kernel.js'
import type { SyscallContext } from '../syscalls.js'
import { forkTask } from './fork.js'
import { type KernelCloneArgs, readKernelCloneArgs } from './kernel-clone-args.js'

/** CLONE_CLEAR_SIGHAND (clone3 only): the child starts with default signal handlers. */
const CLONE_CLEAR_SIGHAND = 2 ** 32

/** The host half of copy_process: copy the task and its address space; the child's task_struct, or -errno. */
export function copyProcess(ctx: SyscallContext, args: KernelCloneArgs): number {
  const legacy = (args.flags % 2 ** 32) | args.exitSignal
  const pid = forkTask(ctx, legacy, args.stack, args.parentTid, args.childTid, args.tls)
  const child = ctx.kernel.tasks.get(pid)
  if (pid < 0 || !child) return pid
  if (Math.floor(args.flags / CLONE_CLEAR_SIGHAND) % 2 === 1) child.sighand.resetOnExec()
  ctx.kernel.tracehooks.reportClone(ctx.task, child, args.flags)
  return child.guestTask
}

export function registerCopyProcess(kernel: Kernel): void {
  const m = kernel.machine
  m.registerHypercall(HC_FORK, (c) => {
    const args = readKernelCloneArgs(kernel, arg(c, 0))
    ret(
      c,
      kernel.entry.withContext(c, args.regs, (ctx) => copyProcess(ctx, args)),
    )
  })
  m.registerHypercall(HC_VFORK_WAIT, (c) => {
    const child = kernel.guestTasks.lookup(arg(c, 0))
    if (!child) return ret(c, 0) // gone already: it let go of the memory long ago
    ret(
      c,
      child.vforkDone
        ? 0
        : kernel.wait.sleepOn(kernel.current(c), { wouldBlock: true, ready: () => child.vforkDone }),
    )
  })
}
