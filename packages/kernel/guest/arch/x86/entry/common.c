// SPDX-License-Identifier: MIT
/*
 * The C side of kernel entry and exit.
 */
#include <linux/errno.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

extern char __cpuidle_text_start[], __cpuidle_text_end[];

/*
 * The system call dispatcher. Linux indexes sys_call_table[]; a switch
 * does the same and gcc turns it into a jump table - an indirect jump
 * through .rodata, which an optimizing kprobe must recognise and refuse to
 * relocate. Numbers the guest does not implement go to the host whole.
 */
asmlinkage noinline void do_syscall_64(struct pt_regs *regs, int nr)
{
	long ret;

	local_irq_enable();	/* the kernel runs with interrupts on (but is not preemptible) */

	switch (nr) {
	case __NR_read:
		ret = sys_read(regs->di, (char __user *)regs->si, regs->dx);
		break;
	case __NR_write:
		ret = sys_write(regs->di, (const char __user *)regs->si, regs->dx);
		break;
	case __NR_open:
		ret = sys_open((const char __user *)regs->di, (int)regs->si, (umode_t)regs->dx);
		break;
	case __NR_close:
		ret = sys_close(regs->di);
		break;
	case __NR_mmap:
		ret = sys_mmap(regs->di, regs->si, regs->dx, regs->r10, regs->r8, regs->r9);
		break;
	case __NR_clone:
		ret = sys_clone(regs->di, regs->si, (int __user *)regs->dx,
				(int __user *)regs->r10, regs->r8);
		break;
	case __NR_clone3:
		ret = sys_clone3((struct clone_args __user *)regs->di, regs->si);
		break;
	case __NR_fork:
		ret = sys_fork();
		break;
	case __NR_vfork:
		ret = sys_vfork();
		break;
	case __NR_execve:
		ret = sys_execve((const char __user *)regs->di,
				 (const char __user *const __user *)regs->si,
				 (const char __user *const __user *)regs->dx);
		break;
	case __NR_exit:
		sys_exit((int)regs->di);		/* never returns */
	case __NR_exit_group:
		sys_exit_group((int)regs->di);	/* never returns */
	case __NR_openat:
		ret = sys_openat((int)regs->di, (const char __user *)regs->si, (int)regs->dx,
				 (umode_t)regs->r10);
		break;
	default:
		ret = sys_ni_host(regs);
		break;
	}
	/*
	 * The result goes into the frame. A host service that rewrote the frame
	 * (to another task, or a new program) returns the rax the frame wants.
	 */
	regs->ax = ret;

	syscall_exit_to_user_mode(regs);
}

/*
 * Return-to-user work: while the host wants another task on this CPU,
 * schedule(). Runs with interrupts off so no tick can set need_resched
 * after the last check.
 */
noinline void exit_to_user_mode(struct pt_regs *regs)
{
	while (this_cpu_read(need_resched) && user_mode(regs))
		schedule(regs);
}
NOKPROBE_SYMBOL(exit_to_user_mode);

noinline void syscall_exit_to_user_mode(struct pt_regs *regs)
{
	long ret = (long)regs->ax;

	/*
	 * A host service that would have to wait says "restart": point the frame
	 * back at the syscall instruction (2 bytes) with the original number, and
	 * let another task run meanwhile. Guest code never blocks.
	 */
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOINTR || ret == -ERESTARTNOHAND) {
		regs->ax = regs->orig_ax;
		regs->ip -= 2;
		this_cpu_write(need_resched, 1);
	}
	local_irq_disable();
	exit_to_user_mode(regs);
}

static __always_inline bool in_cpuidle_text(unsigned long ip)
{
	return ip >= (unsigned long)__cpuidle_text_start && ip < (unsigned long)__cpuidle_text_end;
}

/*
 * Called by common_interrupt_return after every exception and interrupt.
 * Going back to user mode: the same work as after a syscall. Going back to
 * the idle loop: this is the point where an idle CPU picks up a task - the
 * host rewrites the frame to that task's user context.
 */
asmlinkage noinline void irqentry_exit(struct pt_regs *regs)
{
	if (!user_mode(regs) && in_cpuidle_text(regs->ip) && this_cpu_read(need_resched))
		schedule(regs);
	if (user_mode(regs))
		exit_to_user_mode(regs);
}
NOKPROBE_SYMBOL(irqentry_exit);
