// @probekit/uprobes: user-space probes over utrace (the utrace-based
// uprobes of 2010): int3 in the probed process's copy-on-write text, the
// original instruction single-stepped out of line in its XOL area, and
// [un]registration from handlers delayed with a callback.

export * from './arch-x86.js'
export * from './inode-uprobes.js'
export * from './return-instance.js'
export { type UprobeExampleParams, uprobeExample } from './samples/uprobe-example.js'
export type * from './uprobe.js'
export * from './uprobe-consumer.js'
export * from './uprobe-probept.js'
export * from './uprobe-process.js'
export * from './uprobe-task.js'
export * from './uprobes.js'
export type * from './uretprobe.js'
export * from './xol-area.js'
