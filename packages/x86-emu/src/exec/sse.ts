// SSE and SSE2 (legacy encodings): the single entry point that families.ts
// calls for 0F-map opcodes. Returns null for anything it does not implement
// (the caller then tries its other families and finally raises #UD).
//
// Implemented: everything SSE and SSE2 define on XMM registers and MXCSR,
// fxsave/fxrstor, and the MMX forms (mmx.ts: MMX itself and the SSE/SSE2
// additions on mm registers; cvtpi2ps & co. in sse-convert.ts). CPUID leaf 1
// EDX reports MMX, FXSR, SSE, SSE2 and nothing newer. Not implemented (#UD):
// SSE3 lddqu, movddup, movsldup, movshdup, haddps/pd, hsubps/pd,
// addsubps/pd; AMD's SSE4a movntss, movntsd, extrq, insertq; anything
// newer. VEX encodings are AVX and are left alone.
//
// Files: sse-common.ts (scratch vector, operand loads/stores, alignment),
// sse-ieee.ts (IEEE arithmetic, MXCSR rounding and flags), sse-move.ts,
// sse-int.ts, sse-shuffle.ts, sse-float.ts, sse-convert.ts, sse-state.ts.

import type { Instruction } from '../decoder/instruction.js'
import { compileMmx, compileMovqMmXmm } from './mmx.js'
import type { Op } from './op.js'
import {
  compileCvtDq,
  compileCvtFloat,
  compileCvtPdDq,
  compileCvtp2pi,
  compileCvtpi2p,
  compileCvts2si,
  compileCvtsi2s,
} from './sse-convert.js'
import {
  compileApprox,
  compileComis,
  compileFpArith,
  compileFpCompare,
  compileFpLogic,
  compileMovmsk,
} from './sse-float.js'
import { compilePackedInt, compileShiftImm } from './sse-int.js'
import {
  compileMaskmovdqu,
  compileMovAps,
  compileMovDq,
  compileMovdFromXmm,
  compileMovdToXmm,
  compileMovLowHigh,
  compileMovqStore,
  compileMovUps,
  compilePextrw,
  compilePinsrw,
  compilePmovmskb,
} from './sse-move.js'
import { compileIntShuffle, compilePshuf, compileShufp, compileUnpckp } from './sse-shuffle.js'
import { compileSseState } from './sse-state.js'

/** Compile a legacy-encoded SSE/SSE2 instruction of the 0F map, or null when it is not one this implements. */
export function compileSse(insn: Instruction): Op | null {
  if (insn.encoding !== 'legacy' || insn.map !== 1) return null
  const mmx = compileMmx(insn)
  if (mmx !== null) return mmx
  const o = insn.opcode
  switch (o) {
    case 0x10:
    case 0x11:
      return compileMovUps(insn)
    case 0x12:
    case 0x13:
    case 0x16:
    case 0x17:
      return compileMovLowHigh(insn)
    case 0x14:
    case 0x15:
      return compileUnpckp(insn)
    case 0x28:
    case 0x29:
    case 0x2b:
      return compileMovAps(insn)
    case 0x2a:
      return insn.mandatoryPrefix === 0 || insn.mandatoryPrefix === 0x66
        ? compileCvtpi2p(insn)
        : compileCvtsi2s(insn)
    case 0x2c:
    case 0x2d:
      return insn.mandatoryPrefix === 0 || insn.mandatoryPrefix === 0x66
        ? compileCvtp2pi(insn)
        : compileCvts2si(insn)
    case 0x2e:
    case 0x2f:
      return compileComis(insn)
    case 0x50:
      return compileMovmsk(insn)
    case 0x51:
    case 0x58:
    case 0x59:
    case 0x5c:
    case 0x5d:
    case 0x5e:
    case 0x5f:
      return compileFpArith(insn)
    case 0x52:
    case 0x53:
      return compileApprox(insn)
    case 0x54:
    case 0x55:
    case 0x56:
    case 0x57:
      return compileFpLogic(insn)
    case 0x5a:
      return compileCvtFloat(insn)
    case 0x5b:
      return compileCvtDq(insn)
    case 0x6e:
      return compileMovdToXmm(insn)
    case 0x6f:
    case 0x7f:
    case 0xe7:
      return compileMovDq(insn)
    case 0x70:
      return compilePshuf(insn)
    case 0x71:
    case 0x72:
    case 0x73:
      return compileShiftImm(insn)
    case 0x7e:
      return compileMovdFromXmm(insn)
    case 0xae:
      return compileSseState(insn)
    case 0xc2:
      return compileFpCompare(insn)
    case 0xc4:
      return compilePinsrw(insn)
    case 0xc5:
      return compilePextrw(insn)
    case 0xc6:
      return compileShufp(insn)
    case 0xd6:
      return insn.mandatoryPrefix === 0x66 ? compileMovqStore(insn) : compileMovqMmXmm(insn)
    case 0xd7:
      return compilePmovmskb(insn)
    case 0xe6:
      return compileCvtPdDq(insn)
    case 0xf7:
      return compileMaskmovdqu(insn)
  }
  if (o >= 0x60 && o <= 0x6d) return o >= 0x64 && o <= 0x66 ? compilePackedInt(insn) : compileIntShuffle(insn)
  if ((o >= 0x74 && o <= 0x76) || (o >= 0xd1 && o <= 0xfe)) return compilePackedInt(insn)
  return null
}
