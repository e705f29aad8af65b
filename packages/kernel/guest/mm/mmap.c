// SPDX-License-Identifier: MIT
/*
 * mmap(2) as Linux 4.x routes it: sys_mmap -> ksys_mmap_pgoff ->
 * vm_mmap_pgoff -> do_mmap. do_mmap keeps that kernel's nine-argument
 * signature, so its last three arguments (pgoff, populate, uf) arrive on
 * the stack: the case a jprobe's "registers then stack" mirroring is for.
 * The address-space work itself is the host's (it owns the page tables):
 * do_mmap is the leaf that hands it the syscall frame.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/syscalls.h>
#include <asm/percpu.h>

noinline unsigned long do_mmap(struct file *file, unsigned long addr, unsigned long len,
			       unsigned long prot, unsigned long flags, unsigned long vm_flags,
			       unsigned long pgoff, unsigned long *populate, struct list_head *uf)
{
	(void)file;
	(void)vm_flags;
	(void)uf;
	if (!len)
		return -EINVAL;
	/* Offset overflow, as do_mmap checks before anything else. */
	if ((pgoff + (PAGE_ALIGN(len) >> PAGE_SHIFT)) < pgoff)
		return -EOVERFLOW;
	*populate = 0;
	return sys_ni_host(current_pt_regs());
}

/* mm/util.c: take mmap_lock, map, populate (the host maps eagerly). */
noinline unsigned long vm_mmap_pgoff(struct file *file, unsigned long addr, unsigned long len,
				     unsigned long prot, unsigned long flag, unsigned long pgoff)
{
	unsigned long populate;

	return do_mmap(file, addr, len, prot, flag, 0, pgoff, &populate, NULL);
}

/*
 * The fd stays an integer here: this kernel has no struct file, and the
 * host resolves the fd from the frame. Anonymous mappings get file = NULL.
 */
noinline unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len, unsigned long prot,
				       unsigned long flags, unsigned long fd, unsigned long pgoff)
{
	struct file *file = NULL;

	if (!(flags & MAP_ANONYMOUS))
		file = (struct file *)fd;
	return vm_mmap_pgoff(file, addr, len, prot, flags, pgoff);
}
