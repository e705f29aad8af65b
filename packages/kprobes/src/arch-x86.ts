// arch/x86/kernel/kprobes/core.c: the parts that know x86 instructions —
// can_probe (instruction boundary), __copy_instruction (RIP-relative fix-up),
// arm/disarm (int3 over the first byte) and resume_execution (fix-ups after
// the copy was single-stepped with TF).

import { imagePhys, type Kernel } from '@probekit/kernel'
import { type Instruction, InstructionFlag, tryDecode } from '@probekit/x86-emu'
import { EILSEQ, EINVAL } from './errno.js'
import type { ArchSpecificInsn, KprobeCtlblk, PtRegs, RegisteredKprobe } from './kprobe.js'
import { MAX_INSN_SIZE, ResumeFixup } from './kprobe.js'

export const BREAKPOINT_INSTRUCTION = 0xcc
export const X86_EFLAGS_TF = 0x100
export const X86_EFLAGS_IF = 0x200

/** Kernel text as it is in memory now (read through the image's physical frames). */
export function readText(kernel: Kernel, addr: number, len: number): Uint8Array {
  return kernel.machine.memory.readBytes(imagePhys(addr), len)
}

/** Puts back, in buf (text read from addr), bytes that optimized probes' jumps replaced. */
export type RecoverBytes = (addr: number, buf: Uint8Array) => void

/**
 * The original bytes at addr: where another kprobe planted its int3, put its
 * saved opcode back (recover_probed_instruction), so decoding sees the real stream.
 */
export function recoverInstruction(
  kernel: Kernel,
  addr: number,
  probeAt: (a: number) => RegisteredKprobe | undefined,
  recover?: RecoverBytes,
): Uint8Array {
  const buf = readText(kernel, addr, MAX_INSN_SIZE)
  // Optimized probes' jumps first (their first byte becomes the int3 the loop below recovers).
  recover?.(addr, buf)
  for (let i = 0; i < MAX_INSN_SIZE; i++) {
    if (buf[i] !== BREAKPOINT_INSTRUCTION) continue
    const p = probeAt(addr + i)
    if (p) buf[i] = p.opcode
  }
  return buf
}

/**
 * can_probe: decode from the start of the containing function, one
 * instruction at a time, and accept addr only if we land exactly on it.
 * A foreign int3 on the way makes the stream undecidable (refused).
 */
export function canProbe(
  kernel: Kernel,
  addr: number,
  probeAt: (a: number) => RegisteredKprobe | undefined,
  recover?: RecoverBytes,
): boolean {
  const fn = kernel.kallsyms.functionAt(addr)
  if (!fn) return false
  let a = fn.address
  while (a < addr) {
    const buf = recoverInstruction(kernel, a, probeAt, recover)
    if (buf[0] === BREAKPOINT_INSTRUCTION) return false
    const insn = tryDecode(buf, a)
    if (insn instanceof Error) return false
    a += insn.length
  }
  return a === addr
}

/** Instructions that exist to raise an exception: never single-stepped out of line. */
function isExceptionInstruction(insn: Instruction): boolean {
  return (insn.flags & (InstructionFlag.Int3 | InstructionFlag.Int | InstructionFlag.Undefined)) !== 0
}

/** mov to SS / pop ss inhibit the debug trap for one instruction (insn_masking_exception). */
function masksDebugTrap(insn: Instruction): boolean {
  if (insn.map !== 0) return false
  if (insn.opcode === 0x17) return true // pop ss
  return insn.opcode === 0x8e && (insn.reg & 7) === 2 // mov ss, r/m
}

/** is_IF_modifier: cli, sti, popf, iret. */
function isIfModifier(insn: Instruction): boolean {
  return insn.map === 0 && [0xfa, 0xfb, 0x9d, 0xcf].includes(insn.opcode)
}

/**
 * arch_prepare_kprobe minus the slot allocation: decode and copy the
 * original instruction for execution at `slot`. Returns the arch data or a
 * negative errno.
 */
export function archCopyKprobe(
  kernel: Kernel,
  addr: number,
  slot: number,
  probeAt: (a: number) => RegisteredKprobe | undefined,
  recover?: RecoverBytes,
): ArchSpecificInsn | number {
  const buf = recoverInstruction(kernel, addr, probeAt, recover)
  const insn = tryDecode(buf, addr)
  if (insn instanceof Error) return -EILSEQ
  // Another subsystem's breakpoint, an int n/ud2, or an SS load: __copy_instruction fails.
  if (isExceptionInstruction(insn) || masksDebugTrap(insn)) return -EINVAL
  const copy = buf.slice(0, insn.length)
  if (insn.ripRelative && insn.displacementOffset >= 0) {
    // The copy runs at `slot`: rewrite disp32 so it still addresses the original target.
    const newdisp = addr + insn.displacement - slot
    if (newdisp < -0x80000000 || newdisp > 0x7fffffff) return -EILSEQ
    new DataView(copy.buffer).setInt32(insn.displacementOffset, newdisp, true)
  }
  // Boost at prepare time (5.10): a boostable copy is followed by a jmp back, so it can run without a trap.
  if (canBoost(kernel, insn, addr) && insn.length + JMP32_INSN_SIZE <= MAX_INSN_SIZE) {
    const boosted = new Uint8Array(insn.length + JMP32_INSN_SIZE)
    boosted.set(copy)
    boosted[insn.length] = 0xe9
    new DataView(boosted.buffer).setInt32(
      insn.length + 1,
      addr + insn.length - (slot + insn.length + JMP32_INSN_SIZE),
      true,
    )
    return {
      insn: slot,
      length: insn.length,
      copy: boosted,
      ifModifier: isIfModifier(insn),
      boostable: 1,
      fixup: resumeFixup(insn),
    }
  }
  return {
    insn: slot,
    length: insn.length,
    copy,
    ifModifier: isIfModifier(insn),
    boostable: -1,
    fixup: resumeFixup(insn),
  }
}

/** Which of resume_execution's fix-ups the stepped copy of insn needs. */
function resumeFixup(insn: Instruction): ResumeFixup {
  if (insn.map !== 0) return ResumeFixup.Relocate
  switch (insn.opcode) {
    case 0x9c:
      return ResumeFixup.Pushf
    case 0xc2:
    case 0xc3:
    case 0xca:
    case 0xcb:
    case 0xcf:
    case 0xea:
      return ResumeFixup.Absolute
    case 0xe8:
      return ResumeFixup.CallRelative
    case 0xff: {
      const reg = insn.reg & 7
      if (reg === 2 || reg === 3) return ResumeFixup.CallIndirect
      if (reg === 4 || reg === 5) return ResumeFixup.Absolute
      return ResumeFixup.Relocate
    }
    default:
      return ResumeFixup.Relocate
  }
}

const JMP32_INSN_SIZE = 5

/** Second bytes of two-byte opcodes (0F xx) that can be boosted (twobyte_is_boostable). */
const TWOBYTE_BOOSTABLE = new Set<number>([
  0x02,
  0x03,
  0x06,
  0x08,
  0x09,
  0x1f,
  0x20,
  0x21,
  0x22,
  0x23,
  0x31,
  ...range(0x40, 0x4f),
  ...range(0x60, 0x6b),
  0x6e,
  0x6f,
  0x74,
  0x75,
  0x76,
  0x77,
  0x7e,
  0x7f,
  ...range(0x90, 0x9f),
  0xa0,
  0xa1,
  0xa3,
  0xa4,
  0xa5,
  0xa8,
  0xa9,
  0xab,
  0xac,
  0xad,
  0xaf,
  ...range(0xb0, 0xb7),
  ...range(0xbb, 0xbf),
  0xc0,
  0xc1,
  ...range(0xc8, 0xcf),
  0xd1,
  0xd2,
  0xd3,
  0xd5,
  0xd8,
  0xd9,
  0xdb,
  0xdc,
  0xdd,
  0xdf,
  0xe1,
  0xe2,
  0xe5,
  0xe8,
  0xe9,
  0xeb,
  0xec,
  0xed,
  0xef,
  0xf1,
  0xf2,
  0xf3,
  0xf5,
  0xf8,
  0xf9,
  0xfa,
  0xfc,
  0xfd,
  0xfe,
])

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i)
}

/**
 * can_boost (arch/x86/kernel/kprobes/core.c, 5.10): may this instruction run
 * from the slot followed by a jump back, without a single-step trap? Not if
 * it can fault into a fixup (exception table), is relative to where it runs
 * (jcc, jmp/call rel, loop), traps (int*), or is a prefix/far form the copy
 * cannot honour.
 */
export function canBoost(kernel: Kernel, insn: Instruction, addr: number): boolean {
  if (kernel.image.exceptionTable.some((e) => e.insn === addr)) return false
  if (insn.addressSizePrefix || insn.segment === 'cs') return false
  if (insn.encoding !== 'legacy') return false
  if (insn.map === 1) return TWOBYTE_BOOSTABLE.has(insn.opcode)
  if (insn.map !== 0) return false
  const op = insn.opcode
  switch (op & 0xf0) {
    case 0x60:
      return op !== 0x62
    case 0x70:
      return false // jcc
    case 0x90:
      return op !== 0x9a // call far
    case 0xc0:
      return (op > 0xc1 && op < 0xcc) || op === 0xcf // not int3/int n/into
    case 0xd0:
      return op === 0xd4 || op === 0xd5 || op === 0xd7 // AA* and XLAT
    case 0xe0:
      return (op & 0x04) !== 0 || op === 0xea // not loop/jcxz/call rel/jmp rel
    case 0xf0:
      return op === 0xf5 || (op > 0xf7 && op < 0xfe)
    default:
      return op !== 0x2e && op !== 0x9a
  }
}

/** arch_arm_kprobe: int3 over the first byte (a one-byte text_poke is atomic for other CPUs). */
export function archArmKprobe(kernel: Kernel, p: RegisteredKprobe): void {
  kernel.services.textPoke(p.addr, [BREAKPOINT_INSTRUCTION])
}

/** arch_disarm_kprobe: put the saved opcode back. */
export function archDisarmKprobe(kernel: Kernel, p: RegisteredKprobe): void {
  kernel.services.textPoke(p.addr, [p.opcode])
}

function read64(kernel: Kernel, addr: number): number {
  return kernel.readKernel64(addr)
}

function write64(kernel: Kernel, addr: number, v: number): void {
  const b = new Uint8Array(8)
  const d = new DataView(b.buffer)
  d.setInt32(0, v | 0, true)
  d.setInt32(4, Math.floor(v / 0x1_0000_0000) | 0, true)
  kernel.writeKernel(addr, b)
}

/**
 * resume_execution: the copy at p.ainsn.insn has been single-stepped; make
 * the state look as if the original at p.addr had run.
 */
export function resumeExecution(kernel: Kernel, p: RegisteredKprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
  const copyIp = p.ainsn.insn
  const origIp = p.addr
  const tos = regs.get('sp')
  regs.set('flags', regs.get('flags') & ~X86_EFLAGS_TF)
  switch (p.ainsn.fixup) {
    case ResumeFixup.Pushf: {
      // pushf copied our TF (and cleared IF) into the stack image: give it the interrupted context's.
      const v = read64(kernel, tos)
      write64(kernel, tos, (v & ~(X86_EFLAGS_TF | X86_EFLAGS_IF)) | kcb.kprobe_old_flags)
      break
    }
    case ResumeFixup.Absolute:
      // ret/lret/iret/jmp far or indirect: ip was loaded from the stack or operand, already right.
      return
    case ResumeFixup.CallRelative:
      // call rel32 pushed an address inside the slot: point it after the original call.
      write64(kernel, tos, origIp + (read64(kernel, tos) - copyIp))
      break
    case ResumeFixup.CallIndirect:
      // Indirect call: fix the return address; ip is the absolute target.
      write64(kernel, tos, origIp + (read64(kernel, tos) - copyIp))
      return
  }
  regs.set('ip', regs.get('ip') + (origIp - copyIp))
}
