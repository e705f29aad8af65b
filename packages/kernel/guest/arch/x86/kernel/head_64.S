/* SPDX-License-Identifier: MIT */
/*
 * The first instructions of the kernel. The host starts every vCPU here at
 * CPL 0 with interrupts off, rsp = that CPU's boot stack top (direct map),
 * rdi = CPU number, rsi = the CPU's per-CPU area (direct map).
 */
#include <abi.h>
#include <asm/calling.h>

	.section .head.text, "ax"

SYM_CODE_START(startup_64)
	xorl	%ebp, %ebp		/* end of the frame-pointer chain: unwinders stop here */
	movq	%rsp, %rdx		/* 3rd argument: the boot stack (used if top_of_stack is unset) */
	andq	$-16, %rsp
	call	start_kernel		/* start_kernel(cpu, percpu, boot_sp): never returns */
1:	hlt
	jmp	1b
SYM_CODE_END(startup_64)

	.section .kprobes.text, "ax"
/*
 * kernel_call_return: a return address for the host. To run a guest
 * function from TypeScript (e.g. the kprobe test targets), the host pushes
 * this address, sets rip = the function and rdi.. = its arguments; when the
 * function returns here, its result in rax is reported with HC_CALL_RETURN.
 */
SYM_CODE_START(kernel_call_return)
	movq	%rax, %rdi
	movl	$HC_CALL_RETURN, %eax
	vmcall
1:	hlt
	jmp	1b
SYM_CODE_END(kernel_call_return)

	.pushsection _kprobe_blacklist, "a"
	.balign 8
	.quad	kernel_call_return
	.popsection
