/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_NOTIFIER_H
#define _LINUX_NOTIFIER_H

#include <abi.h>
#include <linux/types.h>

/*
 * A notifier block. The layout is part of the ABI (abi.h NB_*): the host
 * registers its die notifiers by linking host_notifier_blocks[] entries
 * into die_chain in guest memory.
 */
struct notifier_block;
typedef int (*notifier_fn_t)(struct notifier_block *nb, unsigned long action, void *data);

struct notifier_block {
	notifier_fn_t notifier_call;
	struct notifier_block *next;
	int priority;
	int host_index;		/* probekit: which host callback this block stands for */
};

/* Linux has a spinlock here; the host edits the list only between instructions. */
struct atomic_notifier_head {
	struct notifier_block *head;
};

_Static_assert(offsetof(struct notifier_block, notifier_call) == NB_NOTIFIER_CALL, "nb");
_Static_assert(offsetof(struct notifier_block, next) == NB_NEXT, "nb");
_Static_assert(offsetof(struct notifier_block, priority) == NB_PRIORITY, "nb");
_Static_assert(offsetof(struct notifier_block, host_index) == NB_HOST_INDEX, "nb");
_Static_assert(sizeof(struct notifier_block) == NB_SIZE, "nb");

int atomic_notifier_call_chain(struct atomic_notifier_head *nh, unsigned long val, void *v);

#endif
