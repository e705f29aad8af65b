/* SPDX-License-Identifier: MIT */
/*
 * Assembly helpers shared by the entry code and the kretprobe trampoline:
 * save and restore the general-purpose registers as the lower part of a
 * struct pt_regs (the part below orig_ax).
 */
#ifndef _ASM_CALLING_H
#define _ASM_CALLING_H

#include <abi.h>

#define SYM_FUNC_START(name)	.globl name ; .type name, @function ; .p2align 4 ; name:
#define SYM_FUNC_END(name)	.size name, . - name
#define SYM_CODE_START(name)	SYM_FUNC_START(name)
#define SYM_CODE_END(name)	SYM_FUNC_END(name)
#define SYM_INNER_LABEL(name)	.globl name ; name:

/* Push rsi..r15 (rdi is pushed separately by the caller of this macro). */
.macro PUSH_REGS_AFTER_DI rax=%rax
	pushq	%rsi			/* pt_regs->si */
	pushq	%rdx			/* pt_regs->dx */
	pushq	%rcx			/* pt_regs->cx */
	pushq	\rax			/* pt_regs->ax */
	pushq	%r8			/* pt_regs->r8 */
	pushq	%r9			/* pt_regs->r9 */
	pushq	%r10			/* pt_regs->r10 */
	pushq	%r11			/* pt_regs->r11 */
	pushq	%rbx			/* pt_regs->bx */
	pushq	%rbp			/* pt_regs->bp */
	pushq	%r12			/* pt_regs->r12 */
	pushq	%r13			/* pt_regs->r13 */
	pushq	%r14			/* pt_regs->r14 */
	pushq	%r15			/* pt_regs->r15 */
.endm

.macro PUSH_REGS rax=%rax
	pushq	%rdi			/* pt_regs->di */
	PUSH_REGS_AFTER_DI rax=\rax
.endm

.macro POP_REGS
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rax
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
.endm

#endif
