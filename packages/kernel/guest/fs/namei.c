// SPDX-License-Identifier: MIT
/*
 * getname: copy a path from user space into the kernel, with the checks
 * every path-taking system call shares.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/syscalls.h>
#include <asm/percpu.h>
#include <asm/uaccess.h>

/* Linux allocates from the names_cache slab; one buffer per CPU is enough here (no sleeping). */
static struct filename names_cache[NR_CPUS];

noinline struct filename *getname(const char __user *filename)
{
	struct filename *result = &names_cache[smp_processor_id()];
	long len;

	len = strncpy_from_user(result->iname, filename, PATH_MAX);
	if (unlikely(len < 0))
		return ERR_PTR(len);		/* -EFAULT: a bad pointer */
	if (unlikely(!len))
		return ERR_PTR(-ENOENT);	/* "" names nothing */
	if (unlikely(len == PATH_MAX))
		return ERR_PTR(-ENAMETOOLONG);	/* no NUL in PATH_MAX bytes */

	result->name = result->iname;
	result->uptr = filename;
	result->refcnt = 1;
	return result;
}

noinline void putname(struct filename *name)
{
	name->refcnt--;
}

/*
 * Directory operations. The directory tree is the host's, so there are no
 * real dentries: a struct dentry carries the name being created or removed
 * (d_name.name at Linux's offset, 40, so a probe reads it as tools do:
 * +0(+40($arg3)):string), and the leaf asks the host to do the current
 * system call on its own arguments.
 */
struct qstr {
	u64 hash_len;
	const unsigned char *name;
};

struct dentry {
	unsigned int d_flags;
	unsigned int d_seq;
	unsigned long d_hash[2];
	struct dentry *d_parent;
	struct qstr d_name;		/* the last component of the path */
};

_Static_assert(__builtin_offsetof(struct dentry, d_name.name) == 40, "dentry");

/* Leaf: the host's file system does the current syscall (unlink, mkdir...) on its arguments. */
static noinline long namei_host(void)
{
	return host_syscall(current_pt_regs());
}

noinline int vfs_unlink(void *idmap, void *dir, struct dentry *dentry, void **delegated_inode)
{
	(void)idmap;
	(void)dir;
	(void)dentry;
	(void)delegated_inode;
	return (int)namei_host();
}

noinline int vfs_mkdir(void *idmap, void *dir, struct dentry *dentry, umode_t mode)
{
	(void)idmap;
	(void)dir;
	(void)dentry;
	(void)mode;
	return (int)namei_host();
}

/* The dentry for a path's last component. */
static void last_component(struct dentry *dentry, struct filename *name)
{
	const char *p = name->name, *last = p;

	for (; *p; p++)
		if (*p == '/' && p[1])
			last = p + 1;
	*dentry = (struct dentry){ .d_name = { .hash_len = (u64)(p - last), .name = (const unsigned char *)last } };
}

noinline long do_unlinkat(int dfd, struct filename *name)
{
	struct dentry dentry;
	long ret;

	(void)dfd;
	if (IS_ERR(name))
		return PTR_ERR(name);
	last_component(&dentry, name);
	ret = vfs_unlink(NULL, NULL, &dentry, NULL);
	putname(name);
	return ret;
}

noinline long do_mkdirat(int dfd, struct filename *name, umode_t mode)
{
	struct dentry dentry;
	long ret;

	(void)dfd;
	if (IS_ERR(name))
		return PTR_ERR(name);
	last_component(&dentry, name);
	ret = vfs_mkdir(NULL, NULL, &dentry, mode);
	putname(name);
	return ret;
}

#define AT_REMOVEDIR	0x200

noinline long sys_unlink(const char __user *pathname)
{
	return do_unlinkat(AT_FDCWD, getname(pathname));
}

noinline long sys_unlinkat(int dfd, const char __user *pathname, int flag)
{
	if ((flag & ~AT_REMOVEDIR) != 0)
		return -EINVAL;
	if (flag & AT_REMOVEDIR)
		return namei_host();	/* rmdir: the host's */
	return do_unlinkat(dfd, getname(pathname));
}

noinline long sys_mkdir(const char __user *pathname, umode_t mode)
{
	return do_mkdirat(AT_FDCWD, getname(pathname), mode);
}

noinline long sys_mkdirat(int dfd, const char __user *pathname, umode_t mode)
{
	return do_mkdirat(dfd, getname(pathname), mode);
}
