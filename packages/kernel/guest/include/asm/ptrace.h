/* SPDX-License-Identifier: MIT */
#ifndef _ASM_PTRACE_H
#define _ASM_PTRACE_H

#include <abi.h>
#include <linux/types.h>

/*
 * The register frame every kernel entry builds on the kernel stack (Linux
 * x86-64 layout). The top five words are exactly what the CPU pushes for an
 * interrupt and what iretq pops, so returning is always "restore the GPRs,
 * skip orig_ax, iretq" - and the host may rewrite any field in between.
 */
struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	/* syscall number for syscalls, error code for exceptions, -1 otherwise */
	unsigned long orig_ax;
	/* the iret frame */
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
};

_Static_assert(offsetof(struct pt_regs, r15) == PT_R15, "pt_regs");
_Static_assert(offsetof(struct pt_regs, ax) == PT_RAX, "pt_regs");
_Static_assert(offsetof(struct pt_regs, di) == PT_RDI, "pt_regs");
_Static_assert(offsetof(struct pt_regs, orig_ax) == PT_ORIG_RAX, "pt_regs");
_Static_assert(offsetof(struct pt_regs, ip) == PT_RIP, "pt_regs");
_Static_assert(offsetof(struct pt_regs, cs) == PT_CS, "pt_regs");
_Static_assert(offsetof(struct pt_regs, sp) == PT_RSP, "pt_regs");
_Static_assert(sizeof(struct pt_regs) == PT_REGS_SIZE, "pt_regs");

/* Was the CPU in user mode (CPL 3) when this frame was saved? */
static __always_inline bool user_mode(const struct pt_regs *regs)
{
	return (regs->cs & 3) != 0;
}

#define X86_EFLAGS_IF	0x200

#endif
