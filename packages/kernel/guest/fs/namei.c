// SPDX-License-Identifier: MIT
/*
 * getname: copy a path from user space into the kernel, with the checks
 * every path-taking system call shares.
 */
#include <linux/err.h>
#include <linux/fs.h>
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
