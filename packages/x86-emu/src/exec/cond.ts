// Condition-code consumers besides jcc: setcc (0F 90-9F) and cmovcc (0F 40-4F).

import { condition } from '../cpu/flags.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { readRm, writeGpr, writeRm } from './operands.js'

/** 0F 90+cc setcc r/m8. */
export function compileSetcc(insn: Instruction): Op {
  const cc = insn.opcode & 15
  const wr = writeRm(insn, 1)
  return (c) => wr(c, condition(c, cc) ? 1 : 0, 0)
}

/**
 * 0F 40+cc cmovcc reg, r/m. The source is read whatever the condition (a
 * memory operand can fault), and a 32-bit destination is zero-extended even
 * when nothing moves.
 */
export function compileCmov(insn: Instruction): Op {
  const cc = insn.opcode & 15
  const size = insn.operandSize
  const rd = readRm(insn, size)
  const d = 2 * insn.reg
  if (size === 4) {
    return (c) => {
      const v = rd(c)
      if (condition(c, cc)) c.r[d] = v
      c.r[d + 1] = 0
    }
  }
  if (size === 8) {
    return (c) => {
      const lo = rd(c)
      if (condition(c, cc)) {
        c.r[d] = lo
        c.r[d + 1] = c.th
      }
    }
  }
  const wr = writeGpr(insn, 2)
  return (c) => {
    const v = rd(c)
    if (condition(c, cc)) wr(c, v, 0)
  }
}
