// Instruction compiler: picks the family compiler for a decoded instruction
// and says whether the op ends its block.

import { formatLinear } from '../address.js'
import { Unimplemented } from '../cpu/exceptions.js'
import { type Instruction, InstructionFlag } from '../decoder/instruction.js'
import { compileAluGroup1, compileAluRow, compileIncDec, compileNotNeg, compileTest } from './arith.js'
import {
  compileCallRel,
  compileIndirect,
  compileJcc,
  compileJmpRel,
  compileLoop,
  compileRet,
} from './control.js'
import { extraLegacy, extraTwoByte } from './families.js'
import {
  compileBswap,
  compileCbw,
  compileCwd,
  compileFlagBit,
  compileLahfSahf,
  compileLea,
  compileMovExtend,
  compileMovImm,
  compileMovMoffs,
  compileMovRmReg,
  compileXchg,
  nop,
} from './move.js'
import { type Op, OpTraits } from './op.js'
import { compileEnter, compileLeave, compilePop, compilePopf, compilePush, compilePushf } from './stack.js'
import {
  compileCliSti,
  compileDescriptorTable,
  compileGroup6,
  compileHlt,
  compileInt,
  compileInvlpg,
  compileIret,
  compileMovCr,
  compileMovDr,
  compileMsr,
  compilePrivilegedNop,
  compileRdtsc,
  compileSyscall,
  compileSysret,
  cpuidOp,
  ioPort,
  swapgs,
  ud,
  vmcall,
} from './system.js'

export interface Compiled {
  op: Op
  traits: number
}

function unimplemented(insn: Instruction): Op {
  const bytes = [...insn.bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')
  const what = `unimplemented instruction '${insn.mnemonic}' (${bytes}) at ${formatLinear(insn.address)}`
  return () => {
    throw new Unimplemented(what)
  }
}

/** Instructions that change state the block builder assumed (flags mode, privilege, mappings) end their block. */
function endsBlock(insn: Instruction): boolean {
  if (insn.encoding !== 'legacy') return false
  if (insn.map === 0) {
    const o = insn.opcode
    return o === 0x9d || o === 0xfa || o === 0xfb || (o >= 0xa4 && o <= 0xaf && insn.rep !== 0)
  }
  if (insn.map === 1) {
    const o = insn.opcode
    return (
      o === 0x01 ||
      o === 0x00 ||
      o === 0x22 ||
      o === 0x23 ||
      o === 0x30 ||
      o === 0x06 ||
      o === 0x08 ||
      o === 0x09
    )
  }
  return false
}

/** Instructions that set RIP themselves (the last op of a block, or a branch it continues after). */
export const BRANCH_FLAGS =
  InstructionFlag.Call |
  InstructionFlag.Jump |
  InstructionFlag.Conditional |
  InstructionFlag.Ret |
  InstructionFlag.Iret |
  InstructionFlag.Int3 |
  InstructionFlag.Int |
  InstructionFlag.Syscall |
  InstructionFlag.Sysret |
  InstructionFlag.Halt |
  InstructionFlag.Hypercall |
  InstructionFlag.FarBranch

export function compileInstruction(insn: Instruction): Compiled {
  const op = select(insn) ?? unimplemented(insn)
  let traits = 0
  if ((insn.flags & BRANCH_FLAGS) !== 0) traits |= OpTraits.Branch
  else if (endsBlock(insn)) traits |= OpTraits.EndsBlock
  if (
    (traits & OpTraits.Branch) !== 0 &&
    (insn.flags & (InstructionFlag.Int3 | InstructionFlag.Int | InstructionFlag.Hypercall)) !== 0
  ) {
    // These "branch" through a trap or the host: RIP is the next instruction unless they change it.
    const next = insn.address + insn.length
    return {
      op: (c) => {
        c.rip = next
        op(c)
      },
      traits,
    }
  }
  return { op, traits }
}

function select(insn: Instruction): Op | null {
  if (insn.encoding !== 'legacy') return extraLegacy(insn)
  if (insn.map === 1) return selectTwoByte(insn)
  if (insn.map !== 0) return extraLegacy(insn)
  const o = insn.opcode
  if (o < 0x40 && (o & 7) < 6) return compileAluRow(insn)
  if (o >= 0x50 && o <= 0x57) return compilePush(insn)
  if (o >= 0x58 && o <= 0x5f) return compilePop(insn)
  if (o >= 0x70 && o <= 0x7f) return compileJcc(insn)
  if (o >= 0x91 && o <= 0x97) return compileXchg(insn)
  if (o >= 0xb0 && o <= 0xbf) return compileMovImm(insn)
  if ((o >= 0xe4 && o <= 0xe7) || (o >= 0xec && o <= 0xef) || (o >= 0x6c && o <= 0x6f)) return ioPort
  switch (o) {
    case 0x63:
      return compileMovExtend(insn)
    case 0x68:
    case 0x6a:
      return compilePush(insn)
    case 0x80:
    case 0x81:
    case 0x83:
      return compileAluGroup1(insn)
    case 0x84:
    case 0x85:
    case 0xa8:
    case 0xa9:
      return compileTest(insn)
    case 0x86:
    case 0x87:
      return compileXchg(insn)
    case 0x88:
    case 0x89:
    case 0x8a:
    case 0x8b:
      return compileMovRmReg(insn)
    case 0x8d:
      return compileLea(insn)
    case 0x8f:
      return compilePop(insn)
    case 0x90:
      return insn.rexB ? compileXchg(insn) : nop
    case 0x98:
      return compileCbw(insn)
    case 0x99:
      return compileCwd(insn)
    case 0x9c:
      return compilePushf(insn)
    case 0x9d:
      return compilePopf(insn)
    case 0x9e:
    case 0x9f:
      return compileLahfSahf(insn)
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa3:
      return compileMovMoffs(insn)
    case 0xc2:
    case 0xc3:
      return compileRet(insn)
    case 0xc6:
    case 0xc7:
      return (insn.reg & 7) === 0 ? compileMovImm(insn) : extraLegacy(insn)
    case 0xc8:
      return compileEnter(insn)
    case 0xc9:
      return compileLeave(insn)
    case 0xcc:
    case 0xcd:
    case 0xf1:
      return compileInt(insn)
    case 0xcf:
      return compileIret(insn)
    case 0xe0:
    case 0xe1:
    case 0xe2:
    case 0xe3:
      return compileLoop(insn)
    case 0xe8:
      return compileCallRel(insn)
    case 0xe9:
    case 0xeb:
      return compileJmpRel(insn)
    case 0xf4:
      return compileHlt(insn)
    case 0xf5:
    case 0xf8:
    case 0xf9:
    case 0xfc:
    case 0xfd:
      return compileFlagBit(insn)
    case 0xfa:
    case 0xfb:
      return compileCliSti(insn)
    case 0xf6:
    case 0xf7: {
      const r = insn.reg & 7
      if (r === 0 || r === 1) return compileTest(insn)
      if (r === 2 || r === 3) return compileNotNeg(insn)
      return extraLegacy(insn)
    }
    case 0xfe:
    case 0xff: {
      const r = insn.reg & 7
      if (r <= 1) return compileIncDec(insn)
      if (o === 0xff && (r === 2 || r === 4)) return compileIndirect(insn)
      if (o === 0xff && r === 6) return compilePush(insn)
      return extraLegacy(insn)
    }
  }
  return extraLegacy(insn)
}

function selectTwoByte(insn: Instruction): Op | null {
  const o = insn.opcode
  if (o >= 0x80 && o <= 0x8f) return compileJcc(insn)
  if (o >= 0xc8 && o <= 0xcf) return compileBswap(insn)
  if (o >= 0x18 && o <= 0x1f) return nop // hint nops, prefetch, endbr
  switch (o) {
    case 0x00:
      return compileGroup6(insn)
    case 0x01:
      return selectGroup7(insn)
    case 0x05:
      return compileSyscall(insn)
    case 0x06:
      return compilePrivilegedNop('clts')
    case 0x07:
      return compileSysret(insn)
    case 0x08:
      return compilePrivilegedNop('invd')
    case 0x09:
      return compilePrivilegedNop('wbinvd')
    case 0x0b:
    case 0xb9:
    case 0xff:
      return ud
    case 0x0d:
      return nop // prefetchw
    case 0x20:
    case 0x22:
      return compileMovCr(insn)
    case 0x21:
    case 0x23:
      return compileMovDr(insn)
    case 0x30:
      return compileMsr(true)
    case 0x31:
      return compileRdtsc(false)
    case 0x32:
      return compileMsr(false)
    case 0xa0:
    case 0xa8:
      return compilePush(insn)
    case 0xa1:
    case 0xa9:
      return compilePop(insn)
    case 0xa2:
      return cpuidOp
    case 0xb6:
    case 0xb7:
    case 0xbe:
    case 0xbf:
      return compileMovExtend(insn)
  }
  return extraTwoByte(insn)
}

function selectGroup7(insn: Instruction): Op | null {
  if (insn.mod !== 3) {
    const r = insn.reg & 7
    if (r <= 3) return compileDescriptorTable(insn)
    if (r === 7) return compileInvlpg(insn)
    return null
  }
  switch (insn.modrm) {
    case 0xc1:
      return vmcall
    case 0xf8:
      return swapgs
    case 0xf9:
      return compileRdtsc(true)
  }
  return null
}
