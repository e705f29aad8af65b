// SPDX-License-Identifier: MIT
/*
 * execve (fs/exec.c and fs/binfmt_elf.c's entry). The guest does the
 * layers - the path copied in, a struct linux_binprm, the binary handler -
 * and the host, at the leaf, loads the ELF and builds the new stack; it
 * reads argv and envp itself, from the old address space (regs->si,
 * regs->dx).
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/*
 * struct linux_binprm: what one exec is about. filename is at offset 0 (a
 * kernel string), so a probe reads the exec'd path as +0($arg1):string.
 */
struct linux_binprm {
	const char *filename;		/* the name of the binary as given */
	const char *interp;		/* the binary really executed (= filename: no #! or ld.so yet) */
	struct filename *file;
	struct pt_regs *regs;
	int argc, envc;
};

_Static_assert(__builtin_offsetof(struct linux_binprm, filename) == 0, "linux_binprm");

/* Leaf: on success the host has rewritten bprm->regs to start the new program (and switched CR3). */
noinline int load_elf_binary(struct linux_binprm *bprm)
{
	return (int)hypercall2(HC_EXECVE, bprm->filename, bprm->regs);
}

/* The binary formats: ELF is the one this kernel has. */
noinline int search_binary_handler(struct linux_binprm *bprm)
{
	return load_elf_binary(bprm);
}

noinline int exec_binprm(struct linux_binprm *bprm)
{
	return search_binary_handler(bprm);
}

noinline int bprm_execve(struct linux_binprm *bprm, int fd, struct filename *filename, int flags)
{
	(void)fd;
	(void)filename;
	(void)flags;
	return exec_binprm(bprm);
}

static noinline int do_execveat_common(int fd, struct filename *filename,
				       const char __user *const __user *argv,
				       const char __user *const __user *envp, int flags)
{
	struct linux_binprm bprm = { 0 };
	int retval;

	(void)argv;
	(void)envp;
	if (IS_ERR(filename))
		return (int)PTR_ERR(filename);
	bprm.filename = filename->name;
	bprm.interp = filename->name;
	bprm.file = filename;
	bprm.regs = current_pt_regs();
	retval = bprm_execve(&bprm, fd, filename, flags);
	putname(filename);
	return retval;
}

noinline int do_execve(struct filename *filename, const char __user *const __user *argv,
		       const char __user *const __user *envp)
{
	return do_execveat_common(AT_FDCWD, filename, argv, envp, 0);
}

noinline long sys_execve(const char __user *filename, const char __user *const __user *argv,
			 const char __user *const __user *envp)
{
	return do_execve(getname(filename), argv, envp);
}
