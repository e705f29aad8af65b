/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_WAIT_H
#define _LINUX_WAIT_H

#include <abi.h>
#include <linux/errno.h>
#include <linux/types.h>

struct task_struct;

/*
 * Wait queues. The host keeps who waits for what (its pipes, futexes,
 * children and clocks live in TypeScript), so a wait_queue_head here only
 * names a queue; the discipline is Linux's: prepare_to_wait_event(), check,
 * schedule(), finish_wait(), and wakers go through try_to_wake_up().
 */
struct wait_queue_head {
	int unused;
};

struct wait_queue_entry {
	unsigned int flags;
	struct task_struct *private;	/* the sleeper */
};

/* The queue of tasks waiting on a host condition (a leaf returned -EWOULDSLEEP). */
extern struct wait_queue_head host_wait_queue;

long prepare_to_wait_event(struct wait_queue_head *wq_head, struct wait_queue_entry *wq_entry,
			   unsigned int state);
void finish_wait(struct wait_queue_head *wq_head, struct wait_queue_entry *wq_entry);
long wait_event_host(unsigned int state);

/*
 * Call a host leaf until it stops saying -EWOULDSLEEP, sleeping in between:
 * the leaf told the host what the task waits for; the task is woken when
 * that holds. If a signal cuts the sleep short the leaf's own restart code
 * comes back (-ERESTARTSYS, -ERESTARTNOHAND, ...), as Linux's wait loops
 * return it.
 */
#define wait_event_host_call(leaf, state) ({					\
	long __ret;								\
	while ((__ret = (leaf)) == -EWOULDSLEEP) {				\
		long __int = wait_event_host(state);				\
		if (__int) {							\
			__ret = __int;						\
			break;							\
		}								\
	}									\
	__ret; })

#endif
