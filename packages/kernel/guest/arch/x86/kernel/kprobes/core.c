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

/*
 * Jprobes: called from jprobe_entry_stub with the probed function's
 * registers as the function has them at its first instruction (regs->sp
 * points at its return address, stack arguments above it). This stands for
 * the jprobe's entry function: the host runs it with those arguments. Like
 * trampoline_handler, make the frame look taken at the stub. Returns the
 * stack pointer setjmp_pre_handler saved, for jprobe_return.
 *
 * Not NOKPROBE: a jprobe's entry is ordinary code in Linux too. A probe
 * here is hit while the jprobe is still being handled on this CPU, so
 * kprobes counts it as missed and just steps over it.
 */
asmlinkage noinline unsigned long jprobe_call_entry(struct pt_regs *regs)
{
	regs->cs = KERNEL_CS;
	regs->ip = (unsigned long)jprobe_entry_stub;
	regs->orig_ax = ~0UL;
	return hypercall1(HC_JPROBE_ENTRY, regs);
}
