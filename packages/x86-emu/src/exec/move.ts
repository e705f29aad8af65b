// Data movement: mov in its forms, movzx/movsx/movsxd, lea, xchg, the
// accumulator sign extensions, bswap, lahf/sahf and the flag bit setters.

import { arithFlags, materializeFlags, setFlags } from '../cpu/flags.js'
import { AF, CF, DF, PF, SF, ZF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import {
  compileEa,
  compileLea64,
  immValue,
  isHigh8,
  memReadAt,
  memWriteAt,
  readGpr,
  readReg,
  readRm,
  writeGpr,
  writeReg,
  writeRm,
} from './operands.js'

const _TWO_32 = 0x1_0000_0000

/** The register an opcode+register form (B0+r, B8+r, 90+r, 0F C8+r, 50+r) names. */
export function opcodeReg(insn: Instruction): number {
  return (insn.opcode & 7) | (insn.rexB ? 8 : 0)
}

/** 88/89 mov r/m, reg; 8A/8B mov reg, r/m. */
export function compileMovRmReg(insn: Instruction): Op {
  const size = insn.opcode & 1 ? insn.operandSize : 1
  const toRm = insn.opcode <= 0x89
  if (size === 8 && insn.mod === 3) {
    const d = 2 * (toRm ? insn.rm : insn.reg)
    const s = 2 * (toRm ? insn.reg : insn.rm)
    return (c) => {
      const r = c.r
      r[d] = r[s]
      r[d + 1] = r[s + 1]
    }
  }
  if (size === 4 && insn.mod === 3) {
    const d = 2 * (toRm ? insn.rm : insn.reg)
    const s = 2 * (toRm ? insn.reg : insn.rm)
    return (c) => {
      const r = c.r
      r[d] = r[s]
      r[d + 1] = 0
    }
  }
  if (toRm) {
    const rd = readGpr(insn, size)
    const wr = writeRm(insn, size)
    return (c) => {
      const v = rd(c)
      wr(c, v, c.th)
    }
  }
  if (size === 8) {
    const ea = compileEa(insn)
    const d = 2 * insn.reg
    return (c) => {
      const lo = c.read64(ea(c))
      c.r[d] = lo
      c.r[d + 1] = c.th
    }
  }
  const rd = readRm(insn, size)
  const wr = writeGpr(insn, size)
  return (c) => wr(c, rd(c), 0)
}

/** C6/C7 /0 mov r/m, imm; B0+r / B8+r mov reg, imm. */
export function compileMovImm(insn: Instruction): Op {
  const op = insn.opcode
  const size = op === 0xc6 || (op >= 0xb0 && op <= 0xb7) ? 1 : insn.operandSize
  const { lo, hi } = immValue(insn, size)
  if (op >= 0xb0 && op <= 0xbf) {
    const n = opcodeReg(insn)
    const wr = writeReg(n, size, isHigh8(insn, n, size))
    return (c) => wr(c, lo, hi)
  }
  const wr = writeRm(insn, size)
  return (c) => wr(c, lo, hi)
}

/** A0-A3: mov between the accumulator and an absolute 64-bit address. */
export function compileMovMoffs(insn: Instruction): Op {
  const size = insn.opcode & 1 ? insn.operandSize : 1
  const ea = compileEa(insn)
  if (insn.opcode <= 0xa1) {
    const rd = memReadAt(size, false)
    const wr = writeReg(0, size)
    return (c) => {
      const v = rd(c, ea(c))
      wr(c, v, c.th)
    }
  }
  const rd = readReg(0, size)
  const wr = memWriteAt(size)
  return (c) => {
    const v = rd(c)
    wr(c, ea(c), v, c.th)
  }
}

/** 0F B6/B7 movzx, 0F BE/BF movsx, 63 movsxd. */
export function compileMovExtend(insn: Instruction): Op {
  const op = insn.opcode
  const srcSize = insn.map === 0 ? 4 : op === 0xb6 || op === 0xbe ? 1 : 2
  const signed = insn.map === 0 || op === 0xbe || op === 0xbf
  const dstSize = insn.operandSize
  const rd = readRm(insn, srcSize)
  const shift = 32 - 8 * srcSize
  const wr = writeGpr(insn, dstSize)
  if (!signed) return (c) => wr(c, rd(c), 0)
  if (srcSize === 4)
    return (c) => {
      const v = rd(c)
      wr(c, v, v >> 31)
    }
  return (c) => {
    const v = (rd(c) << shift) >> shift
    wr(c, v, v >> 31)
  }
}

/** 8D lea: the address itself (no segment base), truncated to the operand size. */
export function compileLea(insn: Instruction): Op {
  const d = 2 * insn.reg
  const full = compileLea64(insn)
  switch (insn.operandSize) {
    case 8:
      return (c) => {
        c.r[d] = full(c)
        c.r[d + 1] = c.th
      }
    case 4:
      return (c) => {
        c.r[d] = full(c)
        c.r[d + 1] = 0
      }
    default: {
      const wr = writeGpr(insn, 2)
      return (c) => wr(c, full(c) & 0xffff, 0)
    }
  }
}

/** 86/87 xchg r/m, reg (memory forms are implicitly locked); 90+r xchg rAX, reg. */
export function compileXchg(insn: Instruction): Op {
  const op = insn.opcode
  if (op >= 0x90) {
    const n = opcodeReg(insn)
    const size = insn.operandSize
    const a = readReg(0, size)
    const b = readReg(n, size)
    const wa = writeReg(0, size)
    const wb = writeReg(n, size)
    return (c) => {
      const alo = a(c)
      const ahi = c.th
      const blo = b(c)
      wa(c, blo, c.th)
      wb(c, alo, ahi)
    }
  }
  const size = op === 0x86 ? 1 : insn.operandSize
  const rg = readGpr(insn, size)
  const wg = writeGpr(insn, size)
  if (insn.mod === 3) {
    const high = isHigh8(insn, insn.rm, size)
    const rr = readReg(insn.rm, size, high)
    const wr = writeReg(insn.rm, size, high)
    return (c) => {
      const glo = rg(c)
      const ghi = c.th
      const mlo = rr(c)
      wg(c, mlo, c.th)
      wr(c, glo, ghi)
    }
  }
  const ea = compileEa(insn)
  const rd = memReadAt(size, true)
  const wr = memWriteAt(size)
  return (c) => {
    const a = ea(c)
    const mlo = rd(c, a)
    const mhi = c.th
    const glo = rg(c)
    wr(c, a, glo, c.th)
    wg(c, mlo, mhi)
  }
}

/** 98: cbw / cwde / cdqe. */
export function compileCbw(insn: Instruction): Op {
  switch (insn.operandSize) {
    case 2:
      return (c) => {
        c.r[0] = (c.r[0] & ~0xffff) | (((c.r[0] << 24) >> 24) & 0xffff)
      }
    case 4:
      return (c) => {
        c.r[0] = (c.r[0] << 16) >> 16
        c.r[1] = 0
      }
    default:
      return (c) => {
        c.r[1] = c.r[0] >> 31
      }
  }
}

/** 99: cwd / cdq / cqo. */
export function compileCwd(insn: Instruction): Op {
  switch (insn.operandSize) {
    case 2:
      return (c) => {
        c.r[4] = (c.r[4] & ~0xffff) | (((c.r[0] << 16) >> 31) & 0xffff)
      }
    case 4:
      return (c) => {
        c.r[4] = c.r[0] >> 31
        c.r[5] = 0
      }
    default:
      return (c) => {
        const s = c.r[1] >> 31
        c.r[4] = s
        c.r[5] = s
      }
  }
}

function bswap32(v: number): number {
  return ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)
}

/** 0F C8+r bswap (the 16-bit form is undefined; we zero the low word as real CPUs do). */
export function compileBswap(insn: Instruction): Op {
  const i = 2 * opcodeReg(insn)
  if (insn.operandSize === 8) {
    return (c) => {
      const lo = c.r[i]
      c.r[i] = bswap32(c.r[i + 1])
      c.r[i + 1] = bswap32(lo)
    }
  }
  if (insn.operandSize === 2)
    return (c) => {
      c.r[i] &= ~0xffff
    }
  return (c) => {
    c.r[i] = bswap32(c.r[i])
    c.r[i + 1] = 0
  }
}

/** 9F lahf, 9E sahf. */
export function compileLahfSahf(insn: Instruction): Op {
  if (insn.opcode === 0x9f) {
    return (c) => {
      const f = arithFlags(c) | 2
      c.r[0] = (c.r[0] & ~0xff00) | ((f & 0xff) << 8)
    }
  }
  return (c) => setFlags(c, SF | ZF | AF | PF | CF, (c.r[0] >> 8) & 0xff)
}

/** F5 cmc, F8 clc, F9 stc, FC cld, FD std. */
export function compileFlagBit(insn: Instruction): Op {
  switch (insn.opcode) {
    case 0xf5:
      return (c) => {
        materializeFlags(c)
        c.eflags ^= CF
      }
    case 0xf8:
      return (c) => setFlags(c, CF, 0)
    case 0xf9:
      return (c) => setFlags(c, CF, CF)
    case 0xfc:
      return (c) => {
        c.eflags &= ~DF
      }
    default:
      return (c) => {
        c.eflags |= DF
      }
  }
}

export const nop: Op = () => {}
