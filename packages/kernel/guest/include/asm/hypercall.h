/* SPDX-License-Identifier: MIT */
#ifndef _ASM_HYPERCALL_H
#define _ASM_HYPERCALL_H

#include <abi.h>

/*
 * The only door to the TypeScript side: vmcall with rax = nr and the
 * arguments in rdi rsi rdx r10 r8 (arch/x86/lib/hypercall.S). The host
 * changes rax (the result) and memory, CR3 and MSRs - never other
 * registers - so this is an ordinary function call for the compiler.
 *
 * Only leaf functions call it: everything above a leaf is ordinary kernel
 * code that kprobes can probe.
 */
long hypercall(unsigned long nr, unsigned long a0, unsigned long a1,
	       unsigned long a2, unsigned long a3, unsigned long a4);

#define hypercall1(nr, a)		hypercall(nr, (unsigned long)(a), 0, 0, 0, 0)
#define hypercall2(nr, a, b)		hypercall(nr, (unsigned long)(a), (unsigned long)(b), 0, 0, 0)
#define hypercall3(nr, a, b, c)		hypercall(nr, (unsigned long)(a), (unsigned long)(b), \
						  (unsigned long)(c), 0, 0)
#define hypercall4(nr, a, b, c, d)	hypercall(nr, (unsigned long)(a), (unsigned long)(b), \
						  (unsigned long)(c), (unsigned long)(d), 0)
#define hypercall5(nr, a, b, c, d, e)	hypercall(nr, (unsigned long)(a), (unsigned long)(b), \
						  (unsigned long)(c), (unsigned long)(d), (unsigned long)(e))

#endif
