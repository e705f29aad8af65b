// struct kprobe and the constants of include/linux/kprobes.h.

import type { PtRegsFrame } from '@probekit/kernel'

/** The pt_regs view handlers get: fields live in guest memory, so writes take effect on iretq. */
export type PtRegs = PtRegsFrame

/** Returns non-zero when it changed regs.ip itself: no single-step, no post_handler. */
export type KprobePreHandler = (p: Kprobe, regs: PtRegs) => number
/** Runs after the single-step; `flags` is always 0 (as in Linux). */
export type KprobePostHandler = (p: Kprobe, regs: PtRegs, flags: number) => void
/** A fault while single-stepping; return 1 when the handler dealt with it. */
export type KprobeFaultHandler = (p: Kprobe, regs: PtRegs, trapnr: number) => number
/**
 * Linux <= 4.14: a trap that is no probe hit (jprobe_return's int3) while this
 * probe is current on the CPU; non-zero when it restored the context (the
 * probed instruction is then stepped as after a pre_handler that returned 0).
 */
export type KprobeBreakHandler = (p: Kprobe, regs: PtRegs) => number

// kprobe flags
export const KPROBE_FLAG_GONE = 1
export const KPROBE_FLAG_DISABLED = 2
export const KPROBE_FLAG_OPTIMIZED = 4
export const KPROBE_FLAG_FTRACE = 8

// kprobe_ctlblk.kprobe_status
export const KPROBE_HIT_ACTIVE = 0x00000001
export const KPROBE_HIT_SS = 0x00000002
export const KPROBE_REENTER = 0x00000004
export const KPROBE_HIT_SSDONE = 0x00000008

/** x86 MAX_INSN_SIZE: one instruction slot. */
export const MAX_INSN_SIZE = 16

/** What arch_prepare_kprobe leaves in p->ainsn (x86). */
export interface ArchSpecificInsn {
  /** Address of the out-of-line copy (the insn slot). */
  insn: number
  /** Length of the probed instruction. */
  length: number
  /** The copied bytes as written into the slot (RIP-relative displacement already adjusted). */
  copy: Uint8Array
  /** cli/sti/popf/iret: IF must stay off in saved_flags while it is stepped (is_IF_modifier). */
  ifModifier: boolean
  /** 0 = not decided, 1 = boostable, -1 = never (kept for the boost extension; not used yet). */
  boostable: number
  /** What resume_execution must fix after the copy was stepped, decided when the copy was made. */
  fixup: ResumeFixup
}

/** resume_execution's cases (arch/x86/kernel/kprobes/core.c), per probed instruction. */
export enum ResumeFixup {
  /** ip moves from the slot back to the original. */
  Relocate = 0,
  /** pushf: the pushed flags get the interrupted context's TF and IF. */
  Pushf = 1,
  /** ret, lret, iret, jmp far, indirect jmp: ip is already the real target. */
  Absolute = 2,
  /** call rel32: the pushed return address moves to after the original call, ip relocates. */
  CallRelative = 3,
  /** Indirect call: the pushed return address moves, ip is already the target. */
  CallIndirect = 4,
}

/**
 * struct kprobe. Fill in either `addr` or `symbol_name` (+ `offset`) and the
 * handlers you need; `register_kprobe` fills in the rest.
 */
export interface Kprobe {
  addr?: number | null
  symbol_name?: string | null
  offset?: number
  pre_handler?: KprobePreHandler | null
  post_handler?: KprobePostHandler | null
  fault_handler?: KprobeFaultHandler | null
  /** Set by register_jprobe (longjmp_break_handler); an aggregate has one while a jprobe is among its children. */
  break_handler?: KprobeBreakHandler | null
  /** Only KPROBE_FLAG_DISABLED may be set by the user before registering. */
  flags?: number
  nmissed?: number
  /** Saved first byte of the original instruction (p->opcode). */
  opcode?: number
  ainsn?: ArchSpecificInsn | null
}

/** A registered probe: the fields register_kprobe guarantees. */
export interface RegisteredKprobe extends Kprobe {
  addr: number
  flags: number
  nmissed: number
  opcode: number
  ainsn: ArchSpecificInsn
}

/**
 * An aggregate probe (kernel/kprobes.c alloc_aggr_kprobe): hashed in place of
 * several probes at one address; shares the first probe's slot and opcode and
 * fans the hit out to `list` (newest first: list_add_rcu at the head).
 */
export interface AggrKprobe extends RegisteredKprobe {
  list: RegisteredKprobe[]
}

export function kprobeAggrprobe(p: Kprobe): p is AggrKprobe {
  return Array.isArray((p as Partial<AggrKprobe>).list)
}

/** Per-CPU state (struct kprobe_ctlblk plus current_kprobe). */
export interface PrevKprobe {
  kp: RegisteredKprobe | null
  status: number
  oldFlags: number
  savedFlags: number
}

export interface KprobeCtlblk {
  /** current_kprobe: the probe this CPU is handling, or null. */
  current: RegisteredKprobe | null
  kprobe_status: number
  /** TF|IF of the interrupted context, put back after the step. */
  kprobe_old_flags: number
  kprobe_saved_flags: number
  /** One-deep save area for a probe hit while another is being handled (KPROBE_REENTER). */
  prev_kprobe: PrevKprobe
}

export function kprobeDisabled(p: Kprobe): boolean {
  return ((p.flags ?? 0) & KPROBE_FLAG_DISABLED) !== 0
}
