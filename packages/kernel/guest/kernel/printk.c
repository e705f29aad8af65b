// SPDX-License-Identifier: MIT
#include <linux/kernel.h>
#include <asm/hypercall.h>

#define LOG_LINE_MAX	512

/* Leaf: the host owns the log buffer and the console. */
noinline void log_output(const char *text, size_t len)
{
	hypercall2(HC_PRINTK, text, len);
}

noinline int vprintk(const char *fmt, va_list args)
{
	char text[LOG_LINE_MAX];
	int len = vsnprintf(text, sizeof(text), fmt, args);

	if (len >= (int)sizeof(text))
		len = sizeof(text) - 1;	/* truncated */
	log_output(text, len);
	return len;
}

int printk(const char *fmt, ...)
{
	va_list args;
	int r;

	va_start(args, fmt);
	r = vprintk(fmt, args);
	va_end(args);
	return r;
}
