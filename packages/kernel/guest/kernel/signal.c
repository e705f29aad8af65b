// SPDX-License-Identifier: MIT
/*
 * Sending signals (kernel/signal.c): kill, tkill and tgkill find the target
 * and check the signal in the guest, down to send_signal, whose leaf queues
 * it on the host (pending sets, wake-ups and delivery are the host's, see
 * get_signal). kill of a process group or of -1 goes to the host whole.
 */
#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/signal.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

#define _NSIG		64

static __always_inline bool valid_signal(unsigned long sig)
{
	return sig <= _NSIG;
}

/* Leaf: the live task with this pid, or NULL. */
noinline struct task_struct *find_task_by_vpid(int nr)
{
	return (struct task_struct *)hypercall1(HC_FIND_TASK, nr);
}

/* Leaf: queue the signal for t (type: the whole thread group or the one thread). */
noinline int send_signal(int sig, struct kernel_siginfo *info, struct task_struct *t, int type)
{
	return (int)hypercall4(HC_SEND_SIGNAL, sig, info, t, type);
}

noinline int do_send_sig_info(int sig, struct kernel_siginfo *info, struct task_struct *p, int type)
{
	return send_signal(sig, info, p, type);
}

/* check_kill_permission (root may signal anyone), then the signal; 0 only checks. */
noinline int group_send_sig_info(int sig, struct kernel_siginfo *info, struct task_struct *p, int type)
{
	if (!valid_signal(sig))
		return -EINVAL;
	if (!sig)
		return 0;
	return do_send_sig_info(sig, info, p, type);
}

noinline int kill_pid_info(int sig, struct kernel_siginfo *info, int pid)
{
	struct task_struct *p = find_task_by_vpid(pid);

	if (!p)
		return -ESRCH;
	return group_send_sig_info(sig, info, p, PIDTYPE_TGID);
}

static noinline int kill_something_info(int sig, struct kernel_siginfo *info, int pid)
{
	if (pid > 0)
		return kill_pid_info(sig, info, pid);
	return (int)host_syscall(current_pt_regs());	/* a process group, or every process */
}

static void prepare_kill_siginfo(int sig, struct kernel_siginfo *info, int code)
{
	*info = (struct kernel_siginfo){ .si_signo = sig, .si_code = code, .si_pid = current->tgid };
}

noinline long sys_kill(int pid, int sig)
{
	struct kernel_siginfo info;

	prepare_kill_siginfo(sig, &info, SI_USER);
	return kill_something_info(sig, &info, pid);
}

static noinline int do_tkill(int tgid, int pid, int sig)
{
	struct kernel_siginfo info;
	struct task_struct *p = find_task_by_vpid(pid);

	prepare_kill_siginfo(sig, &info, SI_TKILL);
	if (!p || (tgid > 0 && p->tgid != tgid))
		return -ESRCH;
	if (!valid_signal(sig))
		return -EINVAL;
	if (!sig)
		return 0;
	return do_send_sig_info(sig, &info, p, PIDTYPE_PID);
}

noinline long sys_tkill(int pid, int sig)
{
	if (pid <= 0)
		return -EINVAL;
	return do_tkill(0, pid, sig);
}

noinline long sys_tgkill(int tgid, int pid, int sig)
{
	if (pid <= 0 || tgid <= 0)
		return -EINVAL;
	return do_tkill(tgid, pid, sig);
}
