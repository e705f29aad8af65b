// SPDX-License-Identifier: MIT
/*
 * The scheduler's guest half. The run queues and the choice of the next
 * task are the host's (deterministic: least recently run first); the switch
 * itself is guest code, as in Linux: __schedule() -> pick_next_task() ->
 * context_switch() -> __switch_to_asm (stack to stack) -> __switch_to ->
 * finish_task_switch(). Every task has its own kernel stack, so a task that
 * sleeps simply stays inside schedule() until try_to_wake_up() makes it
 * runnable and some CPU switches back to it.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/irqflags.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

/*
 * Leaf: the host picks the task to run next on this CPU (prev itself if
 * nothing else may run) and marks it on_cpu, so no other CPU takes it
 * while its stack is still being left.
 */
noinline struct task_struct *pick_next_task(struct task_struct *prev)
{
	return (struct task_struct *)hypercall1(HC_PICK_NEXT_TASK, prev);
}

/* Leaf: a dead task's kernel stack goes back to the host (put_task_stack). */
noinline void put_task_stack(struct task_struct *tsk)
{
	hypercall1(HC_PUT_TASK_STACK, tsk);
}

/*
 * finish_task_switch: runs on the new task's stack, right after the switch.
 * prev's stack is no longer in use: another CPU may now pick prev, and if
 * prev died its stack can go.
 */
noinline struct task_struct *finish_task_switch(struct task_struct *prev)
{
	unsigned int prev_state = READ_ONCE(prev->__state);

	WRITE_ONCE(prev->on_cpu, 0);
	if (unlikely(prev_state == TASK_DEAD))
		put_task_stack(prev);
	return prev;
}

noinline struct task_struct *context_switch(struct task_struct *prev, struct task_struct *next)
{
	/* switch_to(prev, next, prev): we come back here as next, with the task we left in rax. */
	prev = __switch_to_asm(prev, next);
	barrier();
	return finish_task_switch(prev);
}

/*
 * __schedule: called with interrupts in any state; they are off across the
 * switch and each task gets its own flags back (they live on its stack).
 */
static noinline void __schedule(void)
{
	struct task_struct *prev = current;
	struct task_struct *next;
	unsigned long flags;

	local_irq_save(flags);		/* rq_lock_irqsave(): the run queues are the host's, the discipline Linux's */
	this_cpu_write(need_resched, 0);	/* clear_preempt_need_resched() */
	if (this_cpu_read(ttwu_pending))
		sched_ttwu_pending();
	next = pick_next_task(prev);
	if (likely(prev != next))
		context_switch(prev, next);
	local_irq_restore(flags);
}

noinline void schedule(void)
{
	do {
		__schedule();
	} while (this_cpu_read(need_resched));
}

/* The idle loop's way into the scheduler. */
noinline void schedule_idle(void)
{
	do {
		__schedule();
	} while (this_cpu_read(need_resched));
}

/* A new task's first code (from ret_from_fork): the switch that brought it here ends. */
asmlinkage noinline void schedule_tail(struct task_struct *prev)
{
	finish_task_switch(prev);
	local_irq_enable();
}

/*
 * do_task_dead: the host has made current a zombie (do_exit); switch away
 * for good. finish_task_switch on the next task frees this stack.
 */
noinline void __noreturn do_task_dead(void)
{
	__schedule();
	printk("do_task_dead: a dead task ran again\n");
	halt_forever();
}

/* Leaf: the host makes p runnable if it sleeps in one of the states asked for. */
noinline int ttwu_do_activate(struct task_struct *p, unsigned int state)
{
	return (int)hypercall2(HC_TTWU, p, state);
}

/*
 * try_to_wake_up: wake p if its state is one of @state; 1 if it was woken.
 * Every wake-up passes here: wake_up_process, a signal's wake-up, the
 * host's own events (a pipe written, a child exited, a clock expired) via
 * sched_ttwu_pending.
 */
noinline int try_to_wake_up(struct task_struct *p, unsigned int state, int wake_flags)
{
	(void)wake_flags;
	if (!(READ_ONCE(p->__state) & state))
		return 0;
	return ttwu_do_activate(p, state);
}

noinline int wake_up_process(struct task_struct *p)
{
	return try_to_wake_up(p, TASK_NORMAL, 0);
}

/* Leaf: the host queues a task copy_process made (TASK_NEW) on the run queues. */
noinline void wake_up_new_task(struct task_struct *p)
{
	hypercall1(HC_WAKE_UP_NEW_TASK, p);
}

/* Leaf: the next sleeper whose condition the host saw come true (or a signal interrupts), or NULL. */
noinline struct task_struct *ttwu_pending_next(void)
{
	return (struct task_struct *)hypercall(HC_TTWU_PENDING, 0, 0, 0, 0, 0);
}

/*
 * sched_ttwu_pending: the host's events (a write to a pipe, a child's exit,
 * a clock expiring, a signal) make sleepers ready; the host flags this CPU
 * and the guest wakes them, each through try_to_wake_up.
 */
noinline void sched_ttwu_pending(void)
{
	struct task_struct *p;

	this_cpu_write(ttwu_pending, 0);
	while ((p = ttwu_pending_next()))
		try_to_wake_up(p, TASK_NORMAL, 0);
}
