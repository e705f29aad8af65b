// SPDX-License-Identifier: MIT
/*
 * The exception table: where a faulting kernel instruction may continue.
 *
 * Only instructions that touch user memory have entries (copy_from_user
 * and friends). A bad user pointer makes them fault in kernel mode; instead
 * of an oops, the fault handler finds the instruction here and resumes at
 * its fixup, which turns the fault into -EFAULT or a short copy.
 */
#include <linux/extable.h>
#include <linux/kprobes.h>
#include <asm/ptrace.h>

extern const struct exception_table_entry __start___ex_table[], __stop___ex_table[];

static inline unsigned long ex_insn_addr(const struct exception_table_entry *x)
{
	return (unsigned long)&x->insn + x->insn;
}

static inline unsigned long ex_fixup_addr(const struct exception_table_entry *x)
{
	return (unsigned long)&x->fixup + x->fixup;
}

/* The table is small and (unlike Linux's) not sorted at build time: search it linearly. */
noinline const struct exception_table_entry *search_exception_tables(unsigned long addr)
{
	const struct exception_table_entry *e;

	for (e = __start___ex_table; e < __stop___ex_table; e++)
		if (ex_insn_addr(e) == addr)
			return e;
	return NULL;
}
NOKPROBE_SYMBOL(search_exception_tables);

noinline int fixup_exception(struct pt_regs *regs, int trapnr)
{
	const struct exception_table_entry *e;

	(void)trapnr;
	e = search_exception_tables(regs->ip);
	if (!e)
		return 0;
	regs->ip = ex_fixup_addr(e);
	return 1;
}
NOKPROBE_SYMBOL(fixup_exception);
