/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_SIGNAL_H
#define _LINUX_SIGNAL_H

#include <linux/sched.h>

#define SIGKILL		9
#define SI_USER		0
#define SI_KERNEL	0x80
#define SI_TKILL	-6
#define PIDTYPE_PID	0
#define PIDTYPE_TGID	1

/* struct kernel_siginfo's head, as Linux lays it out for kill: signo, errno, code, then pid and uid at 16. */
struct kernel_siginfo {
	int si_signo;
	int si_errno;
	int si_code;
	int __pad;
	int si_pid;
	unsigned int si_uid;
};

int do_send_sig_info(int sig, struct kernel_siginfo *info, struct task_struct *p, int type);

#endif
