// SPDX-License-Identifier: MIT
/*
 * Sleeping on a wait queue (kernel/sched/wait.c): prepare_to_wait_event()
 * puts the task to sleep in @state unless what it waits for already holds
 * or a signal must interrupt it; schedule() switches away; a waker's
 * try_to_wake_up() makes it runnable; finish_wait() ends the sleep.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <asm/hypercall.h>

struct wait_queue_head host_wait_queue;

/*
 * Leaf. 1: the condition the host was told (by the leaf that returned
 * -EWOULDSLEEP) holds - no sleep. 0: current is now sleeping in @state.
 * Negative: a signal interrupts the sleep (signal_pending_state); the value
 * is the waiting call's restart code (-ERESTARTSYS for most, as Linux's).
 */
noinline long prepare_to_wait_event(struct wait_queue_head *wq_head, struct wait_queue_entry *wq_entry,
				    unsigned int state)
{
	(void)wq_head;
	wq_entry->private = current;
	return hypercall1(HC_PREPARE_TO_WAIT, state);
}

/* Leaf: current is TASK_RUNNING again and off the queue. */
noinline void finish_wait(struct wait_queue_head *wq_head, struct wait_queue_entry *wq_entry)
{
	(void)wq_head;
	(void)wq_entry;
	hypercall(HC_FINISH_WAIT, 0, 0, 0, 0, 0);
}

/* ___wait_event(): sleep until the host's condition holds; 0, or the restart code of a signal. */
noinline long wait_event_host(unsigned int state)
{
	struct wait_queue_entry wait = { 0 };
	long ret = 0;

	for (;;) {
		long r = prepare_to_wait_event(&host_wait_queue, &wait, state);

		if (r > 0)
			break;
		if (r < 0) {
			ret = r;
			break;
		}
		schedule();
	}
	finish_wait(&host_wait_queue, &wait);
	return ret;
}
