/* SPDX-License-Identifier: MIT */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#include <linux/compiler.h>

typedef unsigned char		u8;
typedef unsigned short		u16;
typedef unsigned int		u32;
typedef unsigned long		u64;
typedef signed char		s8;
typedef short			s16;
typedef int			s32;
typedef long			s64;
typedef unsigned long		size_t;
typedef long			ssize_t;
typedef long			loff_t;
typedef unsigned short		umode_t;
typedef _Bool			bool;
typedef __builtin_va_list	va_list;

#define va_start(ap, last)	__builtin_va_start(ap, last)
#define va_arg(ap, type)	__builtin_va_arg(ap, type)
#define va_end(ap)		__builtin_va_end(ap)

#define true	1
#define false	0
#define NULL	((void *)0)

#endif
