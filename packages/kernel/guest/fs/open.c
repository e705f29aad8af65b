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

#define O_ACCMODE	00000003
#define O_EXCL		00000200
#define O_NOCTTY	00000400
#define O_TRUNC		00001000
#define O_APPEND	00002000
#define O_NONBLOCK	00004000
#define O_DSYNC		00010000
#define FASYNC		00020000
#define O_DIRECT	00040000
#define O_LARGEFILE	00100000
#define O_DIRECTORY	00200000
#define O_NOFOLLOW	00400000
#define O_NOATIME	01000000
#define O_CLOEXEC	02000000
#define __O_SYNC	04000000
#define O_PATH		010000000
#define __O_TMPFILE	020000000

#define VALID_OPEN_FLAGS \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | __O_SYNC | O_DSYNC | \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH | __O_TMPFILE)
#define O_PATH_FLAGS	(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define WILL_CREATE(flags)	((flags) & (O_CREAT | __O_TMPFILE))

#define MAY_WRITE	0x00000002
#define MAY_READ	0x00000004
#define ACC_MODE(x)	("\004\002\006\006"[(x) & O_ACCMODE])

/*
 * Leaf: the host's file system resolves the path (relative to dfd), opens
 * the file and installs a descriptor (Linux's path_openat -> do_open ->
 * vfs_open, and fd_install). It gets open_how's flags (O_CLOEXEC too, for
 * the descriptor).
 */
noinline long vfs_open(struct filename *name, const struct open_flags *op, int dfd)
{
	return hypercall4(HC_FILE_OPEN, name->name, op->open_flag, op->mode, dfd);
}

noinline long do_filp_open(int dfd, struct filename *pathname, const struct open_flags *op)
{
	return vfs_open(pathname, op, dfd);
}

/*
 * The flag combinations open(2) refuses (EINVAL), before the name is even
 * copied in: O_DIRECTORY with O_CREAT, O_TMPFILE without O_DIRECTORY or
 * without write access. Unknown flags were dropped by build_open_how.
 */
static noinline int build_open_flags(const struct open_how *how, struct open_flags *op)
{
	u64 flags = how->flags & ~(u64)O_CLOEXEC;
	int acc_mode = ACC_MODE(flags);

	op->mode = WILL_CREATE(flags) ? (umode_t)(how->mode & S_IALLUGO) : 0;
	if ((flags & (O_DIRECTORY | O_CREAT)) == (O_DIRECTORY | O_CREAT))
		return -EINVAL;
	if (flags & __O_TMPFILE) {
		if (!(flags & O_DIRECTORY))
			return -EINVAL;
		if (!(acc_mode & MAY_WRITE))
			return -EINVAL;
	}
	if (flags & O_PATH)
		acc_mode = 0;
	if (flags & O_TRUNC)
		acc_mode |= MAY_WRITE;
	op->open_flag = (int)how->flags;
	op->acc_mode = acc_mode;
	op->intent = 0;
	op->lookup_flags = 0;
	return 0;
}

/* open(2)'s flags as open_how: unknown bits dropped, O_PATH keeping its few, a mode only for a creation. */
static struct open_how build_open_how(int flags, umode_t mode)
{
	struct open_how how = { .flags = (u64)(unsigned int)flags & VALID_OPEN_FLAGS, .mode = mode & S_IALLUGO };

	if (how.flags & O_PATH)
		how.flags &= O_PATH_FLAGS;
	if (!WILL_CREATE(how.flags))
		how.mode = 0;
	return how;
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
	struct open_how how = build_open_how(flags, mode);

	return do_sys_openat2(dfd, filename, &how);
}

/* A 64-bit kernel opens every file O_LARGEFILE (force_o_largefile). */
noinline long sys_open(const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(AT_FDCWD, filename, flags | O_LARGEFILE, mode);
}

noinline long sys_openat(int dfd, const char __user *filename, int flags, umode_t mode)
{
	return do_sys_open(dfd, filename, flags | O_LARGEFILE, mode);
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
