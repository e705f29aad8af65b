/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_KPROBES_H
#define _LINUX_KPROBES_H

#include <linux/types.h>

struct pt_regs;

/*
 * NOKPROBE_SYMBOL(fn): record fn's address in the _kprobe_blacklist section.
 * register_kprobe() refuses any address inside a listed function, because
 * the probe machinery itself runs it: a breakpoint there would trap again
 * while the first trap is being handled, forever.
 */
#define NOKPROBE_SYMBOL(fname)							\
	static const unsigned long __used					\
	__section("_kprobe_blacklist") _kbl_addr_##fname = (unsigned long)(fname)

/* The kretprobe trampoline (asm) and its C half. */
void kretprobe_trampoline(void);
asmlinkage void *trampoline_handler(struct pt_regs *regs);

/* The jprobe entry stub and jprobe_return's int3 (asm), and the stub's C half. */
void jprobe_entry_stub(void);
void jprobe_return(void);
void jprobe_return_end(void);
asmlinkage unsigned long jprobe_call_entry(struct pt_regs *regs);

#endif
