// SPDX-License-Identifier: MIT
/*
 * open, openat, close.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/syscalls.h>
#include <asm/hypercall.h>
#include <asm/percpu.h>

/* struct open_how (openat2) and the open_flags build_open_flags makes of it. */
struct open_how {
	u64 flags;
	u64 mode;
	u64 resolve;
};

struct open_flags {
	int open_flag;
	umode_t mode;
	int acc_mode;
	int intent;
	int lookup_flags;
};

/*
 * Leaf: the host's file system resolves the path (relative to dfd), opens
 * the file and installs a descriptor (Linux's path_openat -> do_open ->
 * vfs_open, and fd_install).
 */
noinline long vfs_open(struct filename *name, const struct open_flags *op, int dfd)
{
	return hypercall4(HC_FILE_OPEN, name->name, op->open_flag, op->mode, dfd);
}

noinline long do_filp_open(int dfd, struct filename *pathname, const struct open_flags *op)
{
	return vfs_open(pathname, op, dfd);
}

/* A mode only means something when a file may be created. */
static noinline int build_open_flags(const struct open_how *how, struct open_flags *op)
{
	op->open_flag = (int)how->flags;
	op->mode = (how->flags & (O_CREAT | O_TMPFILE)) ? (umode_t)(how->mode & S_IALLUGO) : 0;
	op->acc_mode = 0;
	op->intent = 0;
	op->lookup_flags = 0;
	return 0;
}

noinline long do_sys_openat2(int dfd, const char __user *filename, struct open_how *how)
{
	struct open_flags op;
	struct filename *tmp;
	long fd = build_open_flags(how, &op);

	if (fd)
		return fd;
	tmp = getname(filename);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);
	fd = do_filp_open(dfd, tmp, &op);
	putname(tmp);
	return fd;
}

noinline long do_sys_open(int dfd, const char __user *filename, int flags, umode_t mode)
{
	struct open_how how = { .flags = (u64)(unsigned int)flags, .mode = mode };

	return do_sys_openat2(dfd, filename, &how);
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
