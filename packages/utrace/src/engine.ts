// struct utrace_engine: one tracer's attachment to one thread. It is
// reference counted (kref): utrace_attach_task returns it with two
// references, one for the caller and one for being attached; release(data)
// runs when the last goes. Detaching swaps its ops for utrace's detached
// ops, which only answer UTRACE_DETACH, until the thread is next quiet.

import { ENGINE_STOP } from './constants.js'
import type { UtraceEngineOps } from './engine-ops.js'

export class UtraceEngine {
  /** kref */
  refcount = 2
  /** Event mask (UTRACE_EVENT bits), and ENGINE_STOP while it keeps the thread stopped. */
  flags = 0
  /** Its callbacks; utrace's detached ops once marked detached, null once fully detached. */
  ops: UtraceEngineOps | null
  readonly release: ((data: unknown) => void) | undefined

  constructor(
    ops: UtraceEngineOps,
    readonly data: unknown,
  ) {
    this.ops = ops
    this.release = ops.release
  }

  get wantsStop(): boolean {
    return (this.flags & ENGINE_STOP) !== 0
  }
}

/** utrace_engine_get: take a reference. */
export function utrace_engine_get(engine: UtraceEngine): void {
  engine.refcount++
}

/** utrace_engine_put: drop a reference; the last one runs release(data). */
export function utrace_engine_put(engine: UtraceEngine): void {
  if (engine.refcount <= 0) throw new Error('utrace_engine_put: the engine has no reference left')
  if (--engine.refcount === 0) engine.release?.(engine.data)
}
