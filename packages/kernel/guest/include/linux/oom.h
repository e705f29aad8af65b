/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_OOM_H
#define _LINUX_OOM_H

#include <linux/types.h>
#include <abi.h>

struct task_struct;

/*
 * What the OOM killer decides with (include/linux/oom.h): Linux's fields
 * for the choice (totalpages, chosen, chosen_points), then the victim's
 * sizes that oom_kill_process reports, which Linux reads from its mm.
 */
struct oom_control {
	unsigned long totalpages;
	struct task_struct *chosen;
	long chosen_points;
	unsigned long total_vm;		/* kB */
	unsigned long anon_rss;		/* kB */
	unsigned long file_rss;		/* kB */
	unsigned long pgtables;		/* kB */
};

_Static_assert(__builtin_offsetof(struct oom_control, chosen) == OOM_CHOSEN, "oom_control");
_Static_assert(__builtin_offsetof(struct oom_control, pgtables) == OOM_PGTABLES, "oom_control");
_Static_assert(sizeof(struct oom_control) == OOM_CONTROL_SIZE, "oom_control");

bool out_of_memory(struct oom_control *oc);
void pagefault_out_of_memory(void);

#endif
