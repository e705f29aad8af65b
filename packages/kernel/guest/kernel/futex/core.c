// SPDX-License-Identifier: MIT
/*
 * futex (kernel/futex/). The hash of waiters and the wake-ups are the
 * host's; the guest does the dispatch, and a waiter sleeps here, in
 * futex_wait, until futex_wake (its own or another task's) or a signal.
 */
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/wait.h>
#include <asm/percpu.h>

#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_PRIVATE_FLAG	128
#define FUTEX_CLOCK_REALTIME	256
#define FUTEX_CMD_MASK		(~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

/* Leaf: the host's futex operation on the current frame's arguments (-EWOULDSLEEP: queued, sleep). */
static noinline long futex_host(void)
{
	return host_syscall(current_pt_regs());
}

/* futex_wait(uaddr, flags, val, abs_time, bitset): sleep while *uaddr == val, until woken. */
noinline long futex_wait(u32 __user *uaddr, unsigned int flags, u32 val, void *abs_time, u32 bitset)
{
	(void)uaddr;
	(void)flags;
	(void)val;
	(void)abs_time;
	(void)bitset;
	return wait_event_host_call(futex_host(), TASK_INTERRUPTIBLE);
}

/* futex_wake(uaddr, flags, nr_wake, bitset): wake up to nr_wake waiters; how many woke. */
noinline long futex_wake(u32 __user *uaddr, unsigned int flags, int nr_wake, u32 bitset)
{
	(void)uaddr;
	(void)flags;
	(void)nr_wake;
	(void)bitset;
	return futex_host();
}

noinline long do_futex(u32 __user *uaddr, int op, u32 val, void *timeout, u32 __user *uaddr2, u32 val2,
		       u32 val3)
{
	unsigned int flags = op & FUTEX_PRIVATE_FLAG;

	(void)uaddr2;
	(void)val2;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
		val3 = ~0U;
		/* fallthrough */
	case FUTEX_WAIT_BITSET:
		return futex_wait(uaddr, flags, val, timeout, val3);
	case FUTEX_WAKE:
		val3 = ~0U;
		/* fallthrough */
	case FUTEX_WAKE_BITSET:
		return futex_wake(uaddr, flags, (int)val, val3);
	default:	/* requeue and the rest: the host whole */
		return wait_event_host_call(futex_host(), TASK_INTERRUPTIBLE);
	}
}

noinline long sys_futex(u32 __user *uaddr, int op, u32 val, const struct __kernel_timespec __user *utime,
			u32 __user *uaddr2, u32 val3)
{
	return do_futex(uaddr, op, val, (void *)utime, uaddr2, (u32)(unsigned long)utime, val3);
}
