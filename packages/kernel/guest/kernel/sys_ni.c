// SPDX-License-Identifier: MIT
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/wait.h>
#include <asm/hypercall.h>

/* Leaf: the host's implementation of a system call (number in orig_ax, arguments in the frame). */
noinline long host_syscall(struct pt_regs *regs)
{
	return hypercall1(HC_SYSCALL, regs);
}

/* A host system call that said it must wait: sleep, ask again once woken, until it is done or a signal ends it. */
static noinline long sys_ni_host_wait(struct pt_regs *regs)
{
	long ret;

	do {
		ret = wait_event_host(TASK_INTERRUPTIBLE);
		if (ret)
			return ret;
		ret = host_syscall(regs);
	} while (ret == -EWOULDSLEEP);
	return ret;
}

/*
 * Every system call the guest does not implement itself: the host serves it
 * at once (the leaf's vmcall made inline here, as this is every such call's
 * path), or says it must wait (wait4, futex, nanosleep, poll, pause...):
 * then the task sleeps in the guest and asks again once woken.
 */
noinline long sys_ni_host(struct pt_regs *regs)
{
	long ret = hypercall1(HC_SYSCALL, regs);

	if (likely(ret != -EWOULDSLEEP))
		return ret;
	return sys_ni_host_wait(regs);
}
