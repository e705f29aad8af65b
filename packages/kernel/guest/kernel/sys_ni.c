// SPDX-License-Identifier: MIT
#include <linux/syscalls.h>
#include <asm/hypercall.h>

/*
 * Every system call the guest does not implement itself: the host gets the
 * whole frame (number in orig_ax, arguments in di si dx r10 r8 r9) and
 * returns the result, which do_syscall_64 stores in regs->ax.
 */
noinline long sys_ni_host(struct pt_regs *regs)
{
	return hypercall1(HC_SYSCALL, regs);
}
