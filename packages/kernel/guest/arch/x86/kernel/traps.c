// SPDX-License-Identifier: MIT
/*
 * Exception handlers (the C half of the idtentry stubs in entry_64.S).
 *
 * Every exception first goes down the die notifier chain: that is how
 * kprobes (int3, single-step #DB, faults while single-stepping) and uprobes
 * see their traps. If a notifier returns NOTIFY_STOP the trap was theirs and
 * we simply return through the (possibly rewritten) frame. Otherwise:
 * from user mode the host decides (signal, demand paging, ...); from kernel
 * mode the exception table may have a fixup; if not, it is an oops.
 *
 * All of this runs while a kprobe is being handled, so it is blacklisted.
 */
#include <linux/extable.h>
#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>
#include <asm/special_insns.h>

/*
 * Leaf: hand an exception to the host. fatal = EXC_FATAL for an oops.
 * Returns 1 if the host handled it (and maybe rewrote the frame).
 */
noinline long host_exception(struct pt_regs *regs, int trapnr, long error_code, int fatal,
			     unsigned long address)
{
	return hypercall5(HC_EXCEPTION, regs, trapnr, error_code, fatal, address);
}
NOKPROBE_SYMBOL(host_exception);

static void show_regs(struct pt_regs *regs)
{
	printk("RIP: %04lx:%016lx EFLAGS: %08lx\n", regs->cs, regs->ip, regs->flags);
	printk("RSP: %04lx:%016lx ORIG_RAX: %016lx\n", regs->ss, regs->sp, regs->orig_ax);
	printk("RAX: %016lx RBX: %016lx RCX: %016lx\n", regs->ax, regs->bx, regs->cx);
	printk("RDX: %016lx RSI: %016lx RDI: %016lx\n", regs->dx, regs->si, regs->di);
	printk("RBP: %016lx R08: %016lx R09: %016lx\n", regs->bp, regs->r8, regs->r9);
	printk("R10: %016lx R11: %016lx R12: %016lx\n", regs->r10, regs->r11, regs->r12);
	printk("R13: %016lx R14: %016lx R15: %016lx\n", regs->r13, regs->r14, regs->r15);
}

/*
 * A kernel-mode exception nobody could handle. Print it, tell the host, and
 * halt this CPU - unless the oops happened in a task (the host says 1): that
 * task dies, as make_task_dead() makes it, and the CPU goes on with others.
 */
noinline void die(const char *str, struct pt_regs *regs, long err, int trapnr)
{
	if (notify_die(DIE_OOPS, str, regs, err, trapnr, SIGSEGV) == NOTIFY_STOP)
		return;
	printk("%s: %04lx [#1] CPU: %lu\n", str, err & 0xffff, smp_processor_id());
	show_regs(regs);
	if (host_exception(regs, trapnr, err, EXC_FATAL, 0) == 1)
		do_exit(SIGSEGV);	/* make_task_dead() */
	halt_forever();
}
NOKPROBE_SYMBOL(die);

/* After the notifiers declined: user faults go to the host, kernel faults to the fixup or die(). */
noinline void do_trap(int trapnr, int signr, const char *str, struct pt_regs *regs, long error_code)
{
	(void)signr;
	if (user_mode(regs)) {
		host_exception(regs, trapnr, error_code, EXC_FIRST_CHANCE, 0);
		return;
	}
	if (fixup_exception(regs, trapnr))
		return;
	die(str, regs, error_code, trapnr);
}
NOKPROBE_SYMBOL(do_trap);

static void do_error_trap(struct pt_regs *regs, long error_code, const char *str,
			  int trapnr, int signr)
{
	if (notify_die(DIE_TRAP, str, regs, error_code, trapnr, signr) == NOTIFY_STOP)
		return;
	do_trap(trapnr, signr, str, regs, error_code);
}

asmlinkage void exc_divide_error(struct pt_regs *regs)
{
	do_error_trap(regs, 0, "divide error", X86_TRAP_DE, SIGFPE);
}
NOKPROBE_SYMBOL(exc_divide_error);

asmlinkage void exc_invalid_op(struct pt_regs *regs)
{
	do_error_trap(regs, 0, "invalid opcode", X86_TRAP_UD, SIGILL);
}
NOKPROBE_SYMBOL(exc_invalid_op);

#ifndef X86_TRAP_XF
#define X86_TRAP_XF		19
#endif

/*
 * #MF and #XM (math_error): from user mode the host sends SIGFPE with the
 * si_code fpu__exception_code() computes from the FPU state.
 */
asmlinkage void exc_coprocessor_error(struct pt_regs *regs)
{
	do_error_trap(regs, 0, "coprocessor error", X86_TRAP_MF, SIGFPE);
}
NOKPROBE_SYMBOL(exc_coprocessor_error);

asmlinkage void exc_simd_coprocessor_error(struct pt_regs *regs)
{
	do_error_trap(regs, 0, "simd exception", X86_TRAP_XF, SIGFPE);
}
NOKPROBE_SYMBOL(exc_simd_coprocessor_error);

/*
 * int3: RIP already points after the 0xcc. A kprobe's notifier recognises
 * its breakpoint at regs->ip - 1, runs the pre-handler, and arranges the
 * single-step (regs->ip and regs->flags.TF) before returning NOTIFY_STOP.
 */
noinline void do_int3(struct pt_regs *regs, long error_code)
{
	if (notify_die(DIE_INT3, "int3", regs, error_code, X86_TRAP_BP, SIGTRAP) == NOTIFY_STOP)
		return;
	do_trap(X86_TRAP_BP, SIGTRAP, "int3", regs, error_code);
}
NOKPROBE_SYMBOL(do_int3);

asmlinkage void exc_int3(struct pt_regs *regs)
{
	do_int3(regs, 0);
}
NOKPROBE_SYMBOL(exc_int3);

/*
 * #DB: after a single-step (TF) or a debug-register hit. The notifiers get
 * DR6 - which says why - as die_args.err; it is cleared for the next trap.
 */
noinline void do_debug(struct pt_regs *regs, long error_code)
{
	unsigned long dr6 = read_dr6();

	(void)error_code;
	write_dr6(0);
	if (notify_die(DIE_DEBUG, "debug", regs, (long)dr6, X86_TRAP_DB, SIGTRAP) == NOTIFY_STOP)
		return;
	do_trap(X86_TRAP_DB, SIGTRAP, "debug", regs, (long)dr6);
}
NOKPROBE_SYMBOL(do_debug);

asmlinkage void exc_debug(struct pt_regs *regs)
{
	do_debug(regs, 0);
}
NOKPROBE_SYMBOL(exc_debug);

asmlinkage void exc_nmi(struct pt_regs *regs)
{
	if (notify_die(DIE_NMI, "nmi", regs, 0, X86_TRAP_NMI, SIGINT) == NOTIFY_STOP)
		return;
	if (notify_die(DIE_NMIUNKNOWN, "nmi", regs, 0, X86_TRAP_NMI, SIGINT) == NOTIFY_STOP)
		return;
	printk("Uhhuh. NMI received for unknown reason on CPU %lu.\n", smp_processor_id());
}
NOKPROBE_SYMBOL(exc_nmi);

noinline void do_general_protection(struct pt_regs *regs, long error_code)
{
	if (notify_die(DIE_GPF, "general protection fault", regs, error_code,
		       X86_TRAP_GP, SIGSEGV) == NOTIFY_STOP)
		return;
	do_trap(X86_TRAP_GP, SIGSEGV, "general protection fault", regs, error_code);
}
NOKPROBE_SYMBOL(do_general_protection);

asmlinkage void exc_general_protection(struct pt_regs *regs, long error_code)
{
	do_general_protection(regs, error_code);
}
NOKPROBE_SYMBOL(exc_general_protection);

/*
 * Any vector without a handler of its own. Below 32 it is an exception
 * (#DF, #SS, #AC, ...); from 32 up an interrupt nobody asked for, which is
 * counted and otherwise ignored, as Linux does.
 */
asmlinkage void exc_unexpected(struct pt_regs *regs, long error_code, unsigned long vector)
{
	if (vector >= FIRST_EXTERNAL_VECTOR) {
		printk("spurious interrupt through vector %lx on CPU#%lu, should never happen.\n",
		       vector, smp_processor_id());
		return;
	}
	if (notify_die(DIE_TRAP, "unexpected exception", regs, error_code, (int)vector, SIGSEGV) ==
	    NOTIFY_STOP)
		return;
	do_trap((int)vector, SIGSEGV, "unexpected exception", regs, error_code);
}
NOKPROBE_SYMBOL(exc_unexpected);
