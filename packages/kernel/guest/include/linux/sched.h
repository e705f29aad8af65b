/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_SCHED_H
#define _LINUX_SCHED_H

#include <abi.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <asm/percpu.h>

struct pt_regs;

/*
 * struct task_struct: allocated and owned by the host (its tables live in
 * TypeScript); these are the fields guest code and the host share, at the
 * offsets abi.h gives. Every task has its own kernel stack of THREAD_SIZE
 * bytes with its pt_regs at the top; a switched-out task's rsp is thread_sp.
 */
struct task_struct {
	int pid;
	int tgid;
	unsigned int __state;		/* TASK_* */
	int on_cpu;			/* set by pick_next_task, cleared by finish_task_switch */
	char comm[16];
	unsigned long thread_sp;	/* thread.sp */
	void *stack;			/* the kernel stack's lowest address */
	unsigned long flags;		/* thread_info.flags: _TIF_* */
	int exit_code;			/* the wait status a fatal signal leaves */
};

_Static_assert(offsetof(struct task_struct, __state) == TASK_STATE, "task_struct");
_Static_assert(offsetof(struct task_struct, on_cpu) == TASK_ON_CPU, "task_struct");
_Static_assert(offsetof(struct task_struct, comm) == TASK_COMM, "task_struct");
_Static_assert(offsetof(struct task_struct, thread_sp) == TASK_THREAD_SP, "task_struct");
_Static_assert(offsetof(struct task_struct, stack) == TASK_STACK, "task_struct");
_Static_assert(offsetof(struct task_struct, flags) == TASK_FLAGS, "task_struct");
_Static_assert(offsetof(struct task_struct, exit_code) == TASK_EXIT_CODE, "task_struct");

/* What __switch_to_asm leaves on a switched-out task's stack (a new task's: ret_from_fork). */
struct inactive_task_frame {
	unsigned long r15, r14, r13, r12, bx, bp;
	unsigned long ret_addr;
};

_Static_assert(offsetof(struct inactive_task_frame, ret_addr) == FRAME_RET_ADDR, "frame");

static __always_inline bool signal_pending(struct task_struct *p)
{
	return READ_ONCE(p->flags) & _TIF_SIGPENDING;
}

void schedule(void);
void schedule_idle(void);
void __noreturn do_task_dead(void);
int wake_up_process(struct task_struct *p);
int try_to_wake_up(struct task_struct *p, unsigned int state, int wake_flags);
void wake_up_new_task(struct task_struct *p);
void sched_ttwu_pending(void);
struct task_struct *__switch_to(struct task_struct *prev_p, struct task_struct *next_p);
struct task_struct *__switch_to_asm(struct task_struct *prev, struct task_struct *next);	/* entry_64.S */
void __noreturn do_exit(long code);
void __noreturn do_group_exit(int exit_code);
void __noreturn cpu_idle(void);

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
