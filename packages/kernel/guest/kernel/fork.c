// SPDX-License-Identifier: MIT
/*
 * fork, vfork, clone. Every one of them passes through do_fork (the old
 * name and signature the kprobe and jprobe samples use) and kernel_clone
 * (the modern one); the host copies the task and its address space.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * Leaf: create the child. The host copies the parent (frame included: the
 * child resumes from a copy of regs with rax = 0) and returns its pid.
 */
noinline long copy_process(struct kernel_clone_args *args)
{
	return hypercall5(HC_FORK, args->flags | (unsigned long)args->exit_signal, args->stack,
			  args->regs, args->parent_tid, args->child_tid);
}

/* The flag combinations Linux rejects before doing any work. */
noinline long kernel_clone(struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;

	if ((clone_flags & CLONE_PIDFD) && (clone_flags & CLONE_PARENT_SETTID) &&
	    args->pidfd == args->parent_tid)
		return -EINVAL;
	if ((clone_flags & (CLONE_NEWNS | CLONE_FS)) == (CLONE_NEWNS | CLONE_FS))
		return -EINVAL;
	if ((clone_flags & CLONE_THREAD) && !(clone_flags & CLONE_SIGHAND))
		return -EINVAL;
	if ((clone_flags & CLONE_SIGHAND) && !(clone_flags & CLONE_VM))
		return -EINVAL;

	return copy_process(args);
}

noinline long do_fork(unsigned long clone_flags, unsigned long stack_start, struct pt_regs *regs,
		      unsigned long stack_size, int __user *parent_tidptr, int __user *child_tidptr)
{
	struct kernel_clone_args args = {
		.flags = (clone_flags & ~CSIGNAL),
		.pidfd = parent_tidptr,
		.child_tid = child_tidptr,
		.parent_tid = parent_tidptr,
		.exit_signal = (int)(clone_flags & CSIGNAL),
		.stack = stack_start,
		.stack_size = stack_size,
		.tls = regs->r8,	/* clone(2)'s 5th argument, for CLONE_SETTLS */
		.regs = regs,
	};

	return kernel_clone(&args);
}

noinline long sys_fork(void)
{
	struct pt_regs *regs = current_pt_regs();

	return do_fork(SIGCHLD, regs->sp, regs, 0, NULL, NULL);
}

noinline long sys_vfork(void)
{
	struct pt_regs *regs = current_pt_regs();

	return do_fork(CLONE_VFORK | CLONE_VM | SIGCHLD, regs->sp, regs, 0, NULL, NULL);
}

noinline long sys_clone(unsigned long clone_flags, unsigned long newsp, int __user *parent_tidptr,
			int __user *child_tidptr, unsigned long tls)
{
	struct pt_regs *regs = current_pt_regs();

	(void)tls;		/* also in regs->r8, where do_fork takes it from */
	if (!newsp)
		newsp = regs->sp;
	return do_fork(clone_flags, newsp, regs, 0, parent_tidptr, child_tidptr);
}
