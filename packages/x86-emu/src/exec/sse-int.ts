// SSE2 packed integer operations on XMM registers (66-prefixed 0F opcodes):
// add/sub (wrapping and saturating), multiplies, pmaddwd, psadbw, averages,
// min/max, compares, the bitwise ops, and the shifts by an XMM/m128 count or
// by an immediate (66 0F 71/72/73, including pslldq/psrldq).
//
// Operands go through SCRATCH (sse-common.ts): destination bytes 0-15,
// source 16-31, result 32-47. A memory operand must be 16-byte aligned. None
// of these touch RFLAGS or MXCSR.

import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { binary128, I8, I16, I32, imm8, loadDst, storeRes, U8, U16, U32 } from './sse-common.js'

function sat(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(v, hi))
}

/** High half of the last mulu32. */
let mh = 0
/** Unsigned 32x32 -> 64: low half returned (int32), high half in mh. */
function mulu32(a: number, b: number): number {
  const a0 = a & 0xffff
  const a1 = a >>> 16
  const b0 = b & 0xffff
  const b1 = b >>> 16
  const p00 = a0 * b0
  const p01 = a0 * b1
  const p10 = a1 * b0
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff)
  mh = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) | 0
  return (mid << 16) | (p00 & 0xffff)
}

// ---------------------------------------------------------------- lane-wise operations

export type Compute = () => void

function bytes(f: (a: number, b: number) => number, signed: boolean): Compute {
  return signed
    ? () => {
        for (let i = 0; i < 16; i++) U8[32 + i] = f(I8[i], I8[16 + i])
      }
    : () => {
        for (let i = 0; i < 16; i++) U8[32 + i] = f(U8[i], U8[16 + i])
      }
}
function words(f: (a: number, b: number) => number, signed: boolean): Compute {
  return signed
    ? () => {
        for (let i = 0; i < 8; i++) U16[16 + i] = f(I16[i], I16[8 + i])
      }
    : () => {
        for (let i = 0; i < 8; i++) U16[16 + i] = f(U16[i], U16[8 + i])
      }
}
function dwords(f: (a: number, b: number) => number): Compute {
  return () => {
    for (let i = 0; i < 4; i++) I32[8 + i] = f(I32[i], I32[4 + i])
  }
}
function qwords(sub: boolean): Compute {
  return () => {
    for (let i = 0; i < 4; i += 2) {
      const a = I32[i] >>> 0
      const b = I32[4 + i] >>> 0
      if (sub) {
        const lo = a - b
        I32[8 + i] = lo | 0
        I32[9 + i] = (I32[i + 1] - I32[5 + i] - (lo < 0 ? 1 : 0)) | 0
      } else {
        const lo = a + b
        I32[8 + i] = lo | 0
        I32[9 + i] = (I32[i + 1] + I32[5 + i] + (lo > 0xffffffff ? 1 : 0)) | 0
      }
    }
  }
}

const pmuludq: Compute = () => {
  for (let i = 0; i < 4; i += 2) {
    I32[8 + i] = mulu32(I32[i], I32[4 + i])
    I32[9 + i] = mh
  }
}

const pmaddwd: Compute = () => {
  for (let i = 0; i < 4; i++) I32[8 + i] = (I16[2 * i] * I16[8 + 2 * i] + I16[2 * i + 1] * I16[9 + 2 * i]) | 0
}

const psadbw: Compute = () => {
  for (let q = 0; q < 2; q++) {
    let s = 0
    for (let i = 0; i < 8; i++) s += Math.abs(U8[8 * q + i] - U8[16 + 8 * q + i])
    I32[8 + 2 * q] = s
    I32[9 + 2 * q] = 0
  }
}

/** Binary operations keyed by opcode (all 66 0F xx, xmm, xmm/m128). */
const BINARY: Record<number, Compute> = {
  252: bytes((a, b) => a + b, false), // paddb
  253: words((a, b) => a + b, false), // paddw
  254: dwords((a, b) => (a + b) | 0), // paddd
  212: qwords(false), // paddq
  248: bytes((a, b) => a - b, false), // psubb
  249: words((a, b) => a - b, false), // psubw
  250: dwords((a, b) => (a - b) | 0), // psubd
  251: qwords(true), // psubq
  236: bytes((a, b) => sat(a + b, -128, 127), true), // paddsb
  237: words((a, b) => sat(a + b, -32768, 32767), true), // paddsw
  220: bytes((a, b) => Math.min(a + b, 255), false), // paddusb
  221: words((a, b) => Math.min(a + b, 65535), false), // paddusw
  232: bytes((a, b) => sat(a - b, -128, 127), true), // psubsb
  233: words((a, b) => sat(a - b, -32768, 32767), true), // psubsw
  216: bytes((a, b) => Math.max(a - b, 0), false), // psubusb
  217: words((a, b) => Math.max(a - b, 0), false), // psubusw
  213: words((a, b) => Math.imul(a, b), true), // pmullw
  229: words((a, b) => (a * b) >> 16, true), // pmulhw
  228: words((a, b) => (a * b) >>> 16, false), // pmulhuw
  244: pmuludq,
  245: pmaddwd,
  246: psadbw,
  224: bytes((a, b) => (a + b + 1) >> 1, false), // pavgb
  227: words((a, b) => (a + b + 1) >> 1, false), // pavgw
  218: bytes((a, b) => Math.min(a, b), false), // pminub
  222: bytes((a, b) => Math.max(a, b), false), // pmaxub
  234: words((a, b) => Math.min(a, b), true), // pminsw
  238: words((a, b) => Math.max(a, b), true), // pmaxsw
  116: bytes((a, b) => (a === b ? 0xff : 0), false), // pcmpeqb
  117: words((a, b) => (a === b ? 0xffff : 0), false), // pcmpeqw
  118: dwords((a, b) => (a === b ? -1 : 0)), // pcmpeqd
  100: bytes((a, b) => (a > b ? 0xff : 0), true), // pcmpgtb
  101: words((a, b) => (a > b ? 0xffff : 0), true), // pcmpgtw
  102: dwords((a, b) => (a > b ? -1 : 0)), // pcmpgtd
  219: dwords((a, b) => a & b), // pand
  223: dwords((a, b) => ~a & b), // pandn
  235: dwords((a, b) => a | b), // por
  239: dwords((a, b) => a ^ b), // pxor
}

// ---------------------------------------------------------------- shifts

const SLL = 0
const SRL = 1
const SRA = 2

/** Shift the destination slot's lanes of `bits` width by `n` (any non-negative count) into the result slot. */
function shiftLanes(kind: number, bits: number, n: number): void {
  if (bits === 16) {
    for (let i = 0; i < 8; i++) {
      if (kind === SRA) I16[16 + i] = I16[i] >> Math.min(n, 15)
      else if (n > 15) U16[16 + i] = 0
      else U16[16 + i] = kind === SLL ? U16[i] << n : U16[i] >>> n
    }
  } else if (bits === 32) {
    for (let i = 0; i < 4; i++) {
      if (kind === SRA) I32[8 + i] = I32[i] >> Math.min(n, 31)
      else if (n > 31) I32[8 + i] = 0
      else I32[8 + i] = kind === SLL ? I32[i] << n : I32[i] >>> n
    }
  } else {
    for (let i = 0; i < 4; i += 2) {
      const lo = I32[i]
      const hi = I32[i + 1]
      let rlo = 0
      let rhi = 0
      if (n === 0) {
        rlo = lo
        rhi = hi
      } else if (n < 32) {
        if (kind === SLL) {
          rlo = lo << n
          rhi = (hi << n) | (lo >>> (32 - n))
        } else {
          rlo = (lo >>> n) | (hi << (32 - n))
          rhi = hi >>> n
        }
      } else if (n < 64) {
        if (kind === SLL) rhi = lo << (n - 32)
        else rlo = hi >>> (n - 32)
      }
      I32[8 + i] = rlo
      I32[9 + i] = rhi
    }
  }
}

/** Byte shift of the whole register (pslldq / psrldq). */
function shiftBytes(left: boolean, n: number): void {
  for (let i = 0; i < 16; i++) {
    const j = left ? i - n : i + n
    U8[32 + i] = j >= 0 && j < 16 ? U8[j] : 0
  }
}

/** Shift by the unsigned 64-bit count in the source slot's low quadword. */
function byCount(kind: number, bits: number): Compute {
  return () => {
    const n = U32[5] !== 0 ? 64 : Math.min(U32[4], 64)
    shiftLanes(kind, bits, n)
  }
}

const SHIFT_BY_XMM: Record<number, Compute> = {
  209: byCount(SRL, 16),
  210: byCount(SRL, 32),
  211: byCount(SRL, 64),
  225: byCount(SRA, 16),
  226: byCount(SRA, 32),
  241: byCount(SLL, 16),
  242: byCount(SLL, 32),
  243: byCount(SLL, 64),
}

/**
 * The lane computation of a binary integer operation or shift by a register
 * count (by opcode). MMX forms use the same computations: their operands sit
 * in the low quadwords of the slots, and every one of these produces its low
 * result quadword from the low operand quadwords only.
 */
export function packedIntCompute(opcode: number): Compute | undefined {
  return BINARY[opcode] ?? SHIFT_BY_XMM[opcode]
}

/** 66-prefixed binary integer operations and shifts by an XMM count. */
export function compilePackedInt(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66) return null
  const f = packedIntCompute(insn.opcode)
  return f ? binary128(insn, true, f) : null
}

/** 0F 71/72/73 /digit ib: the shift of the destination slot by an immediate, or null (`wide`: the 128-bit byte shifts exist). */
export function shiftImmCompute(insn: Instruction, wide: boolean): Compute | null {
  const r = insn.reg & 7
  const n = imm8(insn)
  const bits = insn.opcode === 0x71 ? 16 : insn.opcode === 0x72 ? 32 : 64
  if (r === 2) return () => shiftLanes(SRL, bits, n)
  if (r === 4 && bits !== 64) return () => shiftLanes(SRA, bits, n)
  if (r === 6) return () => shiftLanes(SLL, bits, n)
  if (wide && bits === 64 && r === 3) return () => shiftBytes(false, n)
  if (wide && bits === 64 && r === 7) return () => shiftBytes(true, n)
  return null
}

/** 66 0F 71/72/73 /r ib: shifts of xmm(rm) by an immediate. */
export function compileShiftImm(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66 || insn.mod !== 3) return null
  const f = shiftImmCompute(insn, true)
  if (f === null) return null
  const d = insn.rm * 4
  return (c) => {
    loadDst(c, d)
    f()
    storeRes(c, d)
  }
}
