/* SPDX-License-Identifier: MIT */
/* Error values folded into pointers: the top 4095 addresses are -errno. */
#ifndef _LINUX_ERR_H
#define _LINUX_ERR_H

#include <linux/types.h>
#include <linux/errno.h>

#define IS_ERR_VALUE(x)	unlikely((unsigned long)(x) >= (unsigned long)-MAX_ERRNO)

static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE(ptr); }

#endif
