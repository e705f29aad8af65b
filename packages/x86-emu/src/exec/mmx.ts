// MMX (and the SSE/SSE2 additions on MMX registers): the 0F-map forms without
// a 66 prefix whose operands are mm registers (register state and aliasing:
// mmx-state.ts). The lane computations are the SSE ones (sse-int.ts,
// sse-shuffle.ts) run on the low quadwords of the SCRATCH slots.
//
// MMX register numbers ignore REX.R/REX.B (mm0-mm7 only); GPR operands
// (movd, pinsrw, pextrw, pmovmskb) use them as usual. Memory operands are
// m64 with no alignment requirement. The conversions between mm and XMM
// registers (cvtpi2ps & co.) are in sse-convert.ts.

import { x87State } from '../cpu/fpu-state.js'
import type { Instruction } from '../decoder/instruction.js'
import { emms, loadMmRm, mmFromScratch, mmSet, mmToScratch, mmxBegin, mmxTransition } from './mmx-state.js'
import type { Op } from './op.js'
import { compileEa, readRm, writeReg, writeRm } from './operands.js'
import { DST, I32, imm8, RES, SRC, U8 } from './sse-common.js'
import { type Compute, packedIntCompute, shiftImmCompute } from './sse-int.js'
import { byteSigns, compileMaskmov } from './sse-move.js'
import { intShuffleCompute, shuffleLowWords } from './sse-shuffle.js'

/** mm(reg) = f(mm(reg), mm/m64). */
function binary64(insn: Instruction, compute: Compute): Op {
  const d = insn.reg & 7
  // punpcklbw/wd/dq mm, mm/m32: the low unpacks read only 32 bits of memory.
  const load = loadMmRm(insn, SRC, insn.opcode >= 0x60 && insn.opcode <= 0x62 ? 4 : 8)
  return (c) => {
    const s = mmxBegin(c)
    load(c, s)
    mmToScratch(s, d, DST)
    compute()
    mmxTransition(s)
    mmFromScratch(s, d, RES)
  }
}

/** 0F 71/72/73 /2 /4 /6 ib: shifts of mm(rm) by an immediate. */
function shiftImm(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  const f = shiftImmCompute(insn, false)
  if (f === null) return null
  const d = insn.rm & 7
  return (c) => {
    const s = mmxBegin(c)
    mmToScratch(s, d, DST)
    f()
    mmxTransition(s)
    mmFromScratch(s, d, RES)
  }
}

/** 0F 6E movd/movq mm, r/m32/64 (zero-extended). */
function movdToMm(insn: Instruction): Op {
  const wide = insn.rexW
  const rd = readRm(insn, wide ? 8 : 4)
  const d = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    const lo = rd(c)
    const hi = wide ? c.th : 0
    mmxTransition(s)
    mmSet(s, d, lo, hi)
  }
}

/** 0F 7E movd/movq r/m32/64, mm. */
function movdFromMm(insn: Instruction): Op {
  const wr = writeRm(insn, insn.rexW ? 8 : 4)
  const r = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    mmToScratch(s, r, DST)
    wr(c, I32[0], I32[1])
    mmxTransition(s)
  }
}

/** 0F 6F movq mm, mm/m64. */
function movqLoad(insn: Instruction): Op {
  const load = loadMmRm(insn, SRC)
  const d = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    load(c, s)
    mmxTransition(s)
    mmFromScratch(s, d, SRC)
  }
}

/** 0F 7F movq mm/m64, mm; 0F E7 movntq m64, mm (a plain store: no caches to bypass). */
function movqStore(insn: Instruction): Op {
  const r = insn.reg & 7
  if (insn.mod === 3) {
    const d = insn.rm & 7
    return (c) => {
      const s = mmxBegin(c)
      mmToScratch(s, r, DST)
      mmxTransition(s)
      mmFromScratch(s, d, DST)
    }
  }
  const ea = compileEa(insn)
  return (c) => {
    const s = mmxBegin(c)
    mmToScratch(s, r, DST)
    c.write64(ea(c), I32[0], I32[1])
    mmxTransition(s)
  }
}

/** 0F C4 pinsrw mm, r32/m16, imm8. */
function pinsrw(insn: Instruction): Op {
  const rd = readRm(insn, 2)
  const k = imm8(insn) & 3
  const d = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    const v = rd(c)
    mmToScratch(s, d, DST)
    U8[2 * k] = v
    U8[2 * k + 1] = v >> 8
    mmxTransition(s)
    mmFromScratch(s, d, DST)
  }
}

/** 0F C5 pextrw r32/r64, mm, imm8 (zero-extended). */
function pextrw(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  const k = imm8(insn) & 3
  const r = insn.rm & 7
  const wr = writeReg(insn.reg, 8)
  return (c) => {
    const s = mmxBegin(c)
    mmToScratch(s, r, DST)
    wr(c, U8[2 * k] | (U8[2 * k + 1] << 8), 0)
    mmxTransition(s)
  }
}

/** 0F D7 pmovmskb r32/r64, mm: the 8 bytes' top bits. */
function pmovmskb(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  const r = insn.rm & 7
  const wr = writeReg(insn.reg, 8)
  return (c) => {
    const s = mmxBegin(c)
    mmToScratch(s, r, DST)
    wr(c, (byteSigns(I32[1]) << 4) | byteSigns(I32[0]), 0)
    mmxTransition(s)
  }
}

/** 0F F7 maskmovq mm1, mm2: the bytes of mm1 selected by mm2 to DS:[rDI]. */
function maskmovq(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  const r = insn.reg & 7
  const m = insn.rm & 7
  const op = compileMaskmov(insn, 8, (c) => {
    const s = x87State(c)
    mmToScratch(s, r, 0)
    mmToScratch(s, m, 4)
  })
  return (c) => {
    const s = mmxBegin(c)
    op(c)
    mmxTransition(s)
  }
}

/** MMX and SSE-on-MMX forms (no mandatory prefix) of the 0F map; null for anything else. */
export function compileMmx(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0) return null
  const o = insn.opcode
  switch (o) {
    case 0x6e:
      return movdToMm(insn)
    case 0x6f:
      return movqLoad(insn)
    case 0x70:
      return binary64(insn, shuffleLowWords(imm8(insn)))
    case 0x71:
    case 0x72:
    case 0x73:
      return shiftImm(insn)
    case 0x77:
      return emms
    case 0x7e:
      return movdFromMm(insn)
    case 0x7f:
      return movqStore(insn)
    case 0xe7:
      return insn.mod === 3 ? null : movqStore(insn)
    case 0xc4:
      return pinsrw(insn)
    case 0xc5:
      return pextrw(insn)
    case 0xd7:
      return pmovmskb(insn)
    case 0xf7:
      return maskmovq(insn)
  }
  if (o >= 0x60 && o <= 0x6b) {
    const f = o >= 0x64 && o <= 0x66 ? packedIntCompute(o) : intShuffleCompute(o, 8)
    return f ? binary64(insn, f) : null
  }
  if ((o >= 0x74 && o <= 0x76) || (o >= 0xd1 && o <= 0xfe)) {
    const f = packedIntCompute(o)
    return f ? binary64(insn, f) : null
  }
  return null
}

/** F3 0F D6 movq2dq xmm, mm (upper quadword zeroed); F2 0F D6 movdq2q mm, xmm (low quadword). */
export function compileMovqMmXmm(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  if (insn.mandatoryPrefix === 0xf3) {
    const r = insn.rm & 7
    const d = insn.reg * 4
    return (c) => {
      const s = mmxBegin(c)
      mmToScratch(s, r, DST)
      mmxTransition(s)
      const x = c.xmm
      x[d] = I32[0]
      x[d + 1] = I32[1]
      x[d + 2] = 0
      x[d + 3] = 0
    }
  }
  if (insn.mandatoryPrefix !== 0xf2) return null
  const r = insn.rm * 4
  const d = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    const x = c.xmm
    mmxTransition(s)
    mmSet(s, d, x[r], x[r + 1])
  }
}
