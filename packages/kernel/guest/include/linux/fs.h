/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_FS_H
#define _LINUX_FS_H

#include <abi.h>
#include <linux/types.h>

#define AT_FDCWD	-100
#define O_CREAT		00000100
#define O_TMPFILE	020200000
#define S_IALLUGO	07777
#define MAX_RW_COUNT	0x7ffff000	/* INT_MAX & PAGE_MASK */
#define READ		0
#define WRITE		1

/* A path copied in from user space (one per CPU, like Linux's names_cache). */
struct filename {
	const char *name;		/* = iname */
	const char __user *uptr;	/* where it came from */
	int refcnt;
	char iname[PATH_MAX];
};

struct filename *getname(const char __user *filename);
void putname(struct filename *name);

/*
 * probekit has no struct file: files live on the host, so where Linux passes
 * a struct file * these take the descriptor. pos is NULL for read(2)/write(2)
 * (the host keeps the file position), else the offset to use and advance.
 */
ssize_t vfs_read(unsigned int fd, char __user *buf, size_t count, loff_t *pos);
ssize_t vfs_write(unsigned int fd, const char __user *buf, size_t count, loff_t *pos);
long do_sys_open(int dfd, const char __user *filename, int flags, umode_t mode);
int do_execve(struct filename *filename, const char __user *const __user *argv,
	      const char __user *const __user *envp);

/* This CPU's bounce buffer for vfs_read/vfs_write. */
char *rw_bounce_buffer(void);

#endif
