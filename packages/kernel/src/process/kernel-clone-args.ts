// struct kernel_clone_args, as the guest's copy_process hands it over with
// HC_FORK: every way of creating a task (fork, vfork, clone, clone3) has been
// through the guest's sys_* -> kernel_clone by then, with its checks done.

import type { Kernel } from '../kernel.js'

export interface KernelCloneArgs {
  /** All 64 bits of flags (clone3's live above bit 31), without the exit signal. */
  flags: number
  childTid: number
  parentTid: number
  exitSignal: number
  /** The child's stack pointer (clone3's base + size already added by clone3_stack_valid). */
  stack: number
  tls: number
  /** The parent's pt_regs frame. */
  regs: number
}

/** Layout (guest include/linux/sched.h): flags, pidfd, child_tid, parent_tid, exit_signal (int), stack, stack_size, tls, regs. */
export function readKernelCloneArgs(kernel: Kernel, addr: number): KernelCloneArgs {
  const q = (i: number) => kernel.readKernel64(addr + 8 * i)
  return {
    flags: q(0), // below 2^34 once kernel_clone's checks have passed: exact
    childTid: q(2),
    parentTid: q(3),
    exitSignal: q(4) | 0,
    stack: q(5),
    tls: q(7),
    regs: q(8),
  }
}
