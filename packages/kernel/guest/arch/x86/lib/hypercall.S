/* SPDX-License-Identifier: MIT */
/*
 * long hypercall(nr, a0, a1, a2, a3, a4)
 *
 * Move the C arguments into the hypercall registers (rax = nr; rdi rsi rdx
 * r10 r8) and vmcall: the TypeScript service runs and leaves its result in
 * rax. In .kprobes.text and blacklisted: the die-notifier path that handles
 * a kprobe hit calls it, so a probe here would recurse.
 */
#include <abi.h>
#include <asm/calling.h>

	.section .kprobes.text, "ax"

SYM_FUNC_START(hypercall)
	movq	%rdi, %rax
	movq	%rsi, %rdi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	movq	%r8, %r10
	movq	%r9, %r8
	vmcall
	ret
SYM_FUNC_END(hypercall)

	.pushsection _kprobe_blacklist, "a"
	.balign 8
	.quad	hypercall
	.popsection
