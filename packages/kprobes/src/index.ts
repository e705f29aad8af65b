// @probekit/kprobes: kprobes over the guest kernel's text.

export * from './arch-x86.js'
export * from './errno.js'
export * from './insn-slot.js'
export * from './jprobe.js'
export * from './kprobe.js'
export * from './kprobes.js'
export * from './kretprobe.js'
export type * from './optimizer.js'
export { jprobeExample } from './samples/jprobe-example.js'
export { kprobeExample } from './samples/kprobe-example.js'
export { kretprobeExample } from './samples/kretprobe-example.js'
