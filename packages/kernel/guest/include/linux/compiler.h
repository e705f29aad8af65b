/* SPDX-License-Identifier: MIT */
/* Compiler attributes, spelled as in Linux. */
#ifndef _LINUX_COMPILER_H
#define _LINUX_COMPILER_H

#define __user			/* points into user space: only uaccess touches it */
#define __force
#define __used			__attribute__((__used__))
#define __noreturn		__attribute__((__noreturn__))
#define __always_inline		inline __attribute__((__always_inline__))
#define __section(s)		__attribute__((__section__(s)))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __packed		__attribute__((__packed__))
#define __visible		__attribute__((__externally_visible__))
/*
 * noinline + noclone: the function stays one real, out-of-line function
 * under its own name. Without noclone gcc may call a specialised copy
 * ("do_fork.constprop.0") and a probe on "do_fork" would never fire.
 */
#define noinline		__attribute__((__noinline__, __noclone__))
#define asmlinkage		__visible
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define barrier()		__asm__ __volatile__("" ::: "memory")
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define offsetof(t, m)		__builtin_offsetof(t, m)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Old-style kprobes: whole functions placed in the blacklisted .kprobes.text. */
#define __kprobes		__section(".kprobes.text")
/* The idle loop: the host recognises an idle CPU by RIP inside .cpuidle.text. */
#define __cpuidle		__section(".cpuidle.text")

#endif
