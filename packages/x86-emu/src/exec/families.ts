// Instruction families compiled outside compile.ts's main tables (shifts,
// multiply/divide, bit operations, conditional moves, strings, atomics,
// fences). Each returns null for an opcode it does not know.

import type { Instruction } from '../decoder/instruction.js'
import { compileCmpxchg, compileCmpxchgWide, compileXadd } from './atomic.js'
import { compileBitScan, compileBitTest, popcntUd } from './bits.js'
import { compileCmov, compileSetcc } from './cond.js'
import { nop } from './move.js'
import { compileImul, compileMulDiv } from './muldiv.js'
import type { Op } from './op.js'
import { compileEa, memWriteAt, readGpr, writeRm } from './operands.js'
import { compileDoubleShift, compileShift } from './shift.js'
import { compileSse } from './sse.js'
import { compileString, compileXlat } from './string.js'
import { compileX87 } from './x87.js'

export function extraLegacy(insn: Instruction): Op | null {
  if (insn.encoding !== 'legacy' || insn.map !== 0) return null
  const o = insn.opcode
  switch (o) {
    case 0xc0:
    case 0xc1:
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
      return compileShift(insn)
    case 0xf6:
    case 0xf7:
      return (insn.reg & 7) >= 4 ? compileMulDiv(insn) : null
    case 0x69:
    case 0x6b:
      return compileImul(insn)
    case 0xa4:
    case 0xa5:
    case 0xa6:
    case 0xa7:
    case 0xaa:
    case 0xab:
    case 0xac:
    case 0xad:
    case 0xae:
    case 0xaf:
      return compileString(insn)
    case 0xd7:
      return compileXlat(insn)
    case 0x9b:
    case 0xd8:
    case 0xd9:
    case 0xda:
    case 0xdb:
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf:
      return compileX87(insn)
    case 0x8c:
      return compileMovFromSreg(insn)
  }
  return null
}

export function extraTwoByte(insn: Instruction): Op | null {
  // SSE/SSE2 (incl. fxsave/fxrstor/ldmxcsr/stmxcsr in 0F AE) first: it returns null for everything else.
  const sse = compileSse(insn)
  if (sse !== null) return sse
  const o = insn.opcode
  if (o >= 0x40 && o <= 0x4f) return compileCmov(insn)
  if (o >= 0x90 && o <= 0x9f) return compileSetcc(insn)
  switch (o) {
    case 0xa3:
    case 0xab:
    case 0xb3:
    case 0xbb:
      return compileBitTest(insn)
    case 0xba:
      return (insn.reg & 7) >= 4 ? compileBitTest(insn) : null
    case 0xa4:
    case 0xa5:
    case 0xac:
    case 0xad:
      return compileDoubleShift(insn)
    case 0xaf:
      return compileImul(insn)
    case 0xb0:
    case 0xb1:
      return compileCmpxchg(insn)
    case 0xc0:
    case 0xc1:
      return compileXadd(insn)
    case 0xc7:
      return (insn.reg & 7) === 1 && insn.mod !== 3 ? compileCmpxchgWide(insn) : null
    case 0xbc:
    case 0xbd:
      return compileBitScan(insn)
    case 0xb8:
      return insn.rep === 0xf3 ? popcntUd : null
    case 0xae:
      return compileGroup15(insn)
    case 0xc3:
      return insn.mod !== 3 ? compileMovnti(insn) : null
  }
  return null
}

/** 0F AE: the fences (no-ops: vCPUs interleave at instruction boundaries) and clflush (fxsave & co.: sse-state.ts). */
function compileGroup15(insn: Instruction): Op | null {
  const r = insn.reg & 7
  if (insn.mod === 3) return insn.mandatoryPrefix === 0 && r >= 5 ? nop : null
  if (r === 7 && (insn.mandatoryPrefix === 0 || insn.mandatoryPrefix === 0x66)) {
    // clflush/clflushopt: no cache to flush, but it faults like a byte load.
    const ea = compileEa(insn)
    return (c) => void c.read8(ea(c))
  }
  return null
}

/** 0F C3 movnti m32/m64, r: a plain store here (no caches to bypass). */
function compileMovnti(insn: Instruction): Op {
  const size = insn.operandSize === 8 ? 8 : 4
  const rd = readGpr(insn, size)
  const ea = compileEa(insn)
  const wr = memWriteAt(size)
  return (c) => {
    const lo = rd(c)
    wr(c, ea(c), lo, c.th)
  }
}

/** 8C mov r/m, Sreg: a register destination gets the selector zero-extended, memory always 16 bits. */
function compileMovFromSreg(insn: Instruction): Op | null {
  const s = insn.reg & 7
  if (s > 5) return null
  const size = insn.mod === 3 ? insn.operandSize : 2
  const wr = writeRm(insn, size)
  return (c) => {
    const sel =
      s === 0 ? c.es : s === 1 ? c.cs : s === 2 ? c.ss : s === 3 ? c.ds : s === 4 ? c.fsSel : c.gsSel
    wr(c, sel & 0xffff, 0)
  }
}
