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
#include <linux/oom.h>
#include <asm/percpu.h>
#include <asm/hypercall.h>
#include <asm/special_insns.h>

/* The page fault error code's bits. */
#define X86_PF_WRITE	0x02
#define X86_PF_USER	0x04
#define X86_PF_INSTR	0x10

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

/*
 * Leaf: the memory manager (mm/memory.c). The address spaces are the
 * host's: it maps the page (demand paging, copy-on-write) and answers 0,
 * VM_FAULT_SIGSEGV when no mapping allows the access, or VM_FAULT_OOM when
 * no memory is left for the page. vma is NULL here (the
 * VMAs are the host's); address is $arg2, as tools read it.
 */
noinline unsigned int handle_mm_fault(void *vma, unsigned long address, unsigned int flags,
				      struct pt_regs *regs)
{
	(void)vma;
	return (unsigned int)hypercall3(HC_HANDLE_MM_FAULT, address, flags, regs);
}

/*
 * A fault on a user address, from user mode or from the kernel touching user
 * memory (copy_from_user and friends): the mm resolves it, or else user
 * mode gets SIGSEGV (the host's bad_area) and kernel mode the exception
 * table's -EFAULT. Out of memory (mm_fault_error): kernel mode gets the
 * exception table too; user mode calls the OOM killer and takes the fault
 * again (a victim dies at its return to user mode).
 */
noinline void do_user_addr_fault(struct pt_regs *regs, unsigned long error_code, unsigned long address)
{
	unsigned int flags = 0, fault;

	if (error_code & X86_PF_WRITE)
		flags |= FAULT_FLAG_WRITE;
	if (error_code & X86_PF_USER)
		flags |= FAULT_FLAG_USER;
	if (error_code & X86_PF_INSTR)
		flags |= FAULT_FLAG_INSTRUCTION;
	fault = handle_mm_fault(NULL, address, flags, regs);
	if (!(fault & (VM_FAULT_SIGSEGV | VM_FAULT_OOM)))
		return;
	if ((fault & VM_FAULT_OOM) && user_mode(regs)) {
		pagefault_out_of_memory();
		return;
	}
	if ((fault & VM_FAULT_SIGSEGV) && user_mode(regs)) {
		host_exception(regs, X86_TRAP_PF, (long)error_code, EXC_FIRST_CHANCE, address);
		return;
	}
	no_context(regs, error_code, address);
}
NOKPROBE_SYMBOL(do_user_addr_fault);

noinline void do_page_fault(struct pt_regs *regs, unsigned long error_code, unsigned long address)
{
	/* A kprobe whose single-stepped instruction faulted gets the first word. */
	if (notify_die(DIE_PAGE_FAULT, "page fault", regs, (long)error_code, X86_TRAP_PF,
		       SIGSEGV) == NOTIFY_STOP)
		return;

	if (user_mode(regs) || address < TASK_SIZE_MAX) {
		do_user_addr_fault(regs, error_code, address);
		return;
	}
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
