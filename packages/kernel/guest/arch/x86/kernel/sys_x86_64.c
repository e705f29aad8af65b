// SPDX-License-Identifier: MIT
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/syscalls.h>

/* The byte offset must be page aligned; the rest works in pages. */
noinline long sys_mmap(unsigned long addr, unsigned long len, unsigned long prot,
		       unsigned long flags, unsigned long fd, unsigned long off)
{
	if (off & ~PAGE_MASK)
		return -EINVAL;
	return (long)ksys_mmap_pgoff(addr, len, prot, flags, fd, off >> PAGE_SHIFT);
}
