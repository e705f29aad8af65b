// SPDX-License-Identifier: MIT
/*
 * The scheduler's guest half. Run queues, priorities and the choice of the
 * next task are the host's; the guest decides *when* (on the way back to
 * user mode, or from the idle loop) and performs the switch's bookkeeping.
 */
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/irqflags.h>
#include <asm/percpu.h>

/*
 * Leaf: the host picks the next task and, if it differs, rewrites the frame
 * to that task's saved context and switches CR3. Returns the next task's
 * guest task_struct pointer (0: the host left percpu.current_task as is).
 */
noinline struct task_struct *pick_next_task(struct pt_regs *regs)
{
	return (struct task_struct *)hypercall1(HC_SCHEDULE, regs);
}

noinline void context_switch(struct task_struct *prev, struct task_struct *next)
{
	__switch_to(prev, next);
}

static noinline void __schedule(struct pt_regs *regs)
{
	struct task_struct *prev = current;
	struct task_struct *next;
	unsigned long flags;

	/* rq_lock_irqsave(): the run queues are the host's, the discipline is Linux's. */
	local_irq_save(flags);
	this_cpu_write(need_resched, 0);	/* clear_preempt_need_resched() */
	next = pick_next_task(regs);
	if (!next)
		next = current;
	context_switch(prev, next);
	local_irq_restore(flags);
}

noinline void schedule(struct pt_regs *regs)
{
	__schedule(regs);
}
