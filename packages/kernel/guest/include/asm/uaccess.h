/* SPDX-License-Identifier: MIT */
#ifndef _ASM_UACCESS_H
#define _ASM_UACCESS_H

#include <abi.h>
#include <linux/types.h>
#include <asm/asm.h>

/* Is [addr, addr + size) entirely user space? (No fault check: that is the exception table's job.) */
static __always_inline bool access_ok(const void __user *addr, unsigned long size)
{
	unsigned long a = (unsigned long)addr;
	return size <= TASK_SIZE_MAX && a <= TASK_SIZE_MAX - size;
}

/* All return the number of bytes NOT copied (0 = success), as in Linux. */
unsigned long copy_from_user(void *to, const void __user *from, unsigned long n);
unsigned long copy_to_user(void __user *to, const void *from, unsigned long n);
unsigned long clear_user(void __user *to, unsigned long n);
/* Length of the copied string (without NUL), count if no NUL in count bytes, or -EFAULT. */
long strncpy_from_user(char *dst, const char __user *src, long count);

#endif
