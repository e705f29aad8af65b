// SPDX-License-Identifier: MIT
/*
 * execve. The host loads the ELF and builds the new stack; it reads argv
 * and envp itself, from the old address space (regs->si, regs->dx).
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/* Leaf: on success the host has rewritten regs to start the new program (and switched CR3). */
noinline int exec_binprm(struct filename *filename, struct pt_regs *regs)
{
	return (int)hypercall2(HC_EXECVE, filename->name, regs);
}

noinline int do_execve(struct filename *filename, const char __user *const __user *argv,
		       const char __user *const __user *envp)
{
	int retval;

	(void)argv;
	(void)envp;
	if (IS_ERR(filename))
		return (int)PTR_ERR(filename);
	retval = exec_binprm(filename, current_pt_regs());
	putname(filename);
	return retval;
}

noinline long sys_execve(const char __user *filename, const char __user *const __user *argv,
			 const char __user *const __user *envp)
{
	return do_execve(getname(filename), argv, envp);
}
