/* SPDX-License-Identifier: MIT */
/* Privileged instructions as inline functions. */
#ifndef _ASM_SPECIAL_INSNS_H
#define _ASM_SPECIAL_INSNS_H

#include <linux/types.h>

static __always_inline u64 rdmsrl(u32 msr)
{
	u32 lo, hi;
	__asm__ __volatile__("rdmsr" : "=a" (lo), "=d" (hi) : "c" (msr));
	return ((u64)hi << 32) | lo;
}

static __always_inline void wrmsrl(u32 msr, u64 val)
{
	__asm__ __volatile__("wrmsr" : : "c" (msr), "a" ((u32)val), "d" ((u32)(val >> 32)) : "memory");
}

static __always_inline unsigned long read_cr2(void)
{
	unsigned long v;
	__asm__ __volatile__("movq %%cr2, %0" : "=r" (v));
	return v;
}

static __always_inline unsigned long read_dr6(void)
{
	unsigned long v;
	__asm__ __volatile__("movq %%db6, %0" : "=r" (v));
	return v;
}

static __always_inline void write_dr6(unsigned long v)
{
	__asm__ __volatile__("movq %0, %%db6" : : "r" (v));
}

static __always_inline void local_irq_enable(void)
{
	__asm__ __volatile__("sti" : : : "memory");
}

static __always_inline void local_irq_disable(void)
{
	__asm__ __volatile__("cli" : : : "memory");
}

/* Halt this CPU for good (after an oops nobody handled). */
static __always_inline __noreturn void halt_forever(void)
{
	for (;;)
		__asm__ __volatile__("cli; hlt" : : : "memory");
}

#endif
