/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_MM_H
#define _LINUX_MM_H

#include <linux/types.h>
#include <abi.h>

#define PAGE_SHIFT	12
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PAGE_ALIGN(x)	(((x) + PAGE_SIZE - 1) & PAGE_MASK)

#define MAP_ANONYMOUS	0x20

struct file;
struct list_head;

unsigned long do_mmap(struct file *file, unsigned long addr, unsigned long len,
		      unsigned long prot, unsigned long flags, unsigned long vm_flags,
		      unsigned long pgoff, unsigned long *populate, struct list_head *uf);
unsigned long vm_mmap_pgoff(struct file *file, unsigned long addr, unsigned long len,
			    unsigned long prot, unsigned long flag, unsigned long pgoff);
unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len, unsigned long prot,
			      unsigned long flags, unsigned long fd, unsigned long pgoff);

#endif
