// SSE state instructions: ldmxcsr/stmxcsr (0F AE /2 /3) and fxsave/fxrstor
// (0F AE /0 /1, fxsave64/fxrstor64 with REX.W).
//
// MXCSR_MASK is 0xffff: every defined MXCSR bit including DAZ is writable;
// setting any of bits 16-31 with ldmxcsr or fxrstor is #GP(0).
//
// The fxsave area (512 bytes, 16-byte aligned or #GP(0)):
//   0 FCW  2 FSW  4 abridged FTW  5 reserved  6 FOP
//   8 FIP (fxsave64: 8 bytes; fxsave: 4 + FCS 2 + 2 reserved)
//  16 FDP (fxsave64: 8 bytes; fxsave: 4 + FDS 2 + 2 reserved)
//  24 MXCSR  28 MXCSR_MASK  32 ST0-ST7 (16 bytes each: 10 used, 6 zero)
// 160 XMM0-XMM15  416-511 reserved/available: not written, their contents ignored.
// Both access the whole 512-byte operand, as the host does: fxsave checks
// that all 512 bytes are writable before writing any (so an area whose tail
// is unmapped faults even though bytes 416-511 are left alone), fxrstor
// reads all of them before changing any state. Faults are precise.

import type { Cpu } from '../cpu/cpu.js'
import { x87FromFxsave, x87State, x87ToFxsave } from '../cpu/fpu-state.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { compileEa } from './operands.js'
import { checkAligned16, gp0 } from './sse-common.js'

export const MXCSR_MASK = 0xffff
/** Bytes of the fxsave area that fxsave writes and fxrstor uses (of the 512 accessed). */
const FX_USED = 416
const FX_SIZE = 512

const image = new Uint8Array(512)
const view = new DataView(image.buffer)

// ---------------------------------------------------------------- x87 part
// The x87 fields of the image (the conversion lives in cpu/fpu-state.ts, where
// the kernel's signal frames can use it too).

/** Fill bytes 0-23 and 32-159 (the x87 fields) of the fxsave image. */
function x87ToImage(c: Cpu, wide: boolean): void {
  x87ToFxsave(x87State(c), image, wide)
}

/** Load the x87 fields from an fxrstor image. */
function x87FromImage(c: Cpu, wide: boolean): void {
  x87FromFxsave(x87State(c), image, wide)
}

// ---------------------------------------------------------------- instructions

function fxsave(insn: Instruction): Op {
  const ea = compileEa(insn)
  const wide = insn.rexW
  return (c) => {
    const a = checkAligned16(ea(c))
    c.probeWrite(a, FX_SIZE)
    x87ToImage(c, wide)
    view.setInt32(24, c.mxcsr, true)
    view.setInt32(28, MXCSR_MASK, true)
    const x = c.xmm
    for (let i = 0; i < 64; i++) view.setInt32(160 + 4 * i, x[i], true)
    for (let o = 0; o < FX_USED; o += 8) c.write64(a + o, view.getInt32(o, true), view.getInt32(o + 4, true))
  }
}

function fxrstor(insn: Instruction): Op {
  const ea = compileEa(insn)
  const wide = insn.rexW
  return (c) => {
    const a = checkAligned16(ea(c))
    for (let o = 0; o < FX_SIZE; o += 8) {
      view.setInt32(o, c.read64(a + o), true)
      view.setInt32(o + 4, c.th, true)
    }
    const mxcsr = view.getInt32(24, true)
    if ((mxcsr & ~MXCSR_MASK) !== 0) throw gp0('fxrstor: reserved MXCSR bits set')
    x87FromImage(c, wide)
    c.mxcsr = mxcsr
    const x = c.xmm
    for (let i = 0; i < 64; i++) x[i] = view.getInt32(160 + 4 * i, true)
  }
}

/** 0F AE /0 fxsave, /1 fxrstor, /2 ldmxcsr, /3 stmxcsr (memory forms); null otherwise. */
export function compileSseState(insn: Instruction): Op | null {
  if (insn.mod === 3) return null
  const r = insn.reg & 7
  switch (r) {
    case 0:
      return fxsave(insn)
    case 1:
      return fxrstor(insn)
    case 2: {
      const ea = compileEa(insn)
      return (c) => {
        const v = c.read32(ea(c))
        if ((v & ~MXCSR_MASK) !== 0) throw gp0('ldmxcsr: reserved MXCSR bits set')
        c.mxcsr = v
      }
    }
    case 3: {
      const ea = compileEa(insn)
      return (c) => c.write32(ea(c), c.mxcsr)
    }
  }
  return null
}
