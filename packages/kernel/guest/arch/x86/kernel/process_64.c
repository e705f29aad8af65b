// SPDX-License-Identifier: MIT
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/percpu.h>

/*
 * __switch_to: the architecture half of a context switch. In Linux it
 * switches FS/GS bases, the FPU and the TSS stack pointer; here the host has
 * already switched the frame, CR3, FS_BASE and KERNEL_GS_BASE, and all tasks
 * share the CPU's kernel stack, so what is left is bookkeeping: "current"
 * and RSP0. It is blacklisted for kprobes and kretprobes, as in Linux.
 */
noinline struct task_struct *__switch_to(struct task_struct *prev_p, struct task_struct *next_p)
{
	struct percpu *pcpu = this_cpu_ptr();

	this_cpu_write(current_task, next_p);
	pcpu->tss.sp0 = pcpu->top_of_stack;	/* load_sp0() */
	return prev_p;
}
NOKPROBE_SYMBOL(__switch_to);
