// SPDX-License-Identifier: MIT
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * __switch_to: the architecture half of a context switch, entered from
 * __switch_to_asm already on next's stack. The host switches what it keeps
 * (CR3, the FPU/SSE state, FS_BASE and the user GS base in KERNEL_GS_BASE:
 * switch_mm, switch_fpu, x86_fsgsbase_load); the guest switches "current"
 * and the stack the CPU enters the kernel on (TSS.RSP0). Blacklisted for
 * kprobes and kretprobes, as in Linux: it returns on another task's stack.
 */
noinline struct task_struct *__switch_to(struct task_struct *prev_p, struct task_struct *next_p)
{
	struct percpu *pcpu = this_cpu_ptr();
	unsigned long top = (unsigned long)next_p->stack + THREAD_SIZE;

	hypercall2(HC_SWITCH_TO, prev_p, next_p);
	this_cpu_write(current_task, next_p);
	this_cpu_write(top_of_stack, top);
	pcpu->tss.sp0 = top;	/* load_sp0() */
	return prev_p;
}
NOKPROBE_SYMBOL(__switch_to);
