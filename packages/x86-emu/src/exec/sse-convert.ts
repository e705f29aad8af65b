// SSE/SSE2 conversions: cvtsi2ss/sd (32- and 64-bit sources), cvt(t)ss2si,
// cvt(t)sd2si (32/64-bit results), cvtss2sd, cvtsd2ss, cvtps2pd, cvtpd2ps,
// cvtdq2ps, cvt(t)ps2dq, cvtdq2pd, cvt(t)pd2dq.
//
// The non-truncating forms round per MXCSR.RC; integer -> float rounding of
// values that are not representable, and float -> narrower float, honour RC
// too (see sse-ieee.ts). Out-of-range or NaN float -> integer conversions
// give the integer indefinite (0x80000000, 0x8000000000000000) and raise IE.
// The MMX forms (cvtpi2ps, cvtpi2pd, cvt(t)ps2pi, cvt(t)pd2pi) read or write
// mm registers (mmx-state.ts): an mm operand puts the x87 unit in MMX state,
// a memory source (cvtpi2ps/pd xmm, m64) does not.

import type { Cpu } from '../cpu/cpu.js'
import { x87State } from '../cpu/fpu-state.js'
import type { Instruction } from '../decoder/instruction.js'
import { commitSimd } from './fpu-exceptions.js'
import { loadMmRm, mmFromScratch, mmxBegin, mmxTransition } from './mmx-state.js'
import type { Op } from './op.js'
import { readRm, writeGpr } from './operands.js'
import {
  F32,
  F64,
  I32,
  type Load,
  load32,
  load64,
  load128,
  loadDst,
  RES,
  SRC,
  storeRes,
} from './sse-common.js'
import {
  cvtD2F,
  cvtF2D,
  cvtHi,
  floatToInt,
  fpBegin,
  fpFlags,
  int32ToF,
  int64ToFloat,
  isDenormalD,
  isDenormalF,
  isNaND,
  isNaNF,
} from './sse-ieee.js'

/** F3 0F 2A cvtsi2ss, F2 0F 2A cvtsi2sd: xmm low lane(s) = r/m32 or r/m64 (REX.W) converted. */
export function compileCvtsi2s(insn: Instruction): Op | null {
  const p = insn.mandatoryPrefix
  if (p !== 0xf3 && p !== 0xf2) return null // cvtpi2ps/cvtpi2pd take MMX registers
  const wide = insn.rexW
  const rd = readRm(insn, wide ? 8 : 4)
  const d = insn.reg * 4
  if (p === 0xf3)
    return (c) => {
      const lo = rd(c)
      fpBegin(c.mxcsr)
      F32[12] = wide ? int64ToFloat(lo, c.th, true) : int32ToF(lo)
      commitSimd(c, fpFlags())
      c.xmm[d] = I32[12]
    }
  return (c) => {
    const lo = rd(c)
    fpBegin(c.mxcsr)
    F64[6] = wide ? int64ToFloat(lo, c.th, false) : lo
    commitSimd(c, fpFlags())
    c.xmm[d] = I32[12]
    c.xmm[d + 1] = I32[13]
  }
}

/** F3/F2 0F 2C cvttss2si/cvttsd2si, 0F 2D cvtss2si/cvtsd2si: r32/r64 (REX.W) = xmm/m32/m64. */
export function compileCvts2si(insn: Instruction): Op | null {
  const p = insn.mandatoryPrefix
  if (p !== 0xf3 && p !== 0xf2) return null // the MMX forms
  const single = p === 0xf3
  const truncate = insn.opcode === 0x2c
  const wide = insn.rexW
  const load = single ? load32(insn) : load64(insn)
  const wr = writeGpr(insn, wide ? 8 : 4)
  return (c) => {
    load(c)
    fpBegin(c.mxcsr)
    const lo = single ? singleToInt(4, wide, truncate) : doubleToInt(4, wide, truncate)
    commitSimd(c, fpFlags())
    wr(c, lo, cvtHi)
  }
}

function singleToInt(i: number, wide: boolean, truncate: boolean): number {
  const b = I32[i]
  return floatToInt(isNaNF(b) ? Number.NaN : F32[i], wide, truncate, isDenormalF(b))
}
function doubleToInt(i: number, wide: boolean, truncate: boolean): number {
  const lo = I32[i]
  const hi = I32[i + 1]
  return floatToInt(isNaND(lo, hi) ? Number.NaN : F64[i >> 1], wide, truncate, isDenormalD(lo, hi))
}

/** Load the source, copy the destination, compute between fpBegin and the flag update, store. */
function fpConvert(insn: Instruction, load: Load, lanes: () => void): Op {
  const d = insn.reg * 4
  return (c: Cpu) => {
    load(c)
    loadDst(c, d)
    fpBegin(c.mxcsr)
    lanes()
    commitSimd(c, fpFlags())
    storeRes(c, d)
  }
}

/** 0F 5A: cvtps2pd, 66 cvtpd2ps, F3 cvtss2sd, F2 cvtsd2ss. */
export function compileCvtFloat(insn: Instruction): Op {
  switch (insn.mandatoryPrefix) {
    case 0:
      return fpConvert(insn, load64(insn), () => {
        cvtF2D(4, 8)
        cvtF2D(5, 10)
      })
    case 0x66:
      return fpConvert(insn, load128(insn, true), () => {
        cvtD2F(4, 8)
        cvtD2F(6, 9)
        I32[10] = 0
        I32[11] = 0
      })
    case 0xf3:
      return fpConvert(insn, load32(insn), () => {
        cvtF2D(4, 8)
        I32[10] = I32[2]
        I32[11] = I32[3]
      })
    default:
      return fpConvert(insn, load64(insn), () => {
        cvtD2F(4, 8)
        I32[9] = I32[1]
        I32[10] = I32[2]
        I32[11] = I32[3]
      })
  }
}

/** 0F 5B: cvtdq2ps, 66 cvtps2dq (RC), F3 cvttps2dq. */
export function compileCvtDq(insn: Instruction): Op | null {
  const load = load128(insn, true)
  switch (insn.mandatoryPrefix) {
    case 0:
      return fpConvert(insn, load, () => {
        for (let i = 0; i < 4; i++) F32[8 + i] = int32ToF(I32[4 + i])
      })
    case 0x66:
    case 0xf3: {
      const truncate = insn.mandatoryPrefix === 0xf3
      return fpConvert(insn, load, () => {
        for (let i = 0; i < 4; i++) I32[8 + i] = singleToInt(4 + i, false, truncate)
      })
    }
  }
  return null
}

/** 0F E6: 66 cvttpd2dq, F3 cvtdq2pd, F2 cvtpd2dq (RC). */
export function compileCvtPdDq(insn: Instruction): Op | null {
  switch (insn.mandatoryPrefix) {
    case 0xf3:
      return fpConvert(insn, load64(insn), () => {
        const a = I32[4]
        const b = I32[5]
        F64[4] = a
        F64[5] = b
      })
    case 0x66:
    case 0xf2: {
      const truncate = insn.mandatoryPrefix === 0x66
      return fpConvert(insn, load128(insn, true), () => {
        I32[8] = doubleToInt(4, false, truncate)
        I32[9] = doubleToInt(6, false, truncate)
        I32[10] = 0
        I32[11] = 0
      })
    }
  }
  return null
}

/** 0F 2A cvtpi2ps / 66 0F 2A cvtpi2pd xmm, mm/m64: two int32 to the low two lanes (cvtpi2ps keeps the upper two). */
export function compileCvtpi2p(insn: Instruction): Op {
  const fromMm = insn.mod === 3
  const load = loadMmRm(insn, SRC)
  const double = insn.mandatoryPrefix === 0x66
  const d = insn.reg * 4
  return (c) => {
    const s = fromMm ? mmxBegin(c) : x87State(c)
    load(c, s)
    loadDst(c, d)
    fpBegin(c.mxcsr)
    if (double) {
      const a = I32[4]
      const b = I32[5]
      F64[4] = a
      F64[5] = b
    } else {
      F32[8] = int32ToF(I32[4])
      F32[9] = int32ToF(I32[5])
      I32[10] = I32[2]
      I32[11] = I32[3]
    }
    commitSimd(c, fpFlags())
    if (fromMm) mmxTransition(s)
    storeRes(c, d)
  }
}

/** 0F 2D cvtps2pi / 0F 2C cvttps2pi mm, xmm/m64; 66 0F 2D cvtpd2pi / 66 0F 2C cvttpd2pi mm, xmm/m128. */
export function compileCvtp2pi(insn: Instruction): Op {
  const double = insn.mandatoryPrefix === 0x66
  const truncate = insn.opcode === 0x2c
  const load = double ? load128(insn, true) : load64(insn)
  const d = insn.reg & 7
  return (c) => {
    const s = mmxBegin(c)
    load(c)
    fpBegin(c.mxcsr)
    if (double) {
      I32[8] = doubleToInt(4, false, truncate)
      I32[9] = doubleToInt(6, false, truncate)
    } else {
      I32[8] = singleToInt(4, false, truncate)
      I32[9] = singleToInt(5, false, truncate)
    }
    commitSimd(c, fpFlags())
    mmxTransition(s)
    mmFromScratch(s, d, RES)
  }
}
