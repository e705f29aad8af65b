/* SPDX-License-Identifier: MIT */
#ifndef _ASM_PERCPU_H
#define _ASM_PERCPU_H

#include <abi.h>
#include <linux/types.h>
#include <asm/ptrace.h>


struct task_struct;	/* include/linux/sched.h */

/* The 64-bit TSS: only RSP0 matters (the stack the CPU switches to from ring 3). */
struct tss_struct {
	u32 reserved1;
	u64 sp0;
	u64 sp1;
	u64 sp2;
	u64 reserved2;
	u64 ist[7];
	u32 reserved3;
	u32 reserved4;
	u16 reserved5;
	u16 io_bitmap_base;
} __packed;

/*
 * One per CPU, allocated by the host (4 KiB, direct map). In kernel mode
 * the GS base points here, so "%gs:16" is this CPU's current task.
 */
struct percpu {
	unsigned long self;
	unsigned long cpu_number;
	struct task_struct *current_task;
	unsigned long top_of_stack;
	unsigned long user_rsp;
	unsigned long need_resched;
	unsigned long irq_count;
	unsigned long ttwu_pending;	/* [ext] the host has sleepers to wake: sched_ttwu_pending() */
	u64 gdt[GDT_SIZE / 8];
	u8 pad[PERCPU_TSS - PERCPU_GDT - GDT_SIZE];
	struct tss_struct tss;
} __aligned(4096);

_Static_assert(offsetof(struct percpu, current_task) == PERCPU_CURRENT_TASK, "percpu");
_Static_assert(offsetof(struct percpu, top_of_stack) == PERCPU_TOP_OF_STACK, "percpu");
_Static_assert(offsetof(struct percpu, user_rsp) == PERCPU_USER_RSP, "percpu");
_Static_assert(offsetof(struct percpu, need_resched) == PERCPU_NEED_RESCHED, "percpu");
_Static_assert(offsetof(struct percpu, irq_count) == PERCPU_IRQ_COUNT, "percpu");
_Static_assert(offsetof(struct percpu, ttwu_pending) == PERCPU_TTWU_PENDING, "percpu");
_Static_assert(offsetof(struct percpu, gdt) == PERCPU_GDT, "percpu");
_Static_assert(offsetof(struct percpu, tss) == PERCPU_TSS, "percpu");
_Static_assert(offsetof(struct tss_struct, sp0) == TSS_RSP0, "tss");
_Static_assert(offsetof(struct tss_struct, ist) == TSS_IST1, "tss");
_Static_assert(sizeof(struct tss_struct) == TSS_SIZE, "tss");
_Static_assert(sizeof(struct percpu) == PERCPU_SIZE, "percpu");

/*
 * %gs-relative accesses: one instruction, volatile, because the host
 * changes these fields behind the compiler's back (during hypercalls).
 */
#define this_cpu_read(field) ({							\
	__typeof__(((struct percpu *)0)->field) __v;				\
	__asm__ __volatile__("movq %%gs:%c1, %0"				\
			     : "=r" (__v) : "i" (offsetof(struct percpu, field)));	\
	__v; })

#define this_cpu_write(field, val) do {						\
	__typeof__(((struct percpu *)0)->field) __v = (val);			\
	__asm__ __volatile__("movq %0, %%gs:%c1"				\
			     : : "r" (__v), "i" (offsetof(struct percpu, field))	\
			     : "memory");					\
	} while (0)

#define this_cpu_add(field, n)							\
	__asm__ __volatile__("addq %0, %%gs:%c1"				\
			     : : "re" ((long)(n)), "i" (offsetof(struct percpu, field))	\
			     : "memory")

static __always_inline struct percpu *this_cpu_ptr(void)
{
	return (struct percpu *)this_cpu_read(self);
}

static __always_inline unsigned long smp_processor_id(void)
{
	return this_cpu_read(cpu_number);
}

#define current		(this_cpu_read(current_task))

/*
 * The frame of the current system call. entry_SYSCALL_64 always builds it
 * right below top_of_stack, so it is found without being passed around
 * (Linux's task_pt_regs()).
 */
static __always_inline struct pt_regs *current_pt_regs(void)
{
	return (struct pt_regs *)this_cpu_read(top_of_stack) - 1;
}

#endif
