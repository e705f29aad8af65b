// SPDX-License-Identifier: MIT
/*
 * The C side of kernel entry and exit.
 */
#include <linux/errno.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/syscalls.h>
#include <linux/tracehook.h>
#include <asm/hypercall.h>
#include <asm/irqflags.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

/*
 * The system call dispatcher. Linux indexes sys_call_table[]; a switch
 * does the same and gcc turns it into a jump table - an indirect jump
 * through .rodata, which an optimizing kprobe must recognise and refuse to
 * relocate. Numbers the guest does not implement go to the host whole.
 */
/* Leaves: the tracehooks of a traced task's syscalls (_TIF_SYSCALL_TRACE). */
/*
 * 0: run the call; 1: a tracer stopped the task at this entry (report again
 * once it is woken); 2: a tracer aborted the call (it returns regs->ax,
 * -ENOSYS unless the tracer put something else; its exit is still reported).
 */
noinline long tracehook_report_syscall_entry(struct pt_regs *regs, unsigned long resumed)
{
	return (long)hypercall2(HC_SYSCALL_TRACE_ENTER, regs, resumed);
}

noinline void tracehook_report_syscall_exit(struct pt_regs *regs)
{
	hypercall1(HC_SYSCALL_TRACE_EXIT, regs);
}


/*
 * syscall_trace_enter: report the call to the task's tracers, which may
 * hold the task here (and be asked again when it is woken), change the
 * arguments, or skip the call: abort it, or set orig_ax to -1 (either way
 * it returns regs->ax, -ENOSYS unless the tracer put something else).
 */
static noinline long syscall_trace_enter(struct pt_regs *regs)
{
	unsigned long resumed = 0;
	long r;

	/* A tracer that stopped the task here reports again when it wakes (utrace's SYSCALL_RESUMED). */
	while ((r = tracehook_report_syscall_entry(regs, resumed)) == 1) {
		tracehook_stop();
		resumed = 1;
	}
	return r == 2 ? -1L : (long)regs->orig_ax;
}

static noinline void syscall_exit_work(struct pt_regs *regs)
{
	tracehook_report_syscall_exit(regs);
	tracehook_stop();
}

asmlinkage noinline void do_syscall_64(struct pt_regs *regs, int nr)
{
	long ret;

	local_irq_enable();	/* the kernel runs with interrupts on (but is not preemptible) */
	if (unlikely(READ_ONCE(current->flags) & _TIF_SYSCALL_TRACE)) {
		nr = (int)syscall_trace_enter(regs);
		if (nr < 0)
			goto out;
	}

	switch (nr) {
	case __NR_read:			ret = __x64_sys_read(regs); break;
	case __NR_write:		ret = __x64_sys_write(regs); break;
	case __NR_open:			ret = __x64_sys_open(regs); break;
	case __NR_close:		ret = __x64_sys_close(regs); break;
	case __NR_mmap:			ret = __x64_sys_mmap(regs); break;
	case __NR_munmap:		ret = __x64_sys_munmap(regs); break;
	case __NR_nanosleep:		ret = __x64_sys_nanosleep(regs); break;
	case __NR_clone:		ret = __x64_sys_clone(regs); break;
	case __NR_fork:			ret = __x64_sys_fork(regs); break;
	case __NR_vfork:		ret = __x64_sys_vfork(regs); break;
	case __NR_execve:		ret = __x64_sys_execve(regs); break;
	case __NR_exit:			__x64_sys_exit(regs);		/* never returns */
	case __NR_fsync:		ret = __x64_sys_fsync(regs); break;
	case __NR_fdatasync:		ret = __x64_sys_fdatasync(regs); break;
	case __NR_mkdir:		ret = __x64_sys_mkdir(regs); break;
	case __NR_unlink:		ret = __x64_sys_unlink(regs); break;
	case __NR_kill:			ret = __x64_sys_kill(regs); break;
	case __NR_tkill:		ret = __x64_sys_tkill(regs); break;
	case __NR_futex:		ret = __x64_sys_futex(regs); break;
	case __NR_clock_nanosleep:	ret = __x64_sys_clock_nanosleep(regs); break;
	case __NR_exit_group:		__x64_sys_exit_group(regs);	/* never returns */
	case __NR_tgkill:		ret = __x64_sys_tgkill(regs); break;
	case __NR_openat:		ret = __x64_sys_openat(regs); break;
	case __NR_mkdirat:		ret = __x64_sys_mkdirat(regs); break;
	case __NR_unlinkat:		ret = __x64_sys_unlinkat(regs); break;
	case __NR_clone3:		ret = __x64_sys_clone3(regs); break;
	default:			ret = sys_ni_host(regs); break;
	}
	/* The result goes into the frame (execve's host half returns the rax the new program starts with). */
	regs->ax = ret;
out:
	syscall_exit_to_user_mode(regs);
}

/*
 * Leaf: get_signal - dequeue the first deliverable signal and take its
 * action (the host's half: a handler's frame on the user stack via
 * handle_signal, ignoring it, or stopping the group), and settle a syscall a
 * signal cut short: EINTR, or rewind to the syscall instruction (-ERESTART*
 * codes in regs->ax, with SA_RESTART honoured as Linux does). Returns 1 when
 * the signal's action ends the process: the task then leaves through
 * do_group_exit(current->exit_code). (Linux's get_signal calls
 * do_group_exit itself; here its caller does, so the host never runs guest
 * code.)
 */
noinline int get_signal(struct pt_regs *regs)
{
	return (int)hypercall1(HC_SIGNAL, regs);
}

noinline long arch_do_signal_or_restart(struct pt_regs *regs)
{
	return get_signal(regs);
}

/* Leaf: the other return-to-user work (rseq's notify-resume, the tracehooks' safe point). */
noinline void resume_user_mode_work(struct pt_regs *regs)
{
	hypercall1(HC_NOTIFY_RESUME, regs);
}

static __always_inline unsigned long read_thread_flags(void)
{
	return READ_ONCE(current->flags);
}

/* regs->ax is one of -ERESTART_RESTARTBLOCK..-ERESTARTSYS on a syscall's frame (one compare on the fast path). */
static __always_inline bool syscall_restart_pending(struct pt_regs *regs)
{
	return unlikely(regs->ax + ERESTART_RESTARTBLOCK <= ERESTART_RESTARTBLOCK - ERESTARTSYS) &&
	       (long)regs->orig_ax >= 0;
}

/*
 * Return-to-user work (kernel/entry/common.c's exit_to_user_mode_loop):
 * wake whom the host has ready, reschedule if asked, deliver signals, do
 * the notify-resume work - until nothing is left. Entered and left with
 * interrupts off, so no tick can set need_resched after the last check.
 */
noinline void exit_to_user_mode(struct pt_regs *regs)
{
	unsigned long ti_work = read_thread_flags();

	/* A syscall a signal cut short is settled even if the signal has gone since. */
	if (syscall_restart_pending(regs))
		ti_work |= _TIF_SIGPENDING;
	while ((ti_work & (_TIF_SIGPENDING | _TIF_NOTIFY_RESUME)) || this_cpu_read(need_resched) ||
	       this_cpu_read(ttwu_pending)) {
		local_irq_enable();
		if (this_cpu_read(ttwu_pending))
			sched_ttwu_pending();
		if (this_cpu_read(need_resched))
			schedule();
		if ((ti_work & _TIF_SIGPENDING) && arch_do_signal_or_restart(regs))
			do_group_exit(current->exit_code);
		if (ti_work & _TIF_NOTIFY_RESUME)
			resume_user_mode_work(regs);
		local_irq_disable();
		ti_work = read_thread_flags();
	}
}
NOKPROBE_SYMBOL(exit_to_user_mode);

noinline void syscall_exit_to_user_mode(struct pt_regs *regs)
{
	/* Every traced call's exit is reported, a skipped one's and rt_sigreturn's (orig_ax -1) too. */
	if (unlikely(READ_ONCE(current->flags) & (_TIF_SYSCALL_TRACE | _TIF_SINGLESTEP)))
		syscall_exit_work(regs);
	local_irq_disable();
	exit_to_user_mode(regs);
}

/*
 * ret_from_fork's way out: a forked child returns from the call that made
 * it (its exit is reported like any call's); a task the kernel started
 * (spawn, orig_ax -1) made no call to report.
 */
asmlinkage noinline void ret_from_fork_to_user_mode(struct pt_regs *regs)
{
	if ((long)regs->orig_ax >= 0)
		syscall_exit_to_user_mode(regs);
	else {
		local_irq_disable();
		exit_to_user_mode(regs);
	}
}
NOKPROBE_SYMBOL(ret_from_fork_to_user_mode);

/*
 * Called by common_interrupt_return after every exception and interrupt.
 * Going back to user mode: the same work as after a syscall. Going back to
 * kernel code: nothing (the kernel is not preemptible; an interrupted idle
 * loop sees need_resched itself).
 */
asmlinkage noinline void irqentry_exit(struct pt_regs *regs)
{
	if (user_mode(regs))
		exit_to_user_mode(regs);
}
NOKPROBE_SYMBOL(irqentry_exit);
