// SSE/SSE2 floating-point arithmetic and compares: add/sub/mul/div/min/max/
// sqrt in ps, pd, ss, sd forms; rcp/rsqrt; the bitwise and/andn/or/xor
// ps/pd; cmpps/pd/ss/sd; comis/ucomis; movmskps/pd.
//
// IEEE details (NaNs, rounding control, DAZ/FTZ, MXCSR flags) are in
// sse-ieee.ts. Packed forms with a memory operand need 16-byte alignment,
// scalar ones read just their 4 or 8 bytes. Scalar forms keep the
// destination's upper lanes.
//
// rcpps/rcpss/rsqrtps/rsqrtss return the correctly rounded single-precision
// reciprocal (square root reciprocal) of the operand, well inside the
// architectural bound |relative error| <= 1.5 * 2^-12 but not bit-identical to
// any particular processor's table. Their special cases follow the SDM: a
// denormal operand counts as a zero of its sign (giving an infinity), tiny
// results are flushed to zero, rsqrt of a negative number is the default NaN;
// NaNs are quieted; MXCSR is neither read nor written.

import type { Cpu } from '../cpu/cpu.js'
import { FK_EAGER } from '../cpu/flags.js'
import { ARITH_FLAGS, CF, PF, ZF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { commitSimd } from './fpu-exceptions.js'
import type { Op } from './op.js'
import { writeReg } from './operands.js'
import { F32, I32, imm8, load32, load64, load128, loadDst, storeRes } from './sse-common.js'
import {
  ADD,
  cmpLaneD,
  cmpLaneF,
  compareOrdered,
  DIV,
  fpBegin,
  fpFlags,
  INDEFINITE_F,
  isDenormalF,
  isNaNF,
  laneD,
  laneF,
  MAX,
  MIN,
  MUL,
  SQRT,
  SUB,
} from './sse-ieee.js'

/** Opcode (0F 51, 58-5F) to operation. */
const ARITH_OPS: Record<number, number> = {
  81: SQRT,
  88: ADD,
  89: MUL,
  92: SUB,
  93: MIN,
  94: DIV,
  95: MAX,
}

/** Runs `lanes` between fpBegin and the MXCSR flag update, with the usual operand copies. */
function fpOp(insn: Instruction, load: (c: Cpu) => void, lanes: () => void): Op {
  const d = insn.reg * 4
  return (c) => {
    load(c)
    loadDst(c, d)
    fpBegin(c.mxcsr)
    lanes()
    commitSimd(c, fpFlags())
    storeRes(c, d)
  }
}

/** Upper lanes of a scalar single result come from the destination. */
function keepUpperSingle(): void {
  I32[9] = I32[1]
  I32[10] = I32[2]
  I32[11] = I32[3]
}
function keepUpperDouble(): void {
  I32[10] = I32[2]
  I32[11] = I32[3]
}

/** 0F 51, 58, 59, 5C-5F: ps / pd / ss / sd by mandatory prefix. */
export function compileFpArith(insn: Instruction): Op | null {
  const op = ARITH_OPS[insn.opcode]
  if (op === undefined) return null
  switch (insn.mandatoryPrefix) {
    case 0:
      return fpOp(insn, load128(insn, true), () => {
        laneF(op, 0, 4, 8)
        laneF(op, 1, 5, 9)
        laneF(op, 2, 6, 10)
        laneF(op, 3, 7, 11)
      })
    case 0x66:
      return fpOp(insn, load128(insn, true), () => {
        laneD(op, 0, 4, 8)
        laneD(op, 2, 6, 10)
      })
    case 0xf3:
      return fpOp(insn, load32(insn), () => {
        laneF(op, 0, 4, 8)
        keepUpperSingle()
      })
    default:
      return fpOp(insn, load64(insn), () => {
        laneD(op, 0, 4, 8)
        keepUpperDouble()
      })
  }
}

/**
 * add/sub/mul/div sd and pd given the source's bits: what compileFpArith's op
 * does after loading its operand. The block compiler's inline form calls it
 * where its fast path (finite normal operands and result, PE moot) does not
 * apply, so the two agree bit for bit.
 */
export function fpArithD(
  c: Cpu,
  op: number,
  d: number,
  packed: boolean,
  l0: number,
  h0: number,
  l1: number,
  h1: number,
): void {
  I32[4] = l0
  I32[5] = h0
  I32[6] = l1
  I32[7] = h1
  loadDst(c, d)
  fpBegin(c.mxcsr)
  laneD(op, 0, 4, 8)
  if (packed) laneD(op, 2, 6, 10)
  else keepUpperDouble()
  commitSimd(c, fpFlags())
  storeRes(c, d)
}

// ---------------------------------------------------------------- rcp / rsqrt

const MIN_NORMAL_F = 2 ** -126

function approx(b: number, rsqrt: boolean): number {
  if (isNaNF(b)) return b | 0x400000
  const neg = b < 0
  if ((b & 0x7fffffff) === 0 || isDenormalF(b)) return neg ? 0xff800000 | 0 : 0x7f800000
  if (rsqrt && neg) return INDEFINITE_F
  I32[12] = b
  const x = F32[12]
  const r = Math.fround(rsqrt ? 1 / Math.sqrt(x) : 1 / x)
  if (Math.abs(r) < MIN_NORMAL_F) return neg ? 0x80000000 | 0 : 0
  F32[12] = r
  return I32[12]
}

/** 0F 52 rsqrtps / F3 0F 52 rsqrtss, 0F 53 rcpps / F3 0F 53 rcpss. */
export function compileApprox(insn: Instruction): Op | null {
  const rsqrt = insn.opcode === 0x52
  const d = insn.reg * 4
  if (insn.mandatoryPrefix === 0) {
    const load = load128(insn, true)
    return (c) => {
      load(c)
      const x = c.xmm
      x[d] = approx(I32[4], rsqrt)
      x[d + 1] = approx(I32[5], rsqrt)
      x[d + 2] = approx(I32[6], rsqrt)
      x[d + 3] = approx(I32[7], rsqrt)
    }
  }
  if (insn.mandatoryPrefix === 0xf3) {
    const load = load32(insn)
    return (c) => {
      load(c)
      c.xmm[d] = approx(I32[4], rsqrt)
    }
  }
  return null
}

// ---------------------------------------------------------------- bitwise

/** 0F 54-57 and/andn/or/xor ps (and the 66-prefixed pd forms: the same bits). */
export function compileFpLogic(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0 && insn.mandatoryPrefix !== 0x66) return null
  const o = insn.opcode
  const load = load128(insn, true)
  const d = insn.reg * 4
  return (c) => {
    load(c)
    const x = c.xmm
    for (let i = 0; i < 4; i++) {
      const a = x[d + i]
      const b = I32[4 + i]
      x[d + i] = o === 0x54 ? a & b : o === 0x55 ? ~a & b : o === 0x56 ? a | b : a ^ b
    }
  }
}

// ---------------------------------------------------------------- compares

/** 0F C2 cmpps / 66 cmppd / F3 cmpss / F2 cmpsd, predicate imm8[2:0]. */
export function compileFpCompare(insn: Instruction): Op {
  const p = imm8(insn) & 7
  switch (insn.mandatoryPrefix) {
    case 0:
      return fpOp(insn, load128(insn, true), () => {
        for (let i = 0; i < 4; i++) cmpLaneF(p, i, 4 + i, 8 + i)
      })
    case 0x66:
      return fpOp(insn, load128(insn, true), () => {
        cmpLaneD(p, 0, 4, 8)
        cmpLaneD(p, 2, 6, 10)
      })
    case 0xf3:
      return fpOp(insn, load32(insn), () => {
        cmpLaneF(p, 0, 4, 8)
        keepUpperSingle()
      })
    default:
      return fpOp(insn, load64(insn), () => {
        cmpLaneD(p, 0, 4, 8)
        keepUpperDouble()
      })
  }
}

/** 0F 2E ucomiss / 66 ucomisd, 0F 2F comiss / 66 comisd: ZF PF CF from the compare, OF SF AF cleared. */
export function compileComis(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0 && insn.mandatoryPrefix !== 0x66) return null
  const double = insn.mandatoryPrefix === 0x66
  const signalling = insn.opcode === 0x2f
  const load = double ? load64(insn) : load32(insn)
  const d = insn.reg * 4
  return (c) => {
    load(c)
    const x = c.xmm
    I32[0] = x[d]
    I32[1] = x[d + 1]
    fpBegin(c.mxcsr)
    const r = compareOrdered(double, signalling, 0, 4)
    commitSimd(c, fpFlags())
    const f = r === -2 ? ZF | PF | CF : r === -1 ? CF : r === 0 ? ZF : 0
    c.eflags = (c.eflags & ~ARITH_FLAGS) | f
    c.fop = FK_EAGER
  }
}

// ---------------------------------------------------------------- sign masks

/** 0F 50 movmskps / 66 0F 50 movmskpd r32/r64, xmm: the lanes' sign bits, zero-extended. */
export function compileMovmsk(insn: Instruction): Op | null {
  if (insn.mod !== 3) return null
  const s = insn.rm * 4
  const wr = writeReg(insn.reg, 8)
  if (insn.mandatoryPrefix === 0x66)
    return (c) => {
      const x = c.xmm
      wr(c, (x[s + 1] >>> 31) | ((x[s + 3] >>> 31) << 1), 0)
    }
  if (insn.mandatoryPrefix !== 0) return null
  return (c) => {
    const x = c.xmm
    wr(c, (x[s] >>> 31) | ((x[s + 1] >>> 31) << 1) | ((x[s + 2] >>> 31) << 2) | ((x[s + 3] >>> 31) << 3), 0)
  }
}
