// SPDX-License-Identifier: MIT
/*
 * The targets of Linux's kprobes self-test (lib/test_kprobes.c), so the
 * host can port it: it calls these through kernel_call_return (head_64.S)
 * with probes on them and checks what the handlers saw.
 */
#include <linux/kernel.h>

#define div_factor 3

noinline u32 kprobe_target(u32 value)
{
	return (value / div_factor);
}

noinline u32 kprobe_target2(u32 value)
{
	return (value / div_factor) + 1;
}

noinline u32 kprobe_recursed_target(u32 value)
{
	return (value / div_factor);
}

/* Return addresses seen by the stack-trace targets (the test compares them with unwound stacks). */
unsigned long target_return_address[2];

noinline unsigned long kprobe_stacktrace_internal_target(void)
{
	if (!target_return_address[0])
		target_return_address[0] = (unsigned long)__builtin_return_address(0);
	return target_return_address[0];
}

/* Called through pointers, as in Linux, so that nothing gets inlined. */
unsigned long (*internal_target)(void) = kprobe_stacktrace_internal_target;

noinline unsigned long kprobe_stacktrace_target(void)
{
	if (!target_return_address[1])
		target_return_address[1] = (unsigned long)__builtin_return_address(0);

	if (internal_target)
		internal_target();

	return target_return_address[1];
}

unsigned long (*stacktrace_target)(void) = kprobe_stacktrace_target;

noinline unsigned long kprobe_stacktrace_driver(void)
{
	if (stacktrace_target)
		stacktrace_target();

	/* This is for preventing inlining the function */
	return (unsigned long)__builtin_return_address(0);
}
