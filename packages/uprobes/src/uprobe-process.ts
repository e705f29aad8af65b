// struct uprobe_process: Uprobes' state for one probed process (thread
// group): its probepoints by address, its threads (each with a utrace
// engine), and its XOL area. Made by the first uprobe registered in the
// process, gone with the last one, or when the process execs or exits.

import type { Task } from '@probekit/kernel'
import type { UprobeProbept } from './uprobe-probept.js'
import type { UprobeTask } from './uprobe-task.js'
import type { XolArea } from './xol-area.js'

export class UprobeProcess {
  readonly probepts = new Map<number, UprobeProbept>()
  readonly threads = new Map<Task, UprobeTask>()
  xol: XolArea | null = null
  /** The uretprobe trampoline: an XOL slot holding an int3 (0 until the first return probe). */
  trampoline = 0
  /** Its threads are asked to stop (a breakpoint is about to go in or out). */
  quiescing = false
  /** Exec or exit took it apart: nothing may be done through it any more. */
  finished = false
  /** Our hook in mm.unmapHooks (uprobe_munmap), removed when the process is finished with. */
  unmapHook: ((start: number, end: number) => void) | null = null

  constructor(
    readonly tgid: number,
    /** The address space every thread here shares (the probed text, the XOL area). */
    readonly mm: Task['mm'],
  ) {}
}
