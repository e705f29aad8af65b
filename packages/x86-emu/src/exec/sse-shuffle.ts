// SSE/SSE2 shuffles, unpacks and packs: shufps/shufpd, unpck{l,h}{ps,pd},
// punpck{l,h}{bw,wd,dq,qdq}, packsswb/packssdw/packuswb, pshufd/pshufhw/
// pshuflw. All take xmm, xmm/m128 (16-byte aligned when in memory) and go
// through SCRATCH (sse-common.ts: destination dwords 0-3, source 4-7,
// result 8-11).

import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { binary128, I16, I32, imm8, U8, U16 } from './sse-common.js'
import type { Compute } from './sse-int.js'

function sat(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(v, hi))
}

/**
 * Interleave the low (high) halves of destination and source, elements of
 * `size` bytes, for registers of `width` bytes (16: XMM, 8: MMX, whose
 * operands sit in the low quadwords of the slots).
 */
function unpack(size: number, high: boolean, width: number): Compute {
  const n = width / size / 2 // elements taken from each operand
  switch (size) {
    case 1: {
      const o = high ? n : 0
      return () => {
        for (let i = 0; i < n; i++) {
          U8[32 + 2 * i] = U8[o + i]
          U8[33 + 2 * i] = U8[16 + o + i]
        }
      }
    }
    case 2: {
      const o = high ? n : 0
      return () => {
        for (let i = 0; i < n; i++) {
          U16[16 + 2 * i] = U16[o + i]
          U16[17 + 2 * i] = U16[8 + o + i]
        }
      }
    }
    case 4: {
      const o = high ? n : 0
      if (n === 1)
        return () => {
          I32[8] = I32[o]
          I32[9] = I32[4 + o]
        }
      return () => {
        I32[8] = I32[o]
        I32[9] = I32[4 + o]
        I32[10] = I32[o + 1]
        I32[11] = I32[5 + o]
      }
    }
    default: {
      const o = high ? 2 : 0
      return () => {
        I32[8] = I32[o]
        I32[9] = I32[o + 1]
        I32[10] = I32[4 + o]
        I32[11] = I32[5 + o]
      }
    }
  }
}

/** Saturating packs: the destination's elements then the source's, `width` bytes of result. */
function packsswb(width: number): Compute {
  const n = width / 2
  return () => {
    for (let i = 0; i < n; i++) {
      U8[32 + i] = sat(I16[i], -128, 127)
      U8[32 + n + i] = sat(I16[8 + i], -128, 127)
    }
  }
}
function packuswb(width: number): Compute {
  const n = width / 2
  return () => {
    for (let i = 0; i < n; i++) {
      U8[32 + i] = sat(I16[i], 0, 255)
      U8[32 + n + i] = sat(I16[8 + i], 0, 255)
    }
  }
}
function packssdw(width: number): Compute {
  const n = width / 4
  return () => {
    for (let i = 0; i < n; i++) {
      U16[16 + i] = sat(I32[i], -32768, 32767)
      U16[16 + n + i] = sat(I32[4 + i], -32768, 32767)
    }
  }
}

function intShuffles(width: number): Record<number, Compute> {
  const t: Record<number, Compute> = {
    96: unpack(1, false, width),
    97: unpack(2, false, width),
    98: unpack(4, false, width),
    99: packsswb(width),
    103: packuswb(width),
    104: unpack(1, true, width),
    105: unpack(2, true, width),
    106: unpack(4, true, width),
    107: packssdw(width),
  }
  if (width === 16) {
    t[108] = unpack(8, false, 16) // punpcklqdq, punpckhqdq: XMM only
    t[109] = unpack(8, true, 16)
  }
  return t
}

/** 0F 60-6D: punpck*, packs* (pcmpgt* are in sse-int.ts), for XMM (16) and MMX (8) registers. */
const INT_SHUFFLES: Record<number, Record<number, Compute>> = { 16: intShuffles(16), 8: intShuffles(8) }

/** The unpack or pack of opcode 0F 60-6D for registers of `width` bytes. */
export function intShuffleCompute(opcode: number, width: 8 | 16): Compute | undefined {
  return INT_SHUFFLES[width][opcode]
}

/** pshuflw / pshufw: the low four source words selected by imm8 into the low result quadword. */
export function shuffleLowWords(k: number): Compute {
  const sel = [k & 3, (k >> 2) & 3, (k >> 4) & 3, (k >> 6) & 3]
  return () => {
    for (let i = 0; i < 4; i++) U16[16 + i] = U16[8 + sel[i]]
  }
}

/** 66 0F 60-6D (except the compares): unpacks and packs. */
export function compileIntShuffle(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66) return null
  const f = intShuffleCompute(insn.opcode, 16)
  return f ? binary128(insn, true, f) : null
}

/** 66 0F 70 pshufd, F3 0F 70 pshufhw, F2 0F 70 pshuflw (xmm, xmm/m128, imm8). */
export function compilePshuf(insn: Instruction): Op | null {
  const k = imm8(insn)
  const sel = [k & 3, (k >> 2) & 3, (k >> 4) & 3, (k >> 6) & 3]
  switch (insn.mandatoryPrefix) {
    case 0x66:
      return binary128(insn, true, () => {
        for (let i = 0; i < 4; i++) I32[8 + i] = I32[4 + sel[i]]
      })
    case 0xf3:
      return binary128(insn, true, () => {
        I32[8] = I32[4]
        I32[9] = I32[5]
        for (let i = 0; i < 4; i++) U16[20 + i] = U16[12 + sel[i]]
      })
    case 0xf2: {
      const low = shuffleLowWords(k)
      return binary128(insn, true, () => {
        low()
        I32[10] = I32[6]
        I32[11] = I32[7]
      })
    }
  }
  return null
}

/** 0F C6 shufps / 66 0F C6 shufpd (xmm, xmm/m128, imm8). */
export function compileShufp(insn: Instruction): Op | null {
  const k = imm8(insn)
  if (insn.mandatoryPrefix === 0) {
    const s0 = k & 3
    const s1 = (k >> 2) & 3
    const s2 = 4 + ((k >> 4) & 3)
    const s3 = 4 + ((k >> 6) & 3)
    return binary128(insn, true, () => {
      I32[8] = I32[s0]
      I32[9] = I32[s1]
      I32[10] = I32[s2]
      I32[11] = I32[s3]
    })
  }
  if (insn.mandatoryPrefix === 0x66) {
    const lo = (k & 1) * 2
    const hi = 4 + ((k >> 1) & 1) * 2
    return binary128(insn, true, () => {
      I32[8] = I32[lo]
      I32[9] = I32[lo + 1]
      I32[10] = I32[hi]
      I32[11] = I32[hi + 1]
    })
  }
  return null
}

/** 0F 14/15 unpcklps/unpckhps, 66 0F 14/15 unpcklpd/unpckhpd. */
export function compileUnpckp(insn: Instruction): Op | null {
  const high = insn.opcode === 0x15
  if (insn.mandatoryPrefix === 0) return binary128(insn, true, unpack(4, high, 16))
  if (insn.mandatoryPrefix === 0x66) return binary128(insn, true, unpack(8, high, 16))
  return null
}
