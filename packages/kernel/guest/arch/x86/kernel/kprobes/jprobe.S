/* SPDX-License-Identifier: MIT */
/*
 * Jprobes (as in Linux <= 4.14): the entry stub and jprobe_return.
 *
 * setjmp_pre_handler (on the host) saved the probed function's pt_regs and
 * the top MIN_STACK_SIZE bytes of its stack, cleared IF and pointed ip here
 * instead of at the function's first instruction. So the stub runs where
 * the function would: the arguments in rdi rsi rdx rcx r8 r9, the return
 * address at (%rsp), stack arguments above it. It plays the jprobe's entry
 * function: a frame of its own (an unwinder goes from here to the probed
 * function's caller), the registers saved as a pt_regs for
 * jprobe_call_entry, whose hypercall runs the entry on the host with them,
 * and then, as every entry ends, jprobe_return: back to the stack pointer
 * setjmp_pre_handler saved, and int3. That int3 is no probe: the kprobe
 * still current on this CPU takes it with its break_handler
 * (longjmp_break_handler), which puts the saved registers and stack back
 * and lets the probed function's first instruction run as if nothing had
 * happened.
 */
#include <abi.h>
#include <asm/calling.h>

	.section .kprobes.text, "ax"

SYM_CODE_START(jprobe_entry_stub)
	pushq	%rbp			/* the entry's frame: (%rbp) = the function's rbp, 8(%rbp) = its return address */
	movq	%rsp, %rbp
	pushq	%rsp			/* pt_regs->sp (set below) */
	pushfq				/* pt_regs->flags */
	subq	$24, %rsp		/* pt_regs->cs, ->ip, ->orig_ax: jprobe_call_entry fills them */
	PUSH_REGS
	leaq	8(%rbp), %rax		/* the function's sp and rbp, not the stub frame's */
	movq	%rax, PT_RSP(%rsp)
	movq	(%rbp), %rax
	movq	%rax, PT_RBP(%rsp)
	movq	%rsp, %rdi		/* jprobe_call_entry(regs) */
	call	jprobe_call_entry	/* -> the sp setjmp_pre_handler saved */
	movq	%rax, PT_RBX(%rsp)	/* jprobe_return takes it in rbx */
	POP_REGS			/* the registers as the entry left them */
SYM_INNER_LABEL(jprobe_return)
	xchgq	%rbx, %rsp		/* back to the saved sp */
	int3				/* longjmp_break_handler */
SYM_INNER_LABEL(jprobe_return_end)
	nop
	ud2				/* not reached: the break handler resumes the probed function */
SYM_CODE_END(jprobe_entry_stub)

	.pushsection _kprobe_blacklist, "a"
	.balign 8
	.quad	jprobe_entry_stub
	.popsection
