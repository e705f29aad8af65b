// struct uprobe_task: Uprobes' state for one probed thread - its utrace
// engine, where it is in a probe hit (the breakpoint, then the step of the
// copy out of line), and the [un]registrations its handlers asked for,
// run once the hit is over.

import type { SigInfo, Task } from '@probekit/kernel'
import type { UtraceEngine } from '@probekit/utrace'
import type { ReturnInstance } from './return-instance.js'
import type { Uprobe } from './uprobe.js'
import type { UprobeProbept } from './uprobe-probept.js'
import type { UprobeProcess } from './uprobe-process.js'

export type UprobeTaskState =
  /** Running user code (or stopped outside a probe hit). */
  | 'UPTASK_RUNNING'
  /** Its handlers are running. */
  | 'UPTASK_BP_HIT'
  /** Sent to the XOL slot with TF: the next trap ends the step. */
  | 'UPTASK_SSTEP'

/** A [un]register_uprobe called from a handler, to run after the hit. */
export interface DeferredRegistration {
  uprobe: Uprobe
  /** 1: register, 0: unregister. */
  reg: number
}

export class UprobeTask {
  state: UprobeTaskState = 'UPTASK_RUNNING'
  /** The probepoint being handled or stepped. */
  activePpt: UprobeProbept | null = null
  /** TF was set before the hit (someone else steps this thread): pushf keeps it. */
  origTf = false
  readonly deferred: DeferredRegistration[] = []
  /** Signals that came during the step, sent again after it (utask->delayed_signals). */
  readonly delayedSignals: SigInfo[] = []
  /** Returns this thread owes (its return probes' instances), innermost last. */
  readonly returnInstances: ReturnInstance[] = []
  engine!: UtraceEngine

  constructor(
    readonly task: Task,
    readonly uproc: UprobeProcess,
  ) {}
}
