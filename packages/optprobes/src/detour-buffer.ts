// The detour buffer (arch/x86/kernel/kprobes/opt.c: optprobe_template_func,
// arch_prepare_optimized_kprobe): the machine code a probed address's 5-byte
// jump goes to. It saves the registers as a pt_regs frame on the stack,
// calls the optimized callback (here a vmcall into the host, which runs the
// pre_handlers on that frame), restores the registers, then runs relocated
// copies of the instructions the jump replaced and jumps back after them.
//
//   push %rsp; pushfq               regs->sp, regs->flags
//   sub $24, %rsp                   regs->cs, ip, orig_ax (filled by the callback)
//   push %rdi ... push %r15         the rest of pt_regs, in its order
//   mov %rsp, %rsi                  the frame
//   movabs $id, %rdi                which probe
//   mov $HC_OPTPROBE_CALLBACK, %eax; vmcall
//   mov 0x90(%rsp), %rdx; mov %rdx, 0x98(%rsp)   regs->flags into the sp slot
//   pop %r15 ... pop %rdi
//   add $24, %rsp; add $8, %rsp     skip cs/ip/orig_ax and the flags slot
//   popfq                           flags back, %rsp as it was at the probe
//   <copied instructions>           relocated for this address
//   jmp <probe address + region size>
//
// A pre_handler's change of regs->ip is lost on the way out (nothing loads
// ip from the frame), as the seed says of optimized probes.

import { HC_OPTPROBE_CALLBACK } from '@probekit/kernel'
import type { Instruction } from '@probekit/x86-emu'

/** The instruction that replaces the probed bytes: jmp rel32. */
export const JMP32_INSN_OPCODE = 0xe9
export const JMP32_INSN_SIZE = 5
/** The longest region the jump's copies may cover (MAX_OPTIMIZED_LENGTH: 5 bytes plus one instruction). */
export const MAX_OPTIMIZED_LENGTH = JMP32_INSN_SIZE + 15
/** An optinsn slot: the template, the copies (rel8 branches grow to rel32) and the jump back. */
export const MAX_OPTINSN_SIZE = 256

const PUSHES: readonly number[][] = [
  [0x57], // di
  [0x56], // si
  [0x52], // dx
  [0x51], // cx
  [0x50], // ax
  [0x41, 0x50], // r8
  [0x41, 0x51], // r9
  [0x41, 0x52], // r10
  [0x41, 0x53], // r11
  [0x53], // bx
  [0x55], // bp
  [0x41, 0x54], // r12
  [0x41, 0x55], // r13
  [0x41, 0x56], // r14
  [0x41, 0x57], // r15
]

/** The template up to the copies, for probe `id` (TMPL_END_IDX is its length). */
export function optprobeTemplate(id: number): number[] {
  const out: number[] = [0x54, 0x9c, 0x48, 0x83, 0xec, 0x18]
  for (const p of PUSHES) out.push(...p)
  out.push(0x48, 0x89, 0xe6) // mov %rsp, %rsi
  out.push(0x48, 0xbf, ...le(BigInt(id), 8)) // movabs $id, %rdi
  out.push(0xb8, ...le(BigInt(HC_OPTPROBE_CALLBACK), 4)) // mov $HC, %eax
  out.push(0x0f, 0x01, 0xc1) // vmcall
  out.push(0x48, 0x8b, 0x94, 0x24, 0x90, 0, 0, 0) // mov 0x90(%rsp), %rdx
  out.push(0x48, 0x89, 0x94, 0x24, 0x98, 0, 0, 0) // mov %rdx, 0x98(%rsp)
  for (const p of [...PUSHES].reverse()) {
    // pop: 0x58+r where push was 0x50+r
    out.push(...(p.length === 2 ? [0x41, p[1] + 8] : [p[0] + 8]))
  }
  out.push(0x48, 0x83, 0xc4, 0x18) // add $24, %rsp
  out.push(0x48, 0x83, 0xc4, 0x08) // add $8, %rsp
  out.push(0x9d) // popfq
  return out
}

function le(v: bigint, n: number): number[] {
  const out: number[] = []
  let x = BigInt.asUintN(n * 8, v)
  for (let i = 0; i < n; i++) {
    out.push(Number(x & 0xffn))
    x >>= 8n
  }
  return out
}

function rel32(from: number, to: number): number[] | null {
  const d = to - from
  if (d < -0x80000000 || d > 0x7fffffff) return null
  return le(BigInt(d), 4)
}

/**
 * One region instruction copied to run at `at`: RIP-relative operands re-aimed, relative jmp/jcc
 * re-encoded as rel32 to the same target. null: out of reach.
 */
export function relocateInstruction(insn: Instruction, at: number): number[] | null {
  const bytes = [...insn.bytes]
  if (insn.branchTarget !== null && insn.map === 0 && (insn.opcode === 0xeb || insn.opcode === 0xe9)) {
    const r = rel32(at + JMP32_INSN_SIZE, insn.branchTarget)
    return r ? [0xe9, ...r] : null
  }
  if (insn.branchTarget !== null && insn.map === 0 && insn.opcode >= 0x70 && insn.opcode <= 0x7f) {
    const r = rel32(at + 6, insn.branchTarget)
    return r ? [0x0f, 0x80 + (insn.opcode - 0x70), ...r] : null
  }
  if (insn.branchTarget !== null && insn.map === 1 && insn.opcode >= 0x80 && insn.opcode <= 0x8f) {
    const r = rel32(at + 6, insn.branchTarget)
    return r ? [0x0f, insn.opcode, ...r] : null
  }
  if (insn.ripRelative && insn.displacementOffset >= 0) {
    // The operand's address is next-ip + disp: keep it, from the copy's next ip.
    const target = insn.address + insn.length + insn.displacement
    const r = rel32(at + insn.length, target)
    if (!r) return null
    bytes.splice(insn.displacementOffset, 4, ...r)
  }
  return bytes
}

/** The whole buffer for probe `id` at `addr`, placed at `buffer`; the copies start at `copyOffset`. */
export function buildDetourBuffer(
  id: number,
  addr: number,
  buffer: number,
  region: readonly Instruction[],
): { bytes: Uint8Array; copyOffset: number; size: number } | null {
  const out = optprobeTemplate(id)
  const copyOffset = out.length
  for (const insn of region) {
    const copy = relocateInstruction(insn, buffer + out.length)
    if (!copy) return null
    out.push(...copy)
  }
  const size = region.reduce((n, i) => n + i.length, 0)
  const back = rel32(buffer + out.length + JMP32_INSN_SIZE, addr + size)
  if (!back) return null
  out.push(JMP32_INSN_OPCODE, ...back)
  if (out.length > MAX_OPTINSN_SIZE) return null
  return { bytes: Uint8Array.from(out), copyOffset, size }
}

/** The 5 bytes written over the probed address: jmp rel32 to the buffer. */
export function optimizedJump(addr: number, buffer: number): Uint8Array | null {
  const r = rel32(addr + JMP32_INSN_SIZE, buffer)
  return r ? Uint8Array.of(JMP32_INSN_OPCODE, ...r) : null
}
