// probekit, the meta-package: one import for the whole stack, every layer
// (see shared/DESIGN.md), bottom to top.

export * from '@probekit/kernel'
export { DIE_DEBUG, DIE_GPF, DIE_INT3, DIE_PAGE_FAULT, NOTIFY_DONE, NOTIFY_STOP } from '@probekit/kernel'
export * from '@probekit/kprobes'
export { X86_EFLAGS_TF } from '@probekit/kprobes'
export * from '@probekit/optprobes'
export * from '@probekit/uprobes'
export * from '@probekit/utrace'
export * from '@probekit/x86-emu'
// Names two layers both export (TS2308: a star export drops an ambiguous
// name). Each pair is the same constant, so the meta-package takes it from
// the layer that owns the concept: the machine's segment selectors and DR6
// bits, the kernel's die-notifier values (kprobes repeats them as Linux's
// kprobes.c sees them), and EFLAGS.TF from kprobes (uprobes has its own copy
// of arch/x86's).
export { DR6_BS, KERNEL_CS, KERNEL_SS, USER_CS, USER_SS } from '@probekit/x86-emu'
