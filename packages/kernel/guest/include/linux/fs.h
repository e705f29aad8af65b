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
 * struct file: the open file itself lives on the host; this is its guest
 * face (one per open file, shared by dup'ed descriptors and forked
 * processes), made by the host the first time fdget() asks for it. f_host
 * names it to the host's leaves. pos is NULL for read(2)/write(2) (the host
 * keeps the file position), else the offset to use and advance.
 */
struct file;

struct file_operations {
	ssize_t (*read)(struct file *file, char __user *buf, size_t count, loff_t *pos);
	ssize_t (*write)(struct file *file, const char __user *buf, size_t count, loff_t *pos);
};

struct file {
	const struct file_operations *f_op;	/* set by fdget from f_kind */
	unsigned int f_flags;			/* O_* as opened */
	unsigned int f_kind;			/* FILE_KIND_* (the host's inode type) */
	unsigned long f_host;			/* the host's id for the open file */
};

_Static_assert(__builtin_offsetof(struct file, f_flags) == FILE_F_FLAGS, "file");
_Static_assert(__builtin_offsetof(struct file, f_kind) == FILE_F_KIND, "file");
_Static_assert(__builtin_offsetof(struct file, f_host) == FILE_F_HOST, "file");

extern const struct file_operations pipefifo_fops;
extern const struct file_operations host_file_fops;

/* What fdget returns: the file, and whether fdput must drop a reference (a shared descriptor table). */
struct fd {
	struct file *file;
	unsigned int flags;
};

struct fd fdget(unsigned int fd);
void fdput(struct fd f);
ssize_t vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos);
ssize_t vfs_write(struct file *file, const char __user *buf, size_t count, loff_t *pos);
long do_sys_open(int dfd, const char __user *filename, int flags, umode_t mode);
int do_execve(struct filename *filename, const char __user *const __user *argv,
	      const char __user *const __user *envp);

/* This CPU's bounce buffer for vfs_read/vfs_write. */
char *rw_bounce_buffer(void);

#endif
