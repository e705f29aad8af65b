/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <linux/types.h>
#include <asm/percpu.h>

struct pt_regs;

/*
 * probekit: schedule() takes the frame of the entry that is about to
 * return, because switching tasks here means the host rewriting that frame
 * (and CR3): there is one kernel stack per CPU, not per task.
 */
void schedule(struct pt_regs *regs);
struct task_struct *__switch_to(struct task_struct *prev_p, struct task_struct *next_p);
void __noreturn do_exit(long code);
void __noreturn do_group_exit(int exit_code);
void __noreturn cpu_idle(void);
void __noreturn return_to_regs(struct pt_regs *regs);	/* entry_64.S */

/* Clone flags (the ones the guest itself looks at). */
#define CSIGNAL		0x000000ff
#define CLONE_VM	0x00000100
#define CLONE_FS	0x00000200
#define CLONE_SIGHAND	0x00000800
#define CLONE_PIDFD	0x00001000
#define CLONE_VFORK	0x00004000
#define CLONE_THREAD	0x00010000
#define CLONE_NEWNS	0x00020000
#define CLONE_PARENT_SETTID 0x00100000
#define CLONE_PARENT	0x00008000
#define CLONE_NEWTIME	0x00000080
#define CLONE_DETACHED	0x00400000
/* Namespaces, which this kernel does not provide. */
#define CLONE_NEW_MASK	0x7e020000UL
#define CLONE_CLEAR_SIGHAND 0x100000000ULL
#define CLONE_INTO_CGROUP   0x200000000ULL
#define CLONE_LEGACY_FLAGS  0xffffffffULL

/* uapi struct clone_args (clone3); VER0 ends after tls, VER2 after cgroup. */
struct clone_args {
	u64 flags;
	u64 pidfd;
	u64 child_tid;
	u64 parent_tid;
	u64 exit_signal;
	u64 stack;
	u64 stack_size;
	u64 tls;
	u64 set_tid;
	u64 set_tid_size;
	u64 cgroup;
};
#define CLONE_ARGS_SIZE_VER0 64

struct kernel_clone_args {
	u64 flags;
	int __user *pidfd;
	int __user *child_tid;
	int __user *parent_tid;
	int exit_signal;
	unsigned long stack;
	unsigned long stack_size;
	unsigned long tls;
	struct pt_regs *regs;	/* probekit: the parent's frame, for the host to copy */
};

long kernel_clone(struct kernel_clone_args *args);
long do_fork(unsigned long clone_flags, unsigned long stack_start, struct pt_regs *regs,
	     unsigned long stack_size, int __user *parent_tidptr, int __user *child_tidptr);

#endif
