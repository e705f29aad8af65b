// struct kretprobe / kretprobe_instance (include/linux/kprobes.h).

import type { Task } from '@probekit/kernel'
import type { Kprobe, PtRegs } from './kprobe.js'

/** Runs at function return (handler) or entry (entry_handler; non-zero → this call is not traced). */
export type KretprobeHandler = (ri: KretprobeInstance, regs: PtRegs) => number

export interface Kretprobe {
  /** The entry probe: fill symbol_name or addr; register_kretprobe sets its pre_handler. */
  kp: Kprobe
  handler?: KretprobeHandler | null
  entry_handler?: KretprobeHandler | null
  /** Instances preallocated; <= 0 → the default (NR_CPUS on this non-preemptible kernel). */
  maxactive?: number
  /** Entries missed because no instance was free. */
  nmissed?: number
  /** Bytes of per-instance private data (ri.data). */
  data_size?: number
}

export interface KretprobeInstance {
  /** The real return address (at return: the one the trampoline goes back to). */
  ret_addr: number
  /** Its kretprobe; null once the kretprobe was unregistered (handler no longer called). */
  rp: Kretprobe | null
  task: Task | null
  /** data_size bytes shared between entry_handler and handler. */
  data: Uint8Array
  /** Address of the hijacked return-address slot on task's kernel stack (the frame the instance belongs to). */
  fp: number
}

/** KRETPROBE_MAX_DATA_SIZE */
export const KRETPROBE_MAX_DATA_SIZE = 4096

/** regs_return_value: rax. */
export function regs_return_value(regs: PtRegs): number {
  return regs.get('ax')
}
