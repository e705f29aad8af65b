// Can a kprobe's address take a 5-byte jump? (arch/x86/kernel/kprobes/opt.c:
// can_optimize, copy_optimized_instructions.) The jump replaces every
// instruction it overlaps (the region, DCR), so:
// - the region lies inside one function (kallsyms' size);
// - nothing in the function jumps into bytes 1..4 of the jump (JTPR), which
//   needs the whole function decoded from its start; and the function has
//   no indirect jump (a jump table could land anywhere in it);
// - no instruction in the function is in the exception table (a fixup could
//   jump back into the region);
// - each region instruction runs correctly from the buffer: boostable (as
//   kprobes decides it), or a relative jmp/jcc (re-encoded), and not a call.
// Each refusal says why, for the API and the command line.

import type { Kernel } from '@probekit/kernel'
import { canBoost } from '@probekit/kprobes'
import { type Instruction, InstructionFlag, tryDecode } from '@probekit/x86-emu'
import { JMP32_INSN_SIZE, MAX_OPTIMIZED_LENGTH } from './detour-buffer.js'

export type CanOptimize = { ok: true; region: Instruction[]; size: number } | { ok: false; reason: string }

/** Reads the original text at an address (other probes' int3s and jumps recovered). */
export type ReadOriginal = (addr: number) => Uint8Array

const no = (reason: string): CanOptimize => ({ ok: false, reason })

export function canOptimize(kernel: Kernel, addr: number, read: ReadOriginal): CanOptimize {
  const ks = kernel.kallsyms
  const fn = ks.functionAt(addr)
  if (!fn) return no('not inside a known function')
  const end = fn.address + fn.size
  if (end - addr < JMP32_INSN_SIZE) return no(`the jump would run past the end of ${fn.name}`)
  const fault = new Set(kernel.image.exceptionTable.map((e) => e.insn))
  let region: Instruction[] = []
  let regionEnd: number | null = null // (kernel addresses are negative numbers)
  for (let a = fn.address; a < end; ) {
    const insn = tryDecode(read(a), a)
    if (insn instanceof Error) return no(`${ks.format(a)} does not decode`)
    if (fault.has(a)) return no(`${ks.format(a)} may fault to an exception-table fixup`)
    if (isIndirectJump(insn)) return no(`${fn.name} has an indirect jump at ${ks.format(a)} (a jump table)`)
    if (insn.branchTarget !== null && insn.branchTarget > addr && insn.branchTarget < addr + JMP32_INSN_SIZE)
      return no(`${ks.format(a)} jumps into the bytes the jump would replace`)
    if (a === addr) region = []
    if (a >= addr && regionEnd === null) {
      if (a !== addr && region.length === 0) return no('not on an instruction boundary')
      region.push(insn)
      if (a + insn.length - addr >= JMP32_INSN_SIZE) regionEnd = a + insn.length
    }
    a += insn.length
  }
  if (region.length === 0 || region[0].address !== addr) return no('not on an instruction boundary')
  if (regionEnd === null) return no(`the jump would run past the end of ${fn.name}`)
  const size = regionEnd - addr
  if (size > MAX_OPTIMIZED_LENGTH) return no('the replaced instructions are too long')
  for (const insn of region) {
    const why = unrelocatable(kernel, insn)
    if (why) return no(`${ks.format(insn.address)}: ${why}`)
  }
  return { ok: true, region, size }
}

/** insn_is_indirect_jump: jmp through a register or memory (ff /4, ff /5), or a far jump. */
function isIndirectJump(insn: Instruction): boolean {
  if (insn.encoding !== 'legacy' || insn.map !== 0) return false
  if (insn.opcode === 0xea) return true
  return insn.opcode === 0xff && (insn.reg === 4 || insn.reg === 5)
}

/** Why a region instruction cannot run from the buffer (null: it can). */
function unrelocatable(kernel: Kernel, insn: Instruction): string | null {
  if ((insn.flags & InstructionFlag.Call) !== 0) return 'a call (its return address would be in the buffer)'
  const relJump =
    insn.encoding === 'legacy' &&
    insn.branchTarget !== null &&
    ((insn.map === 0 &&
      (insn.opcode === 0xeb || insn.opcode === 0xe9 || (insn.opcode >= 0x70 && insn.opcode <= 0x7f))) ||
      (insn.map === 1 && insn.opcode >= 0x80 && insn.opcode <= 0x8f))
  if (relJump) return null
  if (!canBoost(kernel, insn, insn.address)) return `${insn.mnemonic} cannot run out of place`
  return null
}
