/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_KDEBUG_H
#define _LINUX_KDEBUG_H

#include <abi.h>
#include <linux/notifier.h>

struct pt_regs;

/* What a die notifier receives as "data". Layout: abi.h DIE_ARGS_*. */
struct die_args {
	struct pt_regs *regs;
	const char *str;
	long err;
	int trapnr;
	int signr;
};

_Static_assert(offsetof(struct die_args, err) == DIE_ARGS_ERR, "die_args");
_Static_assert(offsetof(struct die_args, trapnr) == DIE_ARGS_TRAPNR, "die_args");
_Static_assert(sizeof(struct die_args) == DIE_ARGS_SIZE, "die_args");

extern struct atomic_notifier_head die_chain;
extern struct notifier_block host_notifier_blocks[NR_HOST_NOTIFIERS];

int notify_die(unsigned long val, const char *str, struct pt_regs *regs, long err, int trap, int sig);
void die(const char *str, struct pt_regs *regs, long err, int trapnr);

#endif
