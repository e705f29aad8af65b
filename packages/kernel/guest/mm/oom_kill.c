// SPDX-License-Identifier: MIT
/*
 * The OOM killer (mm/oom_kill.c). When a page fault finds no free memory
 * (the guest's memory is the machine's, --memory), out_of_memory() picks
 * the process whose death frees the most and kills it with SIGKILL. The
 * badness scan over every process's pages is the host's leaf (it owns the
 * address spaces); the choice's use, the report and the kill are here.
 */
#include <linux/kernel.h>
#include <linux/oom.h>
#include <linux/sched.h>
#include <linux/signal.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * Leaf: oom_badness over every process (its resident pages and page
 * tables; there is no swap), the largest chosen, ties to the lowest pid.
 * oc->chosen is NULL when nothing can be killed, OOM_ABORT while an earlier
 * victim is still exiting (its memory is about to come back).
 */
noinline void select_bad_process(struct oom_control *oc)
{
	hypercall1(HC_OOM_SELECT, oc);
}

noinline void dump_header(struct oom_control *oc)
{
	printk("%s invoked oom-killer: order=0, oom_score_adj=0\n", current->comm);
}

/* Kill the chosen process, as __oom_kill_process does: the report, then SIGKILL to its thread group. */
noinline void oom_kill_process(struct oom_control *oc, const char *message)
{
	struct task_struct *victim = oc->chosen;
	struct kernel_siginfo info = { .si_signo = SIGKILL, .si_code = SI_KERNEL };

	dump_header(oc);
	do_send_sig_info(SIGKILL, &info, victim, PIDTYPE_TGID);
	printk("%s: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB, file-rss:%lukB, shmem-rss:0kB, UID:0 pgtables:%lukB oom_score_adj:0\n",
	       message, victim->pid, victim->comm, oc->total_vm, oc->anon_rss, oc->file_rss, oc->pgtables);
}

noinline bool out_of_memory(struct oom_control *oc)
{
	select_bad_process(oc);
	if (oc->chosen == (struct task_struct *)OOM_ABORT)
		return true;
	if (!oc->chosen) {
		dump_header(oc);
		printk("Out of memory and no killable processes...\n");
		return false;
	}
	oom_kill_process(oc, "Out of memory");
	return true;
}

/* A user page fault found no memory: kill something, then the fault is taken again. */
noinline void pagefault_out_of_memory(void)
{
	struct oom_control oc = { 0 };

	out_of_memory(&oc);
}
