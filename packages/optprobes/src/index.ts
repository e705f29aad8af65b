// @probekit/optprobes: jump optimization of kprobes - the int3 replaced by a
// 5-byte jmp to a detour buffer of generated machine code, with the kernel's
// safety checks, its delayed optimizer and the debug.kprobes_optimization sysctl.

export * from './can-optimize.js'
export * from './detour-buffer.js'
export type * from './optimized-kprobe.js'
export * from './optprobes.js'
