// SPDX-License-Identifier: MIT
/*
 * exit and exit_group. The host reaps the task; the frame it leaves behind
 * belongs to whatever runs next on this CPU, so do_exit never returns: it
 * abandons the C call chain and leaves through that frame.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * Leaf: the host releases the task, wakes its parent, and rewrites the
 * frame (and CR3) to the next task's context or to the idle loop. exit vs.
 * exit_group is regs->orig_ax. Returns the next task_struct (or 0).
 */
noinline struct task_struct *exit_notify(long code, struct pt_regs *regs)
{
	return (struct task_struct *)hypercall2(HC_EXIT, code, regs);
}

static noinline __noreturn void do_task_dead(struct task_struct *prev, struct task_struct *next,
					      struct pt_regs *regs)
{
	if (!next)
		next = current;
	__switch_to(prev, next);
	return_to_regs(regs);
}

/* code is a wait(2) status: (status & 0xff) << 8. */
noinline __noreturn void do_exit(long code)
{
	struct pt_regs *regs = current_pt_regs();
	struct task_struct *prev = current;
	struct task_struct *next;

	next = exit_notify(code, regs);
	do_task_dead(prev, next, regs);
}

noinline __noreturn void do_group_exit(int exit_code)
{
	do_exit(exit_code);
}

noinline __noreturn void sys_exit(int error_code)
{
	do_exit((error_code & 0xff) << 8);
}

noinline __noreturn void sys_exit_group(int error_code)
{
	do_group_exit((error_code & 0xff) << 8);
}
