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
#include <linux/fs.h>
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

/* A file mapping's struct file (fdget); anonymous mappings get file = NULL. The host maps from the frame. */
noinline unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len, unsigned long prot,
				       unsigned long flags, unsigned long fd, unsigned long pgoff)
{
	struct fd f = { NULL, 0 };
	unsigned long ret;

	if (!(flags & MAP_ANONYMOUS)) {
		f = fdget(fd);
		if (!f.file)
			return -EBADF;
	}
	ret = vm_mmap_pgoff(f.file, addr, len, prot, flags, pgoff);
	if (f.file)
		fdput(f);
	return ret;
}

/* Leaf: unmap (the host's VMAs and page tables). */
noinline int do_munmap(void *mm, unsigned long start, size_t len, void *uf)
{
	(void)mm;
	(void)start;
	(void)len;
	(void)uf;
	return (int)host_syscall(current_pt_regs());
}

noinline int __vm_munmap(unsigned long start, size_t len, bool unlock)
{
	(void)unlock;
	return do_munmap(NULL, start, len, NULL);
}

noinline long sys_munmap(unsigned long addr, size_t len)
{
	return __vm_munmap(addr, len, true);
}
