/* SPDX-License-Identifier: MIT */
/*
 * Tracehooks (include/linux/tracehook.h): where a task reports to whoever
 * traces it. The reports themselves are host leaves; a tracer may hold the
 * task at one (TASK_TRACED), and it waits here until let go.
 */
#ifndef _LINUX_TRACEHOOK_H
#define _LINUX_TRACEHOOK_H

#include <linux/compiler.h>
#include <linux/sched.h>
#include <asm/percpu.h>

/* A tracer holds the task here (TASK_TRACED) until it lets it go. */
static __always_inline void tracehook_stop(void)
{
	while (READ_ONCE(current->__state) == __TASK_TRACED)
		schedule();
}

#endif
