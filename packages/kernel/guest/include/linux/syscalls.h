/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_SYSCALLS_H
#define _LINUX_SYSCALLS_H

#include <linux/types.h>

struct pt_regs;

#define __NR_read		0
#define __NR_write		1
#define __NR_open		2
#define __NR_close		3
#define __NR_mmap		9
#define __NR_munmap		11
#define __NR_nanosleep		35
#define __NR_clone		56
#define __NR_fork		57
#define __NR_vfork		58
#define __NR_execve		59
#define __NR_exit		60
#define __NR_fsync		74
#define __NR_fdatasync		75
#define __NR_mkdir		83
#define __NR_unlink		87
#define __NR_kill		62
#define __NR_tkill		200
#define __NR_futex		202
#define __NR_clock_nanosleep	230
#define __NR_exit_group		231
#define __NR_tgkill		234
#define __NR_openat		257
#define __NR_mkdirat		258
#define __NR_unlinkat		263
#define __NR_clone3		435

long sys_read(unsigned int fd, char __user *buf, size_t count);
long sys_write(unsigned int fd, const char __user *buf, size_t count);
long sys_open(const char __user *filename, int flags, umode_t mode);
long sys_openat(int dfd, const char __user *filename, int flags, umode_t mode);
long sys_close(unsigned int fd);
long sys_mmap(unsigned long addr, unsigned long len, unsigned long prot, unsigned long flags,
	      unsigned long fd, unsigned long off);
long sys_clone(unsigned long clone_flags, unsigned long newsp, int __user *parent_tidptr,
	       int __user *child_tidptr, unsigned long tls);
long sys_fork(void);
struct clone_args;
long sys_clone3(struct clone_args __user *uargs, size_t size);
long sys_vfork(void);
long sys_execve(const char __user *filename, const char __user *const __user *argv,
		const char __user *const __user *envp);
void __noreturn sys_exit(int error_code);
void __noreturn sys_exit_group(int error_code);
long sys_ni_host(struct pt_regs *regs);
long host_syscall(struct pt_regs *regs);
struct __kernel_timespec;
long sys_nanosleep(struct __kernel_timespec __user *rqtp, struct __kernel_timespec __user *rmtp);
long sys_clock_nanosleep(int which_clock, int flags, const struct __kernel_timespec __user *rqtp,
			 struct __kernel_timespec __user *rmtp);
long sys_kill(int pid, int sig);
long sys_munmap(unsigned long addr, size_t len);
long sys_fsync(unsigned int fd);
long sys_fdatasync(unsigned int fd);
long sys_mkdir(const char __user *pathname, umode_t mode);
long sys_mkdirat(int dfd, const char __user *pathname, umode_t mode);
long sys_unlink(const char __user *pathname);
long sys_unlinkat(int dfd, const char __user *pathname, int flag);
long sys_tkill(int pid, int sig);
long sys_tgkill(int tgid, int pid, int sig);
long sys_futex(u32 __user *uaddr, int op, u32 val, const struct __kernel_timespec __user *utime,
	       u32 __user *uaddr2, u32 val3);

/* The x86-64 entry wrappers (arch/x86/entry/syscall_64.c). */
#define __X64_SYS(name) long __x64_sys_##name(const struct pt_regs *regs)
__X64_SYS(read); __X64_SYS(write); __X64_SYS(open); __X64_SYS(openat); __X64_SYS(close);
__X64_SYS(mmap); __X64_SYS(nanosleep); __X64_SYS(clone); __X64_SYS(fork); __X64_SYS(vfork);
__X64_SYS(execve); __X64_SYS(munmap); __X64_SYS(fsync); __X64_SYS(fdatasync); __X64_SYS(mkdir);
__X64_SYS(mkdirat); __X64_SYS(unlink); __X64_SYS(unlinkat); __X64_SYS(kill); __X64_SYS(tkill); __X64_SYS(tgkill); __X64_SYS(futex); __X64_SYS(clock_nanosleep); __X64_SYS(clone3);
void __noreturn __x64_sys_exit(const struct pt_regs *regs);
void __noreturn __x64_sys_exit_group(const struct pt_regs *regs);

asmlinkage void do_syscall_64(struct pt_regs *regs, int nr);
void syscall_exit_to_user_mode(struct pt_regs *regs);
void exit_to_user_mode(struct pt_regs *regs);
asmlinkage void irqentry_exit(struct pt_regs *regs);

#endif
