// Shared pieces of the SSE/SSE2 executor: the scratch vector the operations
// work in, operand loaders and stores, and the alignment rule.
//
// XMM registers live in Cpu.xmm (Int32Array(64): register n is lanes
// 4n..4n+3, lane 0 least significant). Every operation first copies its
// operands into SCRATCH (destination in bytes 0-15, source in 16-31), computes
// the result into bytes 32-47 through whichever typed view suits it (bytes,
// words, dwords, floats, doubles), then copies it back. Memory operands are
// read completely before any register is written, and stores probe all their
// bytes before writing any, so faults stay precise. Source and destination
// may be the same register.
//
// The typed views share one buffer and assume a little-endian host (every
// platform the emulator runs on); the check below refuses anything else.
//
// SSE is treated as always enabled: Linux sets CR4.OSFXSR (and
// OSXMMEXCPT), so the #UD for CR0.EM=1 or CR4.OSFXSR=0 and #NM for CR0.TS=1
// are not modelled.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import type { Instruction } from '../decoder/instruction.js'
import { compileEa, type Ea } from './operands.js'

export const SCRATCH = new ArrayBuffer(64)
/** Dwords: destination 0-3, source 4-7, result 8-11, spare 12-15. */
export const I32 = new Int32Array(SCRATCH)
export const U32 = new Uint32Array(SCRATCH)
/** Words: destination 0-7, source 8-15, result 16-23. */
export const I16 = new Int16Array(SCRATCH)
export const U16 = new Uint16Array(SCRATCH)
/** Bytes: destination 0-15, source 16-31, result 32-47. */
export const I8 = new Int8Array(SCRATCH)
export const U8 = new Uint8Array(SCRATCH)
/** Singles: destination 0-3, source 4-7, result 8-11. */
export const F32 = new Float32Array(SCRATCH)
/** Doubles: destination 0-1, source 2-3, result 4-5. */
export const F64 = new Float64Array(SCRATCH)

// Offsets of the three slots in dword lanes.
export const DST = 0
export const SRC = 4
export const RES = 8

if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1)
  throw new Error('the SSE executor needs a little-endian host')

/** Copies an operation's operands into SCRATCH (the source slot, sometimes more). */
export type Load = (c: Cpu) => void

export function gp0(detail: string): CpuFault {
  return new CpuFault(Vector.GP, 0, 0, detail)
}

/** Legacy SSE: a 16-byte memory operand must be 16-byte aligned (else #GP(0)). */
export function checkAligned16(a: number): number {
  if ((a & 15) !== 0) throw gp0('misaligned 16-byte SSE operand')
  return a
}

/** An aligned-or-not effective address closure for the instruction's memory operand. */
export function compileEa16(insn: Instruction, aligned: boolean): Ea {
  const ea = compileEa(insn)
  return aligned ? (c) => checkAligned16(ea(c)) : ea
}

/** Read 16 bytes at `a` into dword lanes I32[slot..slot+3] (nothing else changes if it faults). */
export function read128(c: Cpu, a: number, slot: number): void {
  const l0 = c.read64(a)
  const l1 = c.th
  const l2 = c.read64(a + 8)
  I32[slot] = l0
  I32[slot + 1] = l1
  I32[slot + 2] = l2
  I32[slot + 3] = c.th
}

/** Write 16 bytes at `a` after checking that all of them are writable. */
export function write128(c: Cpu, a: number, l0: number, l1: number, l2: number, l3: number): void {
  c.probeWrite(a, 16)
  c.write64(a, l0, l1)
  c.write64(a + 8, l2, l3)
}

/** The full 128-bit r/m operand (xmm register or m128) into the source slot. */
export function load128(insn: Instruction, aligned: boolean): Load {
  if (insn.mod === 3) {
    const s = insn.rm * 4
    return (c) => {
      const x = c.xmm
      I32[4] = x[s]
      I32[5] = x[s + 1]
      I32[6] = x[s + 2]
      I32[7] = x[s + 3]
    }
  }
  const ea = compileEa16(insn, aligned)
  return (c) => read128(c, ea(c), SRC)
}

/** The low 64 bits of the r/m operand (xmm register or m64) into source lanes 4-5. */
export function load64(insn: Instruction): Load {
  if (insn.mod === 3) {
    const s = insn.rm * 4
    return (c) => {
      const x = c.xmm
      I32[4] = x[s]
      I32[5] = x[s + 1]
    }
  }
  const ea = compileEa(insn)
  return (c) => {
    I32[4] = c.read64(ea(c))
    I32[5] = c.th
  }
}

/** The low 32 bits of the r/m operand (xmm register or m32) into source lane 4. */
export function load32(insn: Instruction): Load {
  if (insn.mod === 3) {
    const s = insn.rm * 4
    return (c) => {
      I32[4] = c.xmm[s]
    }
  }
  const ea = compileEa(insn)
  return (c) => {
    I32[4] = c.read32(ea(c))
  }
}

/** Copy the XMM register whose lanes start at `d` (4 * register number) into the destination slot. */
export function loadDst(c: Cpu, d: number): void {
  const x = c.xmm
  I32[0] = x[d]
  I32[1] = x[d + 1]
  I32[2] = x[d + 2]
  I32[3] = x[d + 3]
}

/** Copy the result slot into XMM lanes d..d+3. */
export function storeRes(c: Cpu, d: number): void {
  const x = c.xmm
  x[d] = I32[8]
  x[d + 1] = I32[9]
  x[d + 2] = I32[10]
  x[d + 3] = I32[11]
}

/** A full-width operation: xmm(reg) = f(xmm(reg), r/m) computed in SCRATCH by `compute`. */
export function binary128(insn: Instruction, aligned: boolean, compute: () => void): (c: Cpu) => void {
  const load = load128(insn, aligned)
  const d = insn.reg * 4
  return (c) => {
    load(c)
    loadDst(c, d)
    compute()
    storeRes(c, d)
  }
}

/** The immediate byte (0-255). */
export function imm8(insn: Instruction): number {
  return insn.immediate & 0xff
}
