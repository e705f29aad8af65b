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

/*
 * Every system call the guest does not implement itself. One that must
 * wait (wait4, futex, nanosleep, poll, pause...) sleeps here, in the guest,
 * and asks the host again once woken; a signal ends the sleep with the
 * call's restart code.
 */
noinline long sys_ni_host(struct pt_regs *regs)
{
	return wait_event_host_call(host_syscall(regs), TASK_INTERRUPTIBLE);
}
