/* SPDX-License-Identifier: MIT */
/* Saving and restoring the interrupt flag, as arch/x86/include/asm/irqflags.h does it. */
#ifndef _ASM_IRQFLAGS_H
#define _ASM_IRQFLAGS_H

static __always_inline unsigned long native_save_fl(void)
{
	unsigned long flags;

	__asm__ __volatile__("pushf ; pop %0" : "=rm" (flags) : : "memory");
	return flags;
}

static __always_inline void native_restore_fl(unsigned long flags)
{
	__asm__ __volatile__("push %0 ; popf" : : "g" (flags) : "memory", "cc");
}

#define local_irq_save(flags)					\
	do {							\
		(flags) = native_save_fl();			\
		__asm__ __volatile__("cli" : : : "memory");	\
	} while (0)

#define local_irq_restore(flags) native_restore_fl(flags)

#endif
