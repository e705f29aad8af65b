// @probekit/utrace: per-thread tracing engines over @probekit/kernel tasks
// (utrace, API version 20091216).

export * from './constants.js'
export * from './engine.js'
export type * from './engine-ops.js'
export * from './examiner.js'
export * from './utrace.js'
