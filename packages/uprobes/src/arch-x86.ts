// arch/x86 uprobes: which user instructions may be single-stepped out of
// line (arch_uprobe_analyze_insn, after Linux's arch/x86/kernel/uprobes.c
// tables), how the copy is made for its XOL slot, and the fix-ups after the
// step (default_post_xol_op) so the thread looks as if the original had
// run at its own address.
//
// A copy runs at another address, so everything that depends on where it
// runs is fixed up:
// - ip after the step: shifted back by (vaddr - slot) (UPROBE_FIX_IP). That
//   also makes relative jmp/jcc/call/loop land where the original would:
//   their target is computed from the slot, and the shift is the same;
// - call (relative or indirect) pushed a return address inside the slot:
//   rewritten to vaddr + length (UPROBE_FIX_CALL);
// - ret, indirect jmp/call: ip was loaded from memory or a register, it is
//   right as it is (no UPROBE_FIX_IP);
// - a RIP-relative operand: its disp32 is rewritten at copy time so it
//   addresses the same byte from the slot (the XOL area is placed within
//   +-2 GiB of the probed text for this; out of reach is refused);
// - pushf pushed our TF: cleared in the pushed image (UPROBE_FIX_PUSHF).

import { copyFromUser, copyToUser, EINVAL, type Mm, type PtRegsFrame } from '@probekit/kernel'
import { type Instruction, tryDecode } from '@probekit/x86-emu'

/** The breakpoint instruction (int3) and its size. */
export const UPROBE_SWBP_INSN = 0xcc
export const UPROBE_SWBP_INSN_SIZE = 1
/** An XOL slot: an x86 instruction is at most 15 bytes. */
export const MAX_UINSN_BYTES = 16

export const X86_EFLAGS_TF = 0x100

// The fix-ups default_post_xol_op applies (Linux's names and values; PUSHF is ours: old uprobes' FIX_TF).
export const UPROBE_FIX_IP = 0x01
export const UPROBE_FIX_CALL = 0x02
export const UPROBE_FIX_SETF = 0x04
export const UPROBE_FIX_PUSHF = 0x40

/** struct arch_uprobe: the decoded original and how its copy is fixed up. */
export interface ArchUprobe {
  /** The original instruction's bytes (its length is the instruction's). */
  insn: Uint8Array
  fixups: number
  /** Offset of a RIP-relative disp32 in insn, or -1. */
  ripDispOffset: number
  ripDisp: number
  mnemonic: string
}

/**
 * One-byte opcodes refused in 64-bit mode (Linux's good_insns_64 zero bits): invalid in long mode,
 * segment pushes/pops, far branches, int3/int n/into/iret, in/out, hlt, cli/sti, and the like.
 */
const BAD_ONEBYTE = new Set<number>([
  0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0x62, 0x6c, 0x6d, 0x6e, 0x6f,
  0x82, 0x9a, 0xcc, 0xcd, 0xce, 0xcf, 0xd4, 0xd5, 0xd6, 0xe4, 0xe5, 0xe6, 0xe7, 0xea, 0xec, 0xed, 0xee, 0xef,
  0xf1, 0xf4, 0xfa, 0xfb,
])

/**
 * Two-byte opcodes (0F xx) refused (good_2byte_insns zero bits): system instructions, syscall/sysret/
 * sysenter/sysexit (a stepped syscall would run the call from the slot and come back with ip past
 * it), ud2, vmread/vmwrite, and 0F AE (fxsave/xsave/fences group).
 */
const BAD_TWOBYTE = new Set<number>([
  0x00, 0x01, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x30, 0x34, 0x35, 0x37, 0x78, 0x79, 0xae,
])

/**
 * arch_uprobe_analyze_insn: decode the original at vaddr (bytes may run past it) and decide whether
 * and how it can be stepped out of line. -EINVAL when it cannot (Linux: -ENOEXEC/-ENOTSUPP).
 */
export function arch_uprobe_analyze_insn(bytes: Uint8Array, vaddr: number): ArchUprobe | number {
  const insn = tryDecode(bytes, vaddr)
  if (insn instanceof Error) return -EINVAL
  if (!goodInsn(insn)) return -EINVAL
  return {
    insn: insn.bytes.slice(),
    fixups: fixupsFor(insn),
    ripDispOffset: insn.ripRelative ? insn.displacementOffset : -1,
    ripDisp: insn.ripRelative ? insn.displacement : 0,
    mnemonic: insn.mnemonic,
  }
}

function goodInsn(insn: Instruction): boolean {
  // is_prefix_bad: ES/CS/DS/SS overrides and LOCK.
  if (insn.lock) return false
  if (insn.segment === 'es' || insn.segment === 'cs' || insn.segment === 'ds' || insn.segment === 'ss')
    return false
  if (insn.encoding === 'legacy' && insn.map === 0) {
    if (BAD_ONEBYTE.has(insn.opcode)) return false
    if (insn.opcode === 0x8e && (insn.reg & 7) === 2) return false // mov to SS masks the step's trap
    // A branch with an operand-size prefix (its target truncated on some CPUs): Linux refuses it.
    if (insn.operandSizePrefix && insn.branchTarget !== null) return false
  }
  if (insn.encoding === 'legacy' && insn.map === 1) {
    if (BAD_TWOBYTE.has(insn.opcode)) return false
    if (insn.operandSizePrefix && insn.branchTarget !== null) return false
  }
  return insn.encoding !== '3dnow' && insn.encoding !== 'xop'
}

/** The default_post_xol_op fix-ups the copy of insn needs (uprobe_init_insn / default_setup_xol_ops). */
function fixupsFor(insn: Instruction): number {
  if (insn.encoding !== 'legacy' || insn.map !== 0) return UPROBE_FIX_IP
  switch (insn.opcode) {
    case 0x9c: // pushf
      return UPROBE_FIX_IP | UPROBE_FIX_PUSHF
    case 0x9d: // popf: TF afterwards is what popf loaded
      return UPROBE_FIX_IP | UPROBE_FIX_SETF
    case 0xc2: // ret imm16, ret, lret imm16, lret: ip came off the stack
    case 0xc3:
    case 0xca:
    case 0xcb:
      return 0
    case 0xe8: // call rel32: target relative to the slot (FIX_IP), return address inside it (FIX_CALL)
      return UPROBE_FIX_IP | UPROBE_FIX_CALL
    case 0xff: {
      const reg = insn.reg & 7
      if (reg === 2 || reg === 3) return UPROBE_FIX_CALL // call / lcall indirect: ip is right
      if (reg === 4 || reg === 5) return 0 // jmp / ljmp indirect: ip is right
      return UPROBE_FIX_IP
    }
    default:
      return UPROBE_FIX_IP
  }
}

/**
 * The bytes to put in the slot at xolVaddr: the original, with a RIP-relative disp32 rewritten to
 * reach the same address from there; -EINVAL when that address is out of disp32 reach.
 */
export function arch_uprobe_xol_copy(arch: ArchUprobe, vaddr: number, xolVaddr: number): Uint8Array | number {
  const copy = new Uint8Array(MAX_UINSN_BYTES).fill(UPROBE_SWBP_INSN)
  copy.set(arch.insn)
  if (arch.ripDispOffset >= 0) {
    // disp32 is relative to the instruction's end; the copy's end is (xolVaddr - vaddr) away.
    const disp = arch.ripDisp + (vaddr - xolVaddr)
    if (disp < -0x80000000 || disp > 0x7fffffff) return -EINVAL
    new DataView(copy.buffer).setInt32(arch.ripDispOffset, disp, true)
  }
  return copy
}

/** Would the copy of arch at xolVaddr reach its RIP-relative target? */
export function xolReaches(arch: ArchUprobe, vaddr: number, xolVaddr: number): boolean {
  return typeof arch_uprobe_xol_copy(arch, vaddr, xolVaddr) !== 'number'
}

function readU64(mm: Mm, addr: number): number {
  const v = new DataView(copyFromUser(mm, addr, 8).buffer)
  return v.getInt32(4, true) * 0x1_0000_0000 + v.getUint32(0, true)
}

function writeU64(mm: Mm, addr: number, value: number): void {
  const b = new Uint8Array(8)
  const v = new DataView(b.buffer)
  v.setInt32(0, value | 0, true)
  v.setInt32(4, Math.floor(value / 0x1_0000_0000) | 0, true)
  copyToUser(mm, addr, b)
}

/**
 * arch_uprobe_post_xol (default_post_xol_op): the copy at xolVaddr was stepped; make regs (and the
 * stack word a call or pushf wrote) what the original at vaddr would have left. origTf: the thread's
 * TF before the hit (a pushf keeps it then). Throws BadAddress if the stack word cannot be reached.
 */
export function arch_uprobe_post_xol(
  arch: ArchUprobe,
  vaddr: number,
  xolVaddr: number,
  regs: PtRegsFrame,
  mm: Mm,
  origTf: boolean,
): void {
  const delta = vaddr - xolVaddr
  const sp = regs.get('sp')
  if ((arch.fixups & UPROBE_FIX_CALL) !== 0) writeU64(mm, sp, readU64(mm, sp) + delta)
  if ((arch.fixups & UPROBE_FIX_PUSHF) !== 0 && !origTf) {
    const pushed = readU64(mm, sp)
    writeU64(mm, sp, pushed - (pushed & X86_EFLAGS_TF))
  }
  if ((arch.fixups & UPROBE_FIX_IP) !== 0) regs.set('ip', regs.get('ip') + delta)
}
