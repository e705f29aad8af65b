// Operand access compiled per instruction: effective-address closures and
// sized register readers/writers, so the hot closures do no decoding.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import type { Instruction, Operand } from '../decoder/instruction.js'

export type Ea = (c: Cpu) => number
/** Reads an operand; for 8-byte operands returns the low half and leaves the high half in Cpu.th. */
export type Reader = (c: Cpu) => number
/** Writes an operand; `hi` is used only by 8-byte operands. */
export type Writer = (c: Cpu, v: number, hi: number) => void

const TWO_32 = 0x1_0000_0000
type MemOperand = Extract<Operand, { kind: 'mem' }>

export function memOperand(insn: Instruction): MemOperand {
  for (const o of insn.operands) if (o.kind === 'mem') return o
  throw new Error(`instruction at ${insn.address} has no memory operand`)
}

/**
 * Closure computing the linear address of the instruction's memory operand.
 *
 * The sum is formed exactly modulo 2^64 from the register halves, then
 * returned as a linear number: exact for every canonical result, and still
 * non-canonical (so it faults) for every other.
 */
export function compileEa(insn: Instruction): Ea {
  const m = memOperand(insn)
  const seg = m.segment
  const ea = offsetEa(insn)
  if (seg === 'fs') return (c) => wrap64(ea(c) + c.fsBase)
  if (seg === 'gs') return (c) => wrap64(ea(c) + c.gsBase)
  // References through RSP or RBP use SS: a non-canonical one is #SS(0), not #GP(0).
  if ((m.base === 4 || m.base === 5) && !m.ripRelative && insn.addressSize === 8)
    return (c) => checkStackAddress(ea(c))
  return ea
}

const CANONICAL = 0x8000_0000_0000

/** Stack references to non-canonical addresses raise #SS(0). */
export function checkStackAddress(a: number): number {
  if (a >= CANONICAL || a < -CANONICAL) throw new CpuFault(Vector.SS, 0, 0, 'non-canonical stack address')
  return a
}

const TWO_63 = 2 ** 63
const TWO_64 = 2 ** 64
/** Bring a sum back into the signed 64-bit range (exact for canonical results). */
export function wrap64(v: number): number {
  if (v >= TWO_63) return v - TWO_64
  if (v < -TWO_63) return v + TWO_64
  return v
}

/** The effective address without a segment base (what lea computes). */
function offsetEa(insn: Instruction): Ea {
  const m = memOperand(insn)
  const disp = m.displacement
  if (m.ripRelative) {
    const target = insn.address + insn.length + disp
    return () => target
  }
  const b2 = m.base * 2
  const x2 = m.index * 2
  const s = m.scale
  if (insn.addressSize === 4) {
    // 67h: the sum wraps to 32 bits, zero-extended.
    if (m.base >= 0 && m.index >= 0) return (c) => (c.r[b2] + c.r[x2] * s + disp) >>> 0
    if (m.base >= 0) return (c) => (c.r[b2] + disp) >>> 0
    if (m.index >= 0) return (c) => (c.r[x2] * s + disp) >>> 0
    return () => disp >>> 0
  }
  if (m.base >= 0 && m.index < 0) {
    return (c) => {
      const r = c.r
      const lo = (r[b2] >>> 0) + disp
      const hi = (r[b2 + 1] + (lo < 0 ? -1 : lo >= TWO_32 ? 1 : 0)) | 0
      return hi * TWO_32 + (lo >>> 0)
    }
  }
  if (m.base >= 0) {
    return (c) => {
      const r = c.r
      const lo = (r[b2] >>> 0) + (r[x2] >>> 0) * s + disp
      const hi = (r[b2 + 1] + r[x2 + 1] * s + Math.floor(lo / TWO_32)) | 0
      return hi * TWO_32 + (lo >>> 0)
    }
  }
  if (m.index >= 0) {
    return (c) => {
      const r = c.r
      const lo = (r[x2] >>> 0) * s + disp
      const hi = (r[x2 + 1] * s + Math.floor(lo / TWO_32)) | 0
      return hi * TWO_32 + (lo >>> 0)
    }
  }
  return () => disp
}

/** lea r64: the exact 64-bit sum as halves (low returned, high in Cpu.th), also for non-canonical values. */
export function compileLea64(insn: Instruction): (c: Cpu) => number {
  const m = memOperand(insn)
  const disp = m.displacement
  if (m.ripRelative) {
    const t = insn.address + insn.length + disp
    const lo = t | 0
    const hi = Math.floor(t / TWO_32) | 0
    return (c) => {
      c.th = hi
      return lo
    }
  }
  const b2 = m.base * 2
  const x2 = m.index * 2
  const s = m.scale
  if (insn.addressSize === 4) {
    const ea = offsetEa(insn)
    return (c) => {
      c.th = 0
      return ea(c) | 0
    }
  }
  const dispHi = disp < 0 ? -1 : 0
  return (c) => {
    const r = c.r
    let lo = disp >>> 0
    let hi = dispHi
    if (b2 >= 0) {
      lo += r[b2] >>> 0
      hi += r[b2 + 1]
    }
    if (x2 >= 0) {
      lo += (r[x2] >>> 0) * s
      hi += r[x2 + 1] * s
    }
    c.th = (hi + Math.floor(lo / TWO_32)) | 0
    return lo | 0
  }
}

// ---------------------------------------------------------------- registers

export function readReg(n: number, size: number, high8 = false): Reader {
  const i = 2 * n
  switch (size) {
    case 1:
      return high8 ? (c) => (c.r[2 * (n - 4)] >> 8) & 0xff : (c) => c.r[i] & 0xff
    case 2:
      return (c) => c.r[i] & 0xffff
    case 4:
      return (c) => c.r[i]
    default:
      return (c) => {
        c.th = c.r[i + 1]
        return c.r[i]
      }
  }
}

export function writeReg(n: number, size: number, high8 = false): Writer {
  const i = 2 * n
  switch (size) {
    case 1:
      if (high8) {
        const j = 2 * (n - 4)
        return (c, v) => {
          c.r[j] = (c.r[j] & ~0xff00) | ((v & 0xff) << 8)
        }
      }
      return (c, v) => {
        c.r[i] = (c.r[i] & ~0xff) | (v & 0xff)
      }
    case 2:
      return (c, v) => {
        c.r[i] = (c.r[i] & ~0xffff) | (v & 0xffff)
      }
    case 4:
      // 32-bit writes zero-extend into the full register.
      return (c, v) => {
        c.r[i] = v
        c.r[i + 1] = 0
      }
    default:
      return (c, v, hi) => {
        c.r[i] = v
        c.r[i + 1] = hi
      }
  }
}

// ---------------------------------------------------------------- memory

export function readMem(ea: Ea, size: number): Reader {
  switch (size) {
    case 1:
      return (c) => c.read8(ea(c))
    case 2:
      return (c) => c.read16(ea(c))
    case 4:
      return (c) => c.read32(ea(c))
    default:
      return (c) => c.read64(ea(c))
  }
}

export function writeMem(ea: Ea, size: number): Writer {
  switch (size) {
    case 1:
      return (c, v) => c.write8(ea(c), v)
    case 2:
      return (c, v) => c.write16(ea(c), v)
    case 4:
      return (c, v) => c.write32(ea(c), v)
    default:
      return (c, v, hi) => c.write64(ea(c), v, hi)
  }
}

/** Sized memory access by address (for RMW forms that compute the address once). */
export function memReadAt(size: number, forWrite: boolean): (c: Cpu, addr: number) => number {
  switch (size) {
    case 1:
      return forWrite ? (c, a) => c.read8w(a) : (c, a) => c.read8(a)
    case 2:
      return forWrite ? (c, a) => c.read16w(a) : (c, a) => c.read16(a)
    case 4:
      return forWrite ? (c, a) => c.read32w(a) : (c, a) => c.read32(a)
    default:
      return forWrite ? (c, a) => c.read64w(a) : (c, a) => c.read64(a)
  }
}

export function memWriteAt(size: number): (c: Cpu, addr: number, v: number, hi: number) => void {
  switch (size) {
    case 1:
      return (c, a, v) => c.write8(a, v)
    case 2:
      return (c, a, v) => c.write16(a, v)
    case 4:
      return (c, a, v) => c.write32(a, v)
    default:
      return (c, a, v, hi) => c.write64(a, v, hi)
  }
}

// ---------------------------------------------------------------- ModRM r/m and reg operands

/** The r/m operand (register when mod == 3, else memory) as a reader. */
export function readRm(insn: Instruction, size: number): Reader {
  if (insn.mod === 3) return readReg(insn.rm, size, isHigh8(insn, insn.rm, size))
  return readMem(compileEa(insn), size)
}

export function writeRm(insn: Instruction, size: number): Writer {
  if (insn.mod === 3) return writeReg(insn.rm, size, isHigh8(insn, insn.rm, size))
  return writeMem(compileEa(insn), size)
}

/** The ModRM.reg operand as a general register. */
export function readGpr(insn: Instruction, size: number): Reader {
  return readReg(insn.reg, size, isHigh8(insn, insn.reg, size))
}
export function writeGpr(insn: Instruction, size: number): Writer {
  return writeReg(insn.reg, size, isHigh8(insn, insn.reg, size))
}

/** Byte registers 4..7 mean AH, CH, DH, BH unless any REX prefix is present. */
export function isHigh8(insn: Instruction, n: number, size: number): boolean {
  return size === 1 && insn.rex === 0 && n >= 4 && n < 8
}

/** The immediate, truncated to the operand size (8-byte operands use the sign-extended imm32). */
export function immValue(insn: Instruction, size: number): { lo: number; hi: number } {
  const v = insn.immediate
  switch (size) {
    case 1:
      return { lo: v & 0xff, hi: 0 }
    case 2:
      return { lo: v & 0xffff, hi: 0 }
    case 4:
      return { lo: v | 0, hi: 0 }
    default:
      if (insn.immediateSize === 8) {
        const b = BigInt.asUintN(64, insn.immediateBig)
        return { lo: Number(b & 0xffff_ffffn) | 0, hi: Number(b >> 32n) | 0 }
      }
      return { lo: v | 0, hi: v < 0 ? -1 : 0 }
  }
}
