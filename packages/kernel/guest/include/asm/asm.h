/* SPDX-License-Identifier: MIT */
#ifndef _ASM_ASM_H
#define _ASM_ASM_H

/*
 * _ASM_EXTABLE(insn, fixup): one __ex_table entry. If "insn" faults in
 * kernel mode, the fault handler resumes at "fixup" instead of oopsing.
 * Offsets are relative to each field (as in Linux), so the table needs no
 * relocation: insn address = &entry.insn + entry.insn.
 */
#ifdef __ASSEMBLY__
# define _ASM_EXTABLE(from, to)					\
	.pushsection "__ex_table", "a" ;			\
	.balign 4 ;						\
	.long (from) - . ;					\
	.long (to) - . ;					\
	.popsection
#else
# define _ASM_EXTABLE(from, to)					\
	" .pushsection \"__ex_table\", \"a\"\n"			\
	" .balign 4\n"						\
	" .long (" #from ") - .\n"				\
	" .long (" #to ") - .\n"				\
	" .popsection\n"
#endif

#endif
