// struct uprobe_probept: one probed address in one process, shared by
// every uprobe registered there (run in registration order). It keeps the
// original instruction (the byte the int3 replaced, and its analysis) and
// the XOL slot its copy is single-stepped in.

import type { ArchUprobe } from './arch-x86.js'
import type { UprobeKimg } from './uprobe.js'

export type UprobePptState =
  /** The int3 is in the text. */
  | 'UPROBE_BP_SET'
  /** The int3 is gone (the last uprobe left); the slot waits for a thread still stepping it. */
  | 'UPROBE_DISABLED'

export class UprobeProbept {
  state: UprobePptState = 'UPROBE_BP_SET'
  /** Registered uprobes here, in registration order. */
  readonly uprobes: UprobeKimg[] = []
  /** Threads between the hit and the end of the step of this probepoint's copy. */
  stepping = 0

  constructor(
    readonly vaddr: number,
    /** The original first byte (what the int3 replaced). */
    readonly opcode: number,
    readonly arch: ArchUprobe,
    /** The XOL slot's address. */
    readonly slot: number,
  ) {}
}
