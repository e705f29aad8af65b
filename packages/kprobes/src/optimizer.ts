// What jump optimization (@probekit/optprobes) plugs into Kprobes: the
// calls kernel/kprobes.c makes into its optprobe half (optimize_kprobe,
// unoptimize_kprobe, get_optimized_kprobe, setup_detour_execution,
// __recover_optprobed_insn). Kprobes works the same without one: every
// probe stays an int3.

import type { RegisteredKprobe } from './kprobe.js'

export interface KprobeOptimizer {
  /** optimize_kprobe: p (the probe hashed at its address) is armed; queue it if it can be optimized. */
  optimizeKprobe(p: RegisteredKprobe): void
  /**
   * unoptimize_kprobe: p must be an int3 probe again. force: now (its jump replaced before this returns);
   * otherwise from the optimizer's delayed work.
   */
  unoptimizeKprobe(p: RegisteredKprobe, force: boolean): void
  /** p is no longer hashed (unregistered, or replaced by an aggregate): forget it, free its buffer. */
  forgetKprobe(p: RegisteredKprobe): void
  /** get_optimized_kprobe: the probe whose optimizable region covers addr (past its first byte), if any. */
  coveringKprobe(addr: number): RegisteredKprobe | null
  /** setup_detour_execution: where a hit on p goes instead of single-stepping (its buffer's copy), or null. */
  detourAddress(p: RegisteredKprobe): number | null
  /** __recover_optprobed_insn: buf holds text from addr; put back the bytes optimized jumps replaced. */
  recoverBytes(addr: number, buf: Uint8Array): void
}
