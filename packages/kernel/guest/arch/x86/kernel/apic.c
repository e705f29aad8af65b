// SPDX-License-Identifier: MIT
/*
 * The timer interrupt (vector TIMER_VECTOR). The host keeps time and the
 * run queues; the guest counts the interrupt nesting and passes the tick on.
 * If the host wants another task to run it sets need_resched, and the
 * return path to user mode (or the idle loop) calls schedule().
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

noinline void irq_enter(void)
{
	this_cpu_add(irq_count, 1);
}

noinline void irq_exit(void)
{
	this_cpu_add(irq_count, -1);
}

/* Leaf: the tick itself (the host's scheduler_tick and timers). */
noinline void local_apic_timer_interrupt(struct pt_regs *regs)
{
	hypercall1(HC_TIMER_TICK, regs);
}

asmlinkage void sysvec_apic_timer_interrupt(struct pt_regs *regs)
{
	irq_enter();
	local_apic_timer_interrupt(regs);
	/* Expired clocks and the like made sleepers ready: wake them (hrtimer_wakeup -> try_to_wake_up). */
	if (this_cpu_read(ttwu_pending))
		sched_ttwu_pending();
	irq_exit();
}
NOKPROBE_SYMBOL(sysvec_apic_timer_interrupt);
