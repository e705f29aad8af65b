// SPDX-License-Identifier: MIT
#include <linux/kprobes.h>
#include <asm/hypercall.h>
#include <asm/ptrace.h>

/*
 * Called from kretprobe_trampoline with the frame it built. Like Linux,
 * make the frame look as if it was taken at the trampoline; the host then
 * runs the return handlers of this task's instances for this frame
 * (regs + PT_RSP is the original return-address slot, i.e. the instance's
 * fp) and tells us where the function was really meant to return.
 */
asmlinkage noinline void *trampoline_handler(struct pt_regs *regs)
{
	regs->cs = KERNEL_CS;
	regs->ip = (unsigned long)kretprobe_trampoline;
	regs->orig_ax = ~0UL;
	return (void *)hypercall1(HC_KRETPROBE_TRAMPOLINE, regs);
}
NOKPROBE_SYMBOL(trampoline_handler);
