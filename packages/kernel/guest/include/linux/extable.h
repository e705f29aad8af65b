/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_EXTABLE_H
#define _LINUX_EXTABLE_H

#include <linux/types.h>

struct pt_regs;

/* One __ex_table entry: both fields are offsets from the field itself. */
struct exception_table_entry {
	int insn, fixup;
};

const struct exception_table_entry *search_exception_tables(unsigned long addr);
int fixup_exception(struct pt_regs *regs, int trapnr);

#endif
