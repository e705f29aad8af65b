/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_KERNEL_H
#define _LINUX_KERNEL_H

#include <linux/types.h>

#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))

/* Signals (only as numbers passed to the host through die_args). */
#define SIGINT		2
#define SIGILL		4
#define SIGTRAP		5
#define SIGBUS		7
#define SIGFPE		8
#define SIGSEGV		11
#define SIGCHLD		17

int vsnprintf(char *buf, size_t size, const char *fmt, va_list args);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *memset(void *s, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);

#endif
