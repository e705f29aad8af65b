// SPDX-License-Identifier: MIT
/*
 * fork, vfork, clone. Every one of them passes through do_fork (the old
 * name and signature the kprobe and jprobe samples use) and kernel_clone
 * (the modern one); the host copies the task and its address space.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/err.h>
#include <linux/syscalls.h>
#include <linux/wait.h>
#include <asm/uaccess.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * Leaf: create the child (copy_process(pid, trace, node, args), the
 * signature bpftrace users know). The host reads *args and copies the
 * parent: its address space, files, signal handlers, and a kernel stack
 * whose pt_regs are a copy of args->regs with rax = 0, under which an
 * inactive_task_frame returns to ret_from_fork. The child is TASK_NEW until
 * wake_up_new_task. Returns it, or an ERR_PTR.
 */
noinline struct task_struct *copy_process(void *pid, int trace, int node, struct kernel_clone_args *args)
{
	(void)pid;
	(void)trace;
	(void)node;
	return (struct task_struct *)hypercall1(HC_FORK, (unsigned long)args);
}

/* Leaf: 0 once a vfork child has exec'd or exited (complete_vfork_done), else -EWOULDSLEEP. */
noinline long vfork_done(struct task_struct *child)
{
	return hypercall1(HC_VFORK_WAIT, child);
}

/* The vfork parent sleeps until the child lets go of its memory; only a fatal signal ends the wait. */
static noinline int wait_for_vfork_done(struct task_struct *child)
{
	return (int)wait_event_host_call(vfork_done(child), TASK_KILLABLE);
}

/* The flag combinations Linux rejects before doing any work, then copy, wake, and (vfork) wait. */
noinline long kernel_clone(struct kernel_clone_args *args)
{
	u64 clone_flags = args->flags;
	struct task_struct *p;
	long nr;

	if ((clone_flags & CLONE_PIDFD) && (clone_flags & CLONE_PARENT_SETTID) &&
	    args->pidfd == args->parent_tid)
		return -EINVAL;
	if ((clone_flags & (CLONE_NEWNS | CLONE_FS)) == (CLONE_NEWNS | CLONE_FS))
		return -EINVAL;
	if ((clone_flags & CLONE_THREAD) && !(clone_flags & CLONE_SIGHAND))
		return -EINVAL;
	if ((clone_flags & CLONE_SIGHAND) && !(clone_flags & CLONE_VM))
		return -EINVAL;

	p = copy_process(NULL, 0, -1, args);
	if (IS_ERR(p))
		return PTR_ERR(p);
	nr = p->pid;
	wake_up_new_task(p);
	if (clone_flags & CLONE_VFORK)
		wait_for_vfork_done(p);
	return nr;
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

/*
 * clone3: copy_struct_from_user - a larger struct than this kernel knows is
 * fine if the unknown tail is zero - then the checks of
 * copy_clone_args_from_user, clone3_args_valid and clone3_stack_valid.
 */
static noinline long copy_clone_args_from_user(struct kernel_clone_args *kargs,
						struct clone_args __user *uargs, size_t usize)
{
	struct clone_args args = { 0 };
	unsigned char tail[64];

	if (usize > PAGE_SIZE)
		return -E2BIG;
	if (usize < CLONE_ARGS_SIZE_VER0)
		return -EINVAL;
	for (size_t off = sizeof(args); off < usize; off += sizeof(tail)) {
		size_t n = usize - off < sizeof(tail) ? usize - off : sizeof(tail);

		if (copy_from_user(tail, (const char __user *)uargs + off, n))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (tail[i])
				return -E2BIG;
	}
	if (copy_from_user(&args, uargs, usize < sizeof(args) ? usize : sizeof(args)))
		return -EFAULT;
	if (args.set_tid_size > 32 || (!args.set_tid && args.set_tid_size))
		return -EINVAL;
	if (args.set_tid && !args.set_tid_size)
		return -EINVAL;
	/* exit_signal: no bits above CSIGNAL, and a valid signal (valid_signal: <= _NSIG). */
	if ((args.exit_signal & ~((u64)CSIGNAL)) || args.exit_signal > 64)
		return -EINVAL;
	*kargs = (struct kernel_clone_args){
		.flags = args.flags,
		.pidfd = (int __user *)args.pidfd,
		.child_tid = (int __user *)args.child_tid,
		.parent_tid = (int __user *)args.parent_tid,
		.exit_signal = (int)args.exit_signal,
		.stack = args.stack,
		.stack_size = args.stack_size,
		.tls = args.tls,
	};
	/* Choosing the pid (set_tid) and cgroups are not provided here. */
	if (args.set_tid_size || (args.flags & CLONE_INTO_CGROUP))
		return -EINVAL;
	return 0;
}

static noinline bool clone3_stack_valid(struct kernel_clone_args *kargs)
{
	if (kargs->stack == 0)
		return kargs->stack_size == 0;
	if (kargs->stack_size == 0 || !access_ok((void __user *)kargs->stack, kargs->stack_size))
		return false;
	kargs->stack += kargs->stack_size;	/* the stack grows down */
	return true;
}

static noinline bool clone3_args_valid(struct kernel_clone_args *kargs)
{
	if (kargs->flags & ~(CLONE_LEGACY_FLAGS | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP))
		return false;
	if ((kargs->flags & (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND)) == (CLONE_SIGHAND | CLONE_CLEAR_SIGHAND))
		return false;
	if ((kargs->flags & (CLONE_THREAD | CLONE_PARENT)) && kargs->exit_signal)
		return false;
	if (kargs->flags & (CLONE_DETACHED | (CSIGNAL & ~CLONE_NEWTIME)))
		return false;
	return clone3_stack_valid(kargs);
}

noinline long sys_clone3(struct clone_args __user *uargs, size_t size)
{
	struct kernel_clone_args kargs;
	long err = copy_clone_args_from_user(&kargs, uargs, size);

	if (err)
		return err;
	if (!clone3_args_valid(&kargs))
		return -EINVAL;
	/* pidfds and namespaces are not provided here. */
	if (kargs.flags & (CLONE_PIDFD | CLONE_NEW_MASK))
		return -EINVAL;
	kargs.regs = current_pt_regs();
	return kernel_clone(&kargs);
}
