// SPDX-License-Identifier: MIT
/*
 * Copies between kernel and user memory.
 *
 * Any user access may fault: the page is not there yet (the host pages it
 * in and the instruction restarts) or the pointer is bad. For the second
 * case each user-accessing instruction has an __ex_table entry; the page
 * fault handler then continues at the fixup instead of oopsing.
 *
 * "rep movsb" faults with rcx = the bytes still to copy, so its fixup is
 * simply the next instruction: the copy stops short and reports how much is
 * left. strncpy_from_user reads byte by byte with a fixup that makes the
 * read return -EFAULT (the older Linux .fixup-section style).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <asm/asm.h>
#include <asm/uaccess.h>

/* Copy n bytes; returns the bytes not copied. Only for use where one side is user memory. */
static __always_inline unsigned long copy_user_rep_movsb(void *to, const void *from, unsigned long n)
{
	__asm__ __volatile__("1:	rep movsb\n"
			     "2:\n"
			     _ASM_EXTABLE(1b, 2b)
			     : "+c" (n), "+D" (to), "+S" (from)
			     : : "memory");
	return n;
}

noinline unsigned long copy_from_user(void *to, const void __user *from, unsigned long n)
{
	unsigned long res = n;

	if (likely(access_ok(from, n)))
		res = copy_user_rep_movsb(to, (const void __force *)from, n);
	/* Never leave stale kernel data in the uncopied tail. */
	if (unlikely(res))
		memset((char *)to + (n - res), 0, res);
	return res;
}

noinline unsigned long copy_to_user(void __user *to, const void *from, unsigned long n)
{
	if (unlikely(!access_ok(to, n)))
		return n;
	return copy_user_rep_movsb((void __force *)to, from, n);
}

noinline unsigned long clear_user(void __user *to, unsigned long n)
{
	void *p = (void __force *)to;

	if (unlikely(!access_ok(to, n)))
		return n;
	__asm__ __volatile__("1:	rep stosb\n"
			     "2:\n"
			     _ASM_EXTABLE(1b, 2b)
			     : "+c" (n), "+D" (p)
			     : "a" (0)
			     : "memory");
	return n;
}

/*
 * Read one user byte into x; on a fault set err to -EFAULT. The fixup code
 * lives out of line in .fixup and jumps back behind the load.
 */
#define __get_user_byte(x, addr, err)						\
	__asm__ __volatile__("1:	movb %2, %b1\n"				\
			     "2:\n"						\
			     " .pushsection .fixup, \"ax\"\n"			\
			     "3:	movl %3, %0\n"				\
			     "	xorl %k1, %k1\n"				\
			     "	jmp 2b\n"					\
			     " .popsection\n"					\
			     _ASM_EXTABLE(1b, 3b)				\
			     : "=r" (err), "=q" (x)				\
			     : "m" (*(const char __force *)(addr)), "i" (-EFAULT), "0" (err))

noinline long strncpy_from_user(char *dst, const char __user *src, long count)
{
	unsigned long src_addr = (unsigned long)src;
	unsigned long max;
	long res = 0;

	if (unlikely(count <= 0))
		return 0;
	if (unlikely(src_addr >= TASK_SIZE_MAX))
		return -EFAULT;

	/* Never read past the end of user space. */
	max = TASK_SIZE_MAX - src_addr;
	if (max > (unsigned long)count)
		max = count;

	while ((unsigned long)res < max) {
		int err = 0;
		char c;

		__get_user_byte(c, src + res, err);
		if (unlikely(err))
			return -EFAULT;
		dst[res] = c;
		if (!c)
			return res;	/* length without the NUL */
		res++;
	}
	/* count bytes without a NUL: the caller decides (-ENAMETOOLONG); the end of user space: -EFAULT. */
	if (res >= count)
		return res;
	return -EFAULT;
}
