// SPDX-License-Identifier: MIT
/*
 * Page faults. Page tables belong to the host, so nearly every decision
 * is the host's: demand paging, copy-on-write, SIGSEGV. The guest part is
 * the kernel-mode case that makes copy_from_user() safe.
 */
#include <linux/extable.h>
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

long host_exception(struct pt_regs *regs, int trapnr, long error_code, int fatal, unsigned long address);

/* A kernel-mode fault the host could not resolve: the exception table, or an oops. */
noinline void no_context(struct pt_regs *regs, unsigned long error_code, unsigned long address)
{
	if (fixup_exception(regs, X86_TRAP_PF))
		return;
	printk("BUG: unable to handle page fault for address: %016lx\n", address);
	die("Oops", regs, (long)error_code, X86_TRAP_PF);
}
NOKPROBE_SYMBOL(no_context);

noinline void do_page_fault(struct pt_regs *regs, unsigned long error_code, unsigned long address)
{
	/* A kprobe whose single-stepped instruction faulted gets the first word. */
	if (notify_die(DIE_PAGE_FAULT, "page fault", regs, (long)error_code, X86_TRAP_PF,
		       SIGSEGV) == NOTIFY_STOP)
		return;

	if (user_mode(regs)) {
		/* Demand paging, CoW or a signal: the host rewrites the frame if it must. */
		host_exception(regs, X86_TRAP_PF, (long)error_code, EXC_FIRST_CHANCE, address);
		return;
	}

	/*
	 * Kernel mode touching user memory (copy_from_user and friends): first
	 * let the host page it in, as for a user access; only if the address is
	 * really bad does the exception table turn it into -EFAULT.
	 */
	if (address < TASK_SIZE_MAX &&
	    host_exception(regs, X86_TRAP_PF, (long)error_code, EXC_FIRST_CHANCE, address) == 1)
		return;

	no_context(regs, error_code, address);
}
NOKPROBE_SYMBOL(do_page_fault);

asmlinkage void exc_page_fault(struct pt_regs *regs, unsigned long error_code)
{
	/* CR2 first: the notifiers below could take a fault of their own. */
	unsigned long address = read_cr2();

	do_page_fault(regs, error_code, address);
}
NOKPROBE_SYMBOL(exc_page_fault);
