// SPDX-License-Identifier: MIT
/*
 * The string functions gcc may call even in freestanding code. They use
 * string instructions, so gcc cannot turn their loops back into calls to
 * themselves.
 */
#include <linux/kernel.h>

void *memset(void *s, int c, size_t n)
{
	void *d = s;

	__asm__ __volatile__("rep stosb" : "+D" (d), "+c" (n) : "a" (c) : "memory");
	return s;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ __volatile__("rep movsb" : "+D" (d), "+S" (src), "+c" (n) : : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	if ((unsigned long)dst <= (unsigned long)src || (unsigned long)dst >= (unsigned long)src + n)
		return memcpy(dst, src, n);
	if (n) {
		/* Overlapping with dst above src: copy backwards, last byte first. */
		void *d = (char *)dst + n - 1;
		const void *s = (const char *)src + n - 1;

		__asm__ __volatile__("std; rep movsb; cld" : "+D" (d), "+S" (s), "+c" (n) : : "memory");
	}
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

size_t strlen(const char *s)
{
	return strnlen(s, ~0UL);
}
