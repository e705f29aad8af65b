// SPDX-License-Identifier: MIT
/*
 * exit and exit_group, and death by a signal (get_signal's do_group_exit).
 * The host releases the task's resources and wakes its parent; then the
 * task switches away for good (do_task_dead) and the next task's
 * finish_task_switch frees its kernel stack.
 */
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>
#include <linux/tracehook.h>

/*
 * Leaf: the host's half of do_exit (exit_mm, exit_files, exit_notify...):
 * current becomes a zombie (TASK_DEAD), its parent hears SIGCHLD.
 */
noinline void exit_notify(long code)
{
	hypercall1(HC_EXIT, code);
}

/*
 * Leaf: tracehook_report_exit - the task begins to exit, its state still
 * whole; tracers may change the code, or hold the task here before anything
 * is torn down (utrace's report_exit with UTRACE_STOP).
 */
noinline long tracehook_report_exit(long code)
{
	return (long)hypercall1(HC_EXIT_REPORT, code);
}

/*
 * Leaf: zap_other_threads - the other threads of current's process are
 * killed (SIGNAL_GROUP_EXIT); returns the group's exit code.
 */
noinline long zap_other_threads(long code)
{
	return (long)hypercall1(HC_ZAP_OTHER_THREADS, code);
}

/*
 * code is a wait(2) status: (status & 0xff) << 8, or the signal that killed
 * it. Every task's end comes through here, a whole group's too (as Linux's
 * do_group_exit calls it), so a probe on do_exit sees every exit.
 */
noinline __noreturn void do_exit(long code)
{
	code = tracehook_report_exit(code);
	tracehook_stop();
	exit_notify(code);
	do_task_dead();
}

noinline __noreturn void do_group_exit(int exit_code)
{
	do_exit(zap_other_threads(exit_code));
}

noinline __noreturn void sys_exit(int error_code)
{
	do_exit((error_code & 0xff) << 8);
}

noinline __noreturn void sys_exit_group(int error_code)
{
	do_group_exit((error_code & 0xff) << 8);
}
