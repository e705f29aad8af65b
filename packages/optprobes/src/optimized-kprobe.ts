// struct optimized_kprobe: what jump optimization keeps for one probed
// address - its detour buffer (an optinsn slot of real machine code), the
// region the jump replaces and the original bytes under the jump, and where
// it is on its way: prepared (an int3 probe with a buffer ready), queued on
// the optimizing list (hits already detour through the buffer), optimized
// (the jump is in the text), or queued on the unoptimizing list.

import type { RegisteredKprobe } from '@probekit/kprobes'

export type OptprobeState = 'prepared' | 'optimizing' | 'optimized' | 'unoptimizing'

export interface OptimizedKprobe {
  /** Index for the buffer's callback (the movabs in its template). */
  id: number
  /** The probe hashed at addr when it was prepared (an aggregate or a single probe). */
  kp: RegisteredKprobe
  addr: number
  /** The detour buffer: its address and the bytes written there. */
  buffer: number
  bytes: Uint8Array
  /** Where the relocated copies of the region start in the buffer (TMPL_END_IDX). */
  copyOffset: number
  /** The region's length: the instructions the jump overlaps, whole. */
  size: number
  /** The original bytes of addr+1 .. addr+4 (byte 0 is the int3's, saved by kprobes as opcode). */
  saved: Uint8Array
  state: OptprobeState
}
