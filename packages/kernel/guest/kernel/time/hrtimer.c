// SPDX-License-Identifier: MIT
/*
 * nanosleep and clock_nanosleep (kernel/time/hrtimer.c). The clock is the
 * host's (virtual time); the task sleeps here, in do_nanosleep, until its
 * deadline or a signal (then -ERESTARTNOHAND: EINTR for a handler, or the
 * same sleep again to the same deadline).
 */
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/wait.h>
#include <asm/percpu.h>

/* Leaf: the host's timer for the current frame's call (-EWOULDSLEEP until it expires). */
static noinline long hrtimer_host(void)
{
	return host_syscall(current_pt_regs());
}

noinline long do_nanosleep(void *t, int mode)
{
	(void)t;
	(void)mode;
	return wait_event_host_call(hrtimer_host(), TASK_INTERRUPTIBLE);
}

noinline long hrtimer_nanosleep(const struct __kernel_timespec __user *rqtp, int mode, int clockid)
{
	(void)clockid;
	return do_nanosleep((void *)rqtp, mode);
}

noinline long sys_nanosleep(struct __kernel_timespec __user *rqtp, struct __kernel_timespec __user *rmtp)
{
	(void)rmtp;
	return hrtimer_nanosleep(rqtp, 0, 1 /* CLOCK_MONOTONIC */);
}

noinline long sys_clock_nanosleep(int which_clock, int flags, const struct __kernel_timespec __user *rqtp,
				  struct __kernel_timespec __user *rmtp)
{
	(void)rmtp;
	return hrtimer_nanosleep(rqtp, flags, which_clock);
}
