// @probekit/kernel: a small Linux on @probekit/x86-emu, with a guest kernel
// image of real x86-64 code.

export * from './abi.js'
export * from './elf.js'
export * from './errno.js'
export * from './exec-loader.js'
export * from './files.js'
export * from './guest-image.js'
export * from './kallsyms.js'
export * from './kernel.js'
export * from './mm.js'
export * from './page-cache.js'
export * from './printk.js'
export * from './services.js'
export * from './signals.js'
export { syscallName } from './syscalls.js'
export * from './task.js'
export * from './vfs.js'
