/* SPDX-License-Identifier: MIT */
/*
 * Kernel entry and exit: system calls, exceptions, interrupts, and the
 * switch from one task's kernel stack to another's.
 *
 * Every entry builds a struct pt_regs on the current task's kernel stack
 * (its top: percpu.top_of_stack, also TSS.RSP0), calls C, and leaves
 * through the same door: restore every register from the frame and iretq,
 * swapping GS back only if the frame returns to user mode. A task that
 * sleeps or is preempted stays inside schedule() on its own stack; the frame
 * it entered with waits at the top of that stack until it runs again.
 *
 * All of .entry.text is off limits to kprobes: a breakpoint here would trap
 * with the wrong GS base, on a half-built frame, or between two stacks.
 */
#include <abi.h>
#include <asm/calling.h>
#include <linux/errno.h>

	.section .entry.text, "ax"

/*
 * entry_SYSCALL_64: the "syscall" instruction lands here (MSR_LSTAR).
 * The CPU has saved the user rip in rcx and rflags in r11, loaded CS/SS
 * from MSR_STAR and cleared TF|IF|DF|AC|NT (MSR_FMASK). It has NOT switched
 * stacks: rsp is still the user's, so nothing may be pushed before we load
 * the kernel stack.
 */
SYM_CODE_START(entry_SYSCALL_64)
	swapgs					/* GS base := this CPU's per-CPU area */
	movq	%rsp, %gs:PERCPU_USER_RSP	/* stash the user stack pointer */
	movq	%gs:PERCPU_TOP_OF_STACK, %rsp	/* and switch to the kernel stack */

	/* Build the same frame an interrupt from user mode would have built. */
	pushq	$USER_DS			/* pt_regs->ss */
	pushq	%gs:PERCPU_USER_RSP		/* pt_regs->sp */
	pushq	%r11				/* pt_regs->flags */
	pushq	$USER_CS			/* pt_regs->cs */
	pushq	%rcx				/* pt_regs->ip */
	pushq	%rax				/* pt_regs->orig_ax: the syscall number */
	PUSH_REGS rax=$-ENOSYS			/* pt_regs->ax: the default result */

	movq	%rsp, %rdi			/* do_syscall_64(regs, nr) */
	movl	%eax, %esi
	call	do_syscall_64			/* ... also does the exit-to-user work */
	jmp	restore_regs_and_iret
SYM_CODE_END(entry_SYSCALL_64)

/*
 * idtentry vector, asm name, C handler, has_error_code
 *
 * The CPU pushed ss, rsp, rflags, cs, rip (on the RSP0 stack if it came
 * from user mode) and, for some vectors, an error code. We push -1 where
 * there is none so that the frame always has an orig_ax slot, then the
 * GPRs, and call cfunc(regs, error_code).
 */
.macro idtentry asmsym, cfunc, has_error_code
SYM_CODE_START(\asmsym)
	.if \has_error_code == 0
	pushq	$-1				/* pt_regs->orig_ax: no error code */
	.endif
	cld					/* C code expects DF=0; user mode may have set it */
	testb	$3, 16(%rsp)			/* CS of the interrupted context: from user mode? */
	jz	1f
	swapgs					/* yes: GS base := per-CPU area */
1:	PUSH_REGS
	movq	%rsp, %rdi			/* arg 1: struct pt_regs * */
	movq	PT_ORIG_RAX(%rsp), %rsi		/* arg 2: the error code */
	movq	$-1, PT_ORIG_RAX(%rsp)		/* no syscall to restart from this frame */
	call	\cfunc
	jmp	common_interrupt_return
SYM_CODE_END(\asmsym)
.endm

idtentry asm_exc_divide_error		exc_divide_error		0
idtentry asm_exc_debug			exc_debug			0
idtentry asm_exc_nmi			exc_nmi				0
idtentry asm_exc_int3			exc_int3			0
idtentry asm_exc_invalid_op		exc_invalid_op			0
idtentry asm_exc_general_protection	exc_general_protection		1
idtentry asm_exc_page_fault		exc_page_fault			1
idtentry asm_exc_coprocessor_error	exc_coprocessor_error		0
idtentry asm_exc_simd_coprocessor_error	exc_simd_coprocessor_error	0
idtentry asm_sysvec_apic_timer_interrupt sysvec_apic_timer_interrupt	0

/*
 * irq_entries_start: one 16-byte stub per vector, for every vector without
 * a handler of its own (the IDT points at irq_entries_start + 16 * vector).
 * Each pushes a fake error code if the CPU pushes none, then the vector
 * number, and jumps to the common code, which calls
 * exc_unexpected(regs, error_code, vector).
 */
	.p2align 4
SYM_CODE_START(irq_entries_start)
	.Lvector = 0
	.rept NR_VECTORS
0:
	.if !(.Lvector == 8 || (.Lvector >= 10 && .Lvector <= 14) || .Lvector == 17 || .Lvector == 21 || .Lvector == 29 || .Lvector == 30)
	pushq	$-1
	.endif
	pushq	$.Lvector
	jmp	asm_exc_unexpected
	.fill	0b + IDT_ENTRY_STRIDE - ., 1, 0xcc	/* pad to 16 bytes (an error if longer) */
	.Lvector = .Lvector + 1
	.endr
SYM_CODE_END(irq_entries_start)

SYM_CODE_START(asm_exc_unexpected)
	/* Stack: vector, error code, rip, cs, rflags, rsp, ss. */
	cld
	testb	$3, 24(%rsp)			/* from user mode? */
	jz	1f
	swapgs
	/*
	 * The vector sits exactly where pt_regs->di belongs: swap it with rdi
	 * and the frame continues like any other.
	 */
1:	xchgq	%rdi, (%rsp)
	PUSH_REGS_AFTER_DI
	movq	%rdi, %rdx			/* arg 3: vector */
	movq	%rsp, %rdi			/* arg 1: regs */
	movq	PT_ORIG_RAX(%rsp), %rsi		/* arg 2: error code */
	movq	$-1, PT_ORIG_RAX(%rsp)
	call	exc_unexpected
	jmp	common_interrupt_return
SYM_CODE_END(asm_exc_unexpected)

/*
 * The way out of every exception and interrupt: irqentry_exit() does the
 * return-to-user work (reschedule if asked; or, for an interrupted idle
 * loop, let the host switch to a task), then we pop the frame.
 */
SYM_CODE_START(common_interrupt_return)
	movq	%rsp, %rdi
	call	irqentry_exit
SYM_INNER_LABEL(restore_regs_and_iret)		/* the syscall path joins here */
	/*
	 * No interrupt may arrive between the swapgs below and iretq: it would
	 * find a kernel CS in its frame, skip its own swapgs and run with the
	 * user's GS base. (The syscall path ran with interrupts on.)
	 */
	cli
	POP_REGS
	addq	$8, %rsp			/* skip orig_ax: rsp -> the iret frame */
	testb	$3, 8(%rsp)			/* returning to user mode (CS & 3)? */
	jz	1f
	swapgs					/* yes: give user mode its GS base back */
1:	iretq
SYM_CODE_END(common_interrupt_return)

/*
 * __switch_to_asm(prev, next): leave prev's kernel stack for next's. The
 * callee-saved registers go on prev's stack as a struct inactive_task_frame
 * and its rsp into prev->thread_sp; next's are popped from its own. The jmp
 * makes __switch_to (C) return, with prev in rax, to wherever next last
 * called __switch_to_asm from - or, for a new task, to ret_from_fork.
 */
SYM_FUNC_START(__switch_to_asm)
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, TASK_THREAD_SP(%rdi)	/* switch stacks */
	movq	TASK_THREAD_SP(%rsi), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	jmp	__switch_to
SYM_FUNC_END(__switch_to_asm)

/*
 * ret_from_fork: where a new task first runs (the return address of the
 * inactive_task_frame the host built under its pt_regs). rax = prev.
 * rsp now points at the child's pt_regs: it returns from the syscall that
 * created it (rax = 0 in that frame), or starts its program (spawn).
 */
SYM_CODE_START(ret_from_fork)
	movq	%rax, %rdi
	call	schedule_tail			/* finish_task_switch(prev) */
	movq	%rsp, %rdi
	call	ret_from_fork_to_user_mode
	jmp	restore_regs_and_iret
SYM_CODE_END(ret_from_fork)
