// SPDX-License-Identifier: MIT
/*
 * open, openat, close.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/* Leaf: the host's file system resolves the path (relative to dfd) and installs an fd. */
noinline long do_filp_open(int dfd, struct filename *pathname, int flags, umode_t mode)
{
	return hypercall4(HC_FILE_OPEN, pathname->name, flags, mode, dfd);
}

noinline long do_sys_open(int dfd, const char __user *filename, int flags, umode_t mode)
{
	struct filename *tmp;
	long fd;

	/* build_open_flags(): a mode only means something when a file may be created. */
	if (!(flags & (O_CREAT | O_TMPFILE)))
		mode = 0;
	else
		mode &= S_IALLUGO;

	tmp = getname(filename);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);

	fd = do_filp_open(dfd, tmp, flags, mode);
	putname(tmp);
	return fd;
}

noinline long sys_open(const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(AT_FDCWD, filename, flags, mode);
}

noinline long sys_openat(int dfd, const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(dfd, filename, flags, mode);
}

/* Leaf: descriptors live on the host; hand it the whole call. */
noinline long close_fd(unsigned int fd)
{
	(void)fd;
	return hypercall1(HC_SYSCALL, current_pt_regs());
}

noinline long sys_close(unsigned int fd)
{
	return close_fd(fd);
}
