// Stack instructions: push/pop in every form, pushf/popf, enter/leave.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { arithFlags, FK_EAGER } from '../cpu/flags.js'
import { AC, ARITH_FLAGS, DF, ID, IF, IOPL, NT, RF, RFLAGS_FIXED, TF, VM } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { opcodeReg } from './move.js'
import type { Op } from './op.js'
import { checkStackAddress, compileEa, immValue, memWriteAt, readRm, wrap64 } from './operands.js'

const TWO_32 = 0x1_0000_0000

export function getRsp(c: Cpu): number {
  return c.r[9] * TWO_32 + (c.r[8] >>> 0)
}
export function setRsp(c: Cpu, sp: number): void {
  c.r[8] = sp | 0
  c.r[9] = Math.floor(sp / TWO_32) | 0
}

/** #SS for a stack address whose high half (signed) is not canonical: bits 63..47 must all be equal. */
function checkStackHigh(hi: number): void {
  if (hi >> 15 !== hi >> 31) throw new CpuFault(Vector.SS, 0, 0, 'non-canonical stack address')
}

/**
 * Push a 64-bit value (the write happens before RSP moves, so a fault
 * changes nothing). RSP stays in its two halves throughout: see Cpu.read64h.
 */
export function push64(c: Cpu, lo: number, hi: number): void {
  const r = c.r
  const slo = r[8]
  const shi = slo >>> 0 < 8 ? (r[9] - 1) | 0 : r[9]
  const nlo = (slo - 8) | 0
  checkStackHigh(shi)
  c.write64h(nlo, shi, lo, hi)
  r[8] = nlo
  r[9] = shi
}

/** Pop a 64-bit value: returns the low half, high half in c.th. */
export function pop64(c: Cpu): number {
  const r = c.r
  const slo = r[8]
  const shi = r[9]
  checkStackHigh(shi)
  const lo = c.read64h(slo, shi)
  r[8] = (slo + 8) | 0
  r[9] = slo >>> 0 >= 0xfffffff8 ? (shi + 1) | 0 : shi
  return lo
}

export function pushLinear(c: Cpu, v: number): void {
  push64(c, v | 0, Math.floor(v / TWO_32) | 0)
}

export function popLinear(c: Cpu): number {
  const lo = pop64(c)
  return c.th * TWO_32 + (lo >>> 0)
}

function push16(c: Cpu, v: number): void {
  const sp = checkStackAddress(wrap64(getRsp(c) - 2))
  c.write16(sp, v)
  setRsp(c, sp)
}

/** 50+r push reg, 68/6A push imm, FF /6 push r/m, 0F A0/A8 push fs/gs. */
export function compilePush(insn: Instruction): Op {
  const size = insn.operandSize === 2 ? 2 : 8
  let src: (c: Cpu) => number
  if (insn.map === 0 && insn.opcode >= 0x50 && insn.opcode <= 0x57) {
    const i = 2 * opcodeReg(insn)
    if (size === 8) return (c) => push64(c, c.r[i], c.r[i + 1])
    src = (c) => c.r[i] & 0xffff
  } else if (insn.map === 0 && (insn.opcode === 0x68 || insn.opcode === 0x6a)) {
    const { lo, hi } = immValue(insn, size)
    if (size === 8) return (c) => push64(c, lo, hi)
    src = () => lo
  } else if (insn.map === 1) {
    const fs = insn.opcode === 0xa0
    if (size === 8) return (c) => push64(c, fs ? c.fsSel : c.gsSel, 0)
    src = (c) => (fs ? c.fsSel : c.gsSel)
  } else {
    const rd = readRm(insn, size)
    if (size === 8)
      return (c) => {
        const lo = rd(c)
        push64(c, lo, c.th)
      }
    src = rd
  }
  return (c) => push16(c, src(c))
}

/** 58+r pop reg, 8F /0 pop r/m, 0F A1/A9 pop fs/gs. */
export function compilePop(insn: Instruction): Op {
  const size = insn.operandSize === 2 ? 2 : 8
  if (insn.map === 0 && insn.opcode >= 0x58 && insn.opcode <= 0x5f) {
    const n = opcodeReg(insn)
    const i = 2 * n
    if (size === 8) {
      return (c) => {
        const lo = pop64(c)
        // pop rsp: the loaded value wins over the increment.
        c.r[i] = lo
        c.r[i + 1] = c.th
      }
    }
    return (c) => {
      const sp = getRsp(c)
      const v = c.read16(sp)
      setRsp(c, wrap64(sp + 2))
      c.r[i] = (c.r[i] & ~0xffff) | v
    }
  }
  if (insn.map === 1) {
    const fs = insn.opcode === 0xa1
    return (c) => {
      const sp = getRsp(c)
      const v = size === 8 ? c.read64(sp) & 0xffff : c.read16(sp)
      if (v !== 0) throw new CpuFault(Vector.GP, v & 0xfffc, 0, 'pop fs/gs with a non-null selector')
      setRsp(c, wrap64(sp + size))
      if (fs) c.fsSel = v
      else c.gsSel = v
    }
  }
  // pop r/m: the address is computed after RSP is incremented.
  if (insn.mod === 3) {
    const i = 2 * insn.rm
    return (c) => {
      if (size === 8) {
        const lo = pop64(c)
        c.r[i] = lo
        c.r[i + 1] = c.th
      } else {
        const sp = getRsp(c)
        const v = c.read16(sp)
        setRsp(c, wrap64(sp + 2))
        c.r[i] = (c.r[i] & ~0xffff) | v
      }
    }
  }
  const ea = compileEa(insn)
  const wr = memWriteAt(size)
  return (c) => {
    const sp = getRsp(c)
    const lo = size === 8 ? c.read64(sp) : c.read16(sp)
    const hi = c.th
    setRsp(c, wrap64(sp + size))
    try {
      wr(c, ea(c), lo, hi)
    } catch (e) {
      setRsp(c, sp)
      throw e
    }
  }
}

/** RFLAGS as pushf stores it (VM and RF read as 0). */
export function rflagsImage(c: Cpu): number {
  return ((c.eflags & ~(ARITH_FLAGS | VM | RF)) | arithFlags(c) | RFLAGS_FIXED) >>> 0
}

/** 9C pushf. */
export function compilePushf(insn: Instruction): Op {
  if (insn.operandSize === 2) return (c) => push16(c, rflagsImage(c) & 0xffff)
  return (c) => push64(c, rflagsImage(c), 0)
}

/** 9D popf: CPL 3 cannot change IF or IOPL (silently), nobody changes VM/RF here. */
export function compilePopf(insn: Instruction): Op {
  const size = insn.operandSize === 2 ? 2 : 8
  return (c) => {
    const sp = getRsp(c)
    const v = size === 8 ? c.read64(sp) : c.read16(sp)
    setRsp(c, wrap64(sp + size))
    let writable = ARITH_FLAGS | TF | DF | NT | AC | ID
    if (c.cpl === 0) writable |= IF | IOPL
    if (size === 2) writable &= 0xffff
    c.eflags = (c.eflags & ~writable) | (v & writable) | RFLAGS_FIXED
    c.fop = FK_EAGER
  }
}

/** C9 leave: rsp = rbp; pop rbp. */
export function compileLeave(insn: Instruction): Op {
  if (insn.operandSize === 2) {
    return (c) => {
      const sp = c.r[10] & 0xffff
      const v = c.read16(sp)
      c.r[8] = (c.r[8] & ~0xffff) | ((sp + 2) & 0xffff)
      c.r[10] = (c.r[10] & ~0xffff) | v
    }
  }
  return (c) => {
    const bp = c.r[11] * TWO_32 + (c.r[10] >>> 0)
    const lo = c.read64(bp)
    setRsp(c, wrap64(bp + 8))
    c.r[10] = lo
    c.r[11] = c.th
  }
}

/** C8 enter imm16, imm8 (64-bit operand size). */
export function compileEnter(insn: Instruction): Op {
  const frame = insn.immediate & 0xffff
  const level = insn.immediate2 & 31
  return (c) => {
    const rbp = c.r[11] * TWO_32 + (c.r[10] >>> 0)
    let sp = getRsp(c)
    // Do every memory access before touching registers.
    const pushes: [number, number][] = [[c.r[10], c.r[11]]]
    let bp = rbp
    for (let k = 1; k < level; k++) {
      bp = wrap64(bp - 8)
      const lo = c.read64(bp)
      pushes.push([lo, c.th])
    }
    let s = sp
    for (const [lo, hi] of pushes) {
      s = wrap64(s - 8)
      c.write64(s, lo, hi)
    }
    const frameTemp = wrap64(sp - 8)
    if (level > 0) {
      s = wrap64(s - 8)
      c.write64(s, frameTemp | 0, Math.floor(frameTemp / TWO_32) | 0)
    }
    sp = wrap64(s - frame)
    c.r[10] = frameTemp | 0
    c.r[11] = Math.floor(frameTemp / TWO_32) | 0
    setRsp(c, sp)
  }
}
