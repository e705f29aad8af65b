// Integer ALU instructions: add/or/adc/sbb/and/sub/xor/cmp in every form,
// test, inc/dec, neg/not.

import type { Cpu } from '../cpu/cpu.js'
import { FK_SUB, lazy, lazy64, S8, S16, S32, S64 } from '../cpu/flags.js'
import type { Instruction } from '../decoder/instruction.js'
import { ALU_AND, ALU_BY_SIZE, ALU_CMP, ALU64, incDec, incDec64 } from './alu.js'
import type { Op } from './op.js'
import {
  compileEa,
  immValue,
  isHigh8,
  memReadAt,
  memWriteAt,
  type Reader,
  readGpr,
  readReg,
  readRm,
  writeReg,
} from './operands.js'

/** Where a binary op's destination is and what its source is. */
interface BinaryForm {
  kind: number // ALU_* (ALU_CMP and test do not write)
  size: number
  /** Destination is ModRM.rm (else ModRM.reg, or the accumulator when acc is set). */
  dstRm: boolean
  acc?: boolean
  src: Reader
  writes: boolean
}

function binary(insn: Instruction, f: BinaryForm): Op {
  const { size, src, writes } = f
  if (size !== 8) {
    const alu = ALU_BY_SIZE[size][f.kind]
    if (f.dstRm && insn.mod !== 3) {
      const ea = compileEa(insn)
      const rd = memReadAt(size, writes)
      const wr = memWriteAt(size)
      if (!writes) return (c) => void alu(c, rd(c, ea(c)), src(c))
      return (c) => {
        const a = ea(c)
        const b = src(c)
        wr(c, a, alu(c, rd(c, a), b), 0)
      }
    }
    const n = f.acc ? 0 : f.dstRm ? insn.rm : insn.reg
    const high = isHigh8(insn, n, size)
    const rd = readReg(n, size, high)
    if (!writes) return (c) => void alu(c, rd(c), src(c))
    const wr = writeReg(n, size, high)
    if (size === 4) {
      const i = 2 * n
      return (c) => {
        const r = c.r
        r[i] = alu(c, r[i], src(c))
        r[i + 1] = 0
      }
    }
    return (c) => wr(c, alu(c, rd(c), src(c)), 0)
  }
  const alu = ALU64[f.kind]
  if (f.dstRm && insn.mod !== 3) {
    const ea = compileEa(insn)
    const rd = memReadAt(8, writes)
    const wr = memWriteAt(8)
    return (c) => {
      const a = ea(c)
      const blo = src(c)
      const bhi = c.th
      const alo = rd(c, a)
      const lo = alu(c, alo, c.th, blo, bhi)
      if (writes) wr(c, a, lo, c.th)
    }
  }
  const i = 2 * (f.acc ? 0 : f.dstRm ? insn.rm : insn.reg)
  if (!writes) {
    return (c) => {
      const blo = src(c)
      const bhi = c.th
      alu(c, c.r[i], c.r[i + 1], blo, bhi)
    }
  }
  return (c) => {
    const blo = src(c)
    const bhi = c.th
    const r = c.r
    r[i] = alu(c, r[i], r[i + 1], blo, bhi)
    r[i + 1] = c.th
  }
}

function immReader(insn: Instruction, size: number): Reader {
  const { lo, hi } = immValue(insn, size)
  if (size === 8) {
    return (c) => {
      c.th = hi
      return lo
    }
  }
  return () => lo
}

/** Opcodes 00-3D: the row is the ALU kind, the low three bits the form. */
export function compileAluRow(insn: Instruction): Op {
  const kind = insn.opcode >> 3
  const form = insn.opcode & 7
  const size = form === 0 || form === 2 || form === 4 ? 1 : insn.operandSize
  const writes = kind !== ALU_CMP
  switch (form) {
    case 0:
    case 1:
      return binary(insn, { kind, size, dstRm: true, src: readGpr(insn, size), writes })
    case 2:
    case 3:
      return binary(insn, { kind, size, dstRm: false, src: readRm(insn, size), writes })
    default:
      return binary(insn, { kind, size, dstRm: false, acc: true, src: immReader(insn, size), writes })
  }
}

/** 80, 81, 83: group 1 with an immediate. */
export function compileAluGroup1(insn: Instruction): Op {
  const kind = insn.reg & 7
  const size = insn.opcode === 0x80 ? 1 : insn.operandSize
  return binary(insn, { kind, size, dstRm: true, src: immReader(insn, size), writes: kind !== ALU_CMP })
}

/** 84/85 test r/m, reg; A8/A9 test acc, imm; F6/F7 /0 test r/m, imm. */
export function compileTest(insn: Instruction): Op {
  const op = insn.opcode
  const size = op === 0x84 || op === 0xa8 || op === 0xf6 ? 1 : insn.operandSize
  if (op === 0x84 || op === 0x85)
    return binary(insn, { kind: ALU_AND, size, dstRm: true, src: readGpr(insn, size), writes: false })
  if (op === 0xa8 || op === 0xa9)
    return binary(insn, {
      kind: ALU_AND,
      size,
      dstRm: false,
      acc: true,
      src: immReader(insn, size),
      writes: false,
    })
  return binary(insn, { kind: ALU_AND, size, dstRm: true, src: immReader(insn, size), writes: false })
}

/** FE/FF /0 /1: inc and dec r/m. */
export function compileIncDec(insn: Instruction): Op {
  const dec = (insn.reg & 7) === 1
  const size = insn.opcode === 0xfe ? 1 : insn.operandSize
  if (insn.mod !== 3) {
    const ea = compileEa(insn)
    const rd = memReadAt(size, true)
    const wr = memWriteAt(size)
    if (size === 8) {
      return (c) => {
        const a = ea(c)
        const lo = rd(c, a)
        const r = incDec64(c, lo, c.th, dec)
        wr(c, a, r, c.th)
      }
    }
    return (c) => {
      const a = ea(c)
      wr(c, a, incDec(c, rd(c, a), dec, size), 0)
    }
  }
  if (size === 8) {
    const i = 2 * insn.rm
    return (c) => {
      const r = c.r
      r[i] = incDec64(c, r[i], r[i + 1], dec)
      r[i + 1] = c.th
    }
  }
  const high = isHigh8(insn, insn.rm, size)
  const rd = readReg(insn.rm, size, high)
  const wr = writeReg(insn.rm, size, high)
  return (c) => wr(c, incDec(c, rd(c), dec, size), 0)
}

/** F6/F7 /2 not, /3 neg. */
export function compileNotNeg(insn: Instruction): Op {
  const neg = (insn.reg & 7) === 3
  const size = insn.opcode === 0xf6 ? 1 : insn.operandSize
  const s = size === 1 ? S8 : size === 2 ? S16 : size === 4 ? S32 : S64
  const mask = size === 1 ? 0xff : size === 2 ? 0xffff : -1
  let rd: (c: Cpu) => number
  let wr: (c: Cpu, v: number, hi: number) => void
  if (insn.mod !== 3) {
    const ea = compileEa(insn)
    const r8 = memReadAt(size, true)
    const w8 = memWriteAt(size)
    // Compute the address once per execution: stash it between the two closures.
    let addr = 0
    rd = (c) => r8(c, (addr = ea(c)))
    wr = (c, v, hi) => w8(c, addr, v, hi)
  } else {
    const high = isHigh8(insn, insn.rm, size)
    rd = readReg(insn.rm, size, high)
    wr = writeReg(insn.rm, size, high)
  }
  if (size === 8) {
    if (!neg)
      return (c) => {
        const lo = rd(c)
        wr(c, ~lo, ~c.th)
      }
    return (c) => {
      const lo = rd(c)
      const hi = c.th
      const rlo = -lo | 0
      const rhi = (~hi + (lo === 0 ? 1 : 0)) | 0
      wr(c, rlo, rhi)
      lazy64(c, FK_SUB | S64, 0, 0, lo, hi, rlo, rhi)
    }
  }
  if (!neg) return (c) => wr(c, ~rd(c) & mask, 0)
  return (c) => {
    const v = rd(c)
    const r = -v & mask
    wr(c, r, 0)
    lazy(c, FK_SUB | s, 0, v, r)
  }
}
