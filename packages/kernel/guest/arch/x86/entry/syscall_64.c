// SPDX-License-Identifier: MIT
/*
 * The x86-64 syscall entry wrappers, as Linux's SYSCALL_DEFINE makes them:
 * __x64_sys_NAME(regs) takes the arguments from the frame (di si dx r10 r8
 * r9) and calls sys_NAME with them. do_syscall_64 dispatches to these;
 * tracing tools probe either level (the wrapper sees regs, sys_* the
 * arguments by name).
 */
#include <linux/sched.h>
#include <linux/syscalls.h>

#define U(x) ((void __user *)(x))

noinline long __x64_sys_read(const struct pt_regs *regs)
{
	return sys_read(regs->di, U(regs->si), regs->dx);
}

noinline long __x64_sys_write(const struct pt_regs *regs)
{
	return sys_write(regs->di, U(regs->si), regs->dx);
}

noinline long __x64_sys_open(const struct pt_regs *regs)
{
	return sys_open(U(regs->di), (int)regs->si, (umode_t)regs->dx);
}

noinline long __x64_sys_openat(const struct pt_regs *regs)
{
	return sys_openat((int)regs->di, U(regs->si), (int)regs->dx, (umode_t)regs->r10);
}

noinline long __x64_sys_close(const struct pt_regs *regs)
{
	return sys_close(regs->di);
}

noinline long __x64_sys_mmap(const struct pt_regs *regs)
{
	return sys_mmap(regs->di, regs->si, regs->dx, regs->r10, regs->r8, regs->r9);
}

noinline long __x64_sys_nanosleep(const struct pt_regs *regs)
{
	return sys_nanosleep(U(regs->di), U(regs->si));
}

noinline long __x64_sys_clone(const struct pt_regs *regs)
{
	return sys_clone(regs->di, regs->si, U(regs->dx), U(regs->r10), regs->r8);
}

noinline long __x64_sys_fork(const struct pt_regs *regs)
{
	(void)regs;
	return sys_fork();
}

noinline long __x64_sys_vfork(const struct pt_regs *regs)
{
	(void)regs;
	return sys_vfork();
}

noinline long __x64_sys_execve(const struct pt_regs *regs)
{
	return sys_execve(U(regs->di), U(regs->si), U(regs->dx));
}

noinline void __noreturn __x64_sys_exit(const struct pt_regs *regs)
{
	sys_exit((int)regs->di);
}

noinline long __x64_sys_munmap(const struct pt_regs *regs)
{
	return sys_munmap(regs->di, regs->si);
}

noinline long __x64_sys_fsync(const struct pt_regs *regs)
{
	return sys_fsync(regs->di);
}

noinline long __x64_sys_fdatasync(const struct pt_regs *regs)
{
	return sys_fdatasync(regs->di);
}

noinline long __x64_sys_mkdir(const struct pt_regs *regs)
{
	return sys_mkdir(U(regs->di), (umode_t)regs->si);
}

noinline long __x64_sys_mkdirat(const struct pt_regs *regs)
{
	return sys_mkdirat((int)regs->di, U(regs->si), (umode_t)regs->dx);
}

noinline long __x64_sys_unlink(const struct pt_regs *regs)
{
	return sys_unlink(U(regs->di));
}

noinline long __x64_sys_unlinkat(const struct pt_regs *regs)
{
	return sys_unlinkat((int)regs->di, U(regs->si), (int)regs->dx);
}

noinline long __x64_sys_kill(const struct pt_regs *regs)
{
	return sys_kill((int)regs->di, (int)regs->si);
}

noinline long __x64_sys_tkill(const struct pt_regs *regs)
{
	return sys_tkill((int)regs->di, (int)regs->si);
}

noinline long __x64_sys_tgkill(const struct pt_regs *regs)
{
	return sys_tgkill((int)regs->di, (int)regs->si, (int)regs->dx);
}

noinline long __x64_sys_futex(const struct pt_regs *regs)
{
	return sys_futex(U(regs->di), (int)regs->si, (u32)regs->dx, U(regs->r10), U(regs->r8),
			 (u32)regs->r9);
}

noinline long __x64_sys_clock_nanosleep(const struct pt_regs *regs)
{
	return sys_clock_nanosleep((int)regs->di, (int)regs->si, U(regs->dx), U(regs->r10));
}

noinline void __noreturn __x64_sys_exit_group(const struct pt_regs *regs)
{
	sys_exit_group((int)regs->di);
}

noinline long __x64_sys_clone3(const struct pt_regs *regs)
{
	return sys_clone3(U(regs->di), regs->si);
}
