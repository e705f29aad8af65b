/* SPDX-License-Identifier: MIT */
/*
 * The kretprobe trampoline (as in Linux x86-64, v5.x).
 *
 * When a kretprobe'd function is entered, the probe replaces its return
 * address with &kretprobe_trampoline. The function's "ret" therefore lands
 * here, on the caller's stack, with the return value in rax. We build a
 * pt_regs-like frame so the handlers can see (and change) the registers,
 * ask trampoline_handler for the real return address, put it where the
 * frame's sp field is - which is exactly the old return-address slot - and
 * "ret" through it.
 */
#include <abi.h>
#include <asm/calling.h>

	.section .kprobes.text, "ax"

SYM_CODE_START(kretprobe_trampoline)
	pushq	%rsp			/* pt_regs->sp: lands in the consumed return-address slot */
	pushfq				/* pt_regs->flags */
	subq	$24, %rsp		/* pt_regs->cs, ->ip, ->orig_ax: trampoline_handler fills them */
	PUSH_REGS
	movq	%rsp, %rdi		/* trampoline_handler(regs) */
	call	trampoline_handler
	movq	%rax, PT_RSP(%rsp)	/* the real return address replaces the saved sp */
	POP_REGS
	addq	$24, %rsp
	popfq
	ret				/* to the original caller */
SYM_CODE_END(kretprobe_trampoline)

	.pushsection _kprobe_blacklist, "a"
	.balign 8
	.quad	kretprobe_trampoline
	.popsection
