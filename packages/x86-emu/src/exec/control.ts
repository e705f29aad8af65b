// Control transfer: jmp, jcc, call, ret, loop, jrcxz. Every op here sets RIP
// and ends its block.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { condition } from '../cpu/flags.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { checkStackAddress, readRm, wrap64 } from './operands.js'
import { getRsp, push64, setRsp } from './stack.js'

const TWO_32 = 0x1_0000_0000
const CANONICAL = 0x8000_0000_0000

function checkTarget(target: number): void {
  if (!(target >= -CANONICAL && target < CANONICAL))
    throw new CpuFault(Vector.GP, 0, 0, 'branch to a non-canonical address')
}

function relTarget(insn: Instruction): number {
  const t = insn.branchTarget
  if (t === null) throw new Error(`decoder gave no branch target for ${insn.mnemonic}`)
  return insn.operandSize === 2 ? t & 0xffff : t
}

/** E9/EB jmp rel. */
export function compileJmpRel(insn: Instruction): Op {
  const target = relTarget(insn)
  if (!(target >= -CANONICAL && target < CANONICAL)) return () => checkTarget(target)
  return (c) => {
    c.rip = target
  }
}

/** 70-7F and 0F 80-8F jcc. */
export function compileJcc(insn: Instruction): Op {
  const cc = insn.opcode & 15
  const target = relTarget(insn)
  const next = insn.address + insn.length
  return (c) => {
    if (condition(c, cc)) {
      checkTarget(target)
      c.rip = target
    } else c.rip = next
  }
}

/** E8 call rel32. */
export function compileCallRel(insn: Instruction): Op {
  const target = relTarget(insn)
  const next = insn.address + insn.length
  const lo = next | 0
  const hi = Math.floor(next / TWO_32) | 0
  return (c) => {
    checkTarget(target)
    push64(c, lo, hi)
    c.rip = target
  }
}

/** FF /2 call r/m64, FF /4 jmp r/m64. */
export function compileIndirect(insn: Instruction): Op {
  const isCall = (insn.reg & 7) === 2
  const rd = readRm(insn, 8)
  const next = insn.address + insn.length
  const lo = next | 0
  const hi = Math.floor(next / TWO_32) | 0
  return (c) => {
    const tlo = rd(c)
    const target = c.th * TWO_32 + (tlo >>> 0)
    checkTarget(target)
    if (isCall) push64(c, lo, hi)
    c.rip = target
  }
}

/** A near return releasing `extra` bytes of arguments: the stack and RIP are unchanged when it faults. */
export function retNear(c: Cpu, extra: number): void {
  const sp = checkStackAddress(getRsp(c))
  const lo = c.read64(sp)
  const target = c.th * TWO_32 + (lo >>> 0)
  checkTarget(target)
  setRsp(c, wrap64(sp + 8 + extra))
  c.rip = target
}

/** C3 ret, C2 ret imm16. */
export function compileRet(insn: Instruction): Op {
  const extra = insn.opcode === 0xc2 ? insn.immediate & 0xffff : 0
  return (c) => retNear(c, extra)
}

/** E0 loopne, E1 loope, E2 loop, E3 jrcxz (address size picks rcx or ecx). */
export function compileLoop(insn: Instruction): Op {
  const op = insn.opcode
  const target = relTarget(insn)
  const next = insn.address + insn.length
  const a32 = insn.addressSize === 4
  if (op === 0xe3) {
    return (c) => {
      const zero = a32 ? c.r[2] === 0 : (c.r[2] | c.r[3]) === 0
      c.rip = zero ? target : next
    }
  }
  return (c) => {
    const r = c.r
    let nonzero: boolean
    if (a32) {
      r[2] = (r[2] - 1) | 0
      r[3] = 0
      nonzero = r[2] !== 0
    } else {
      if (r[2] === 0) r[3] = (r[3] - 1) | 0
      r[2] = (r[2] - 1) | 0
      nonzero = (r[2] | r[3]) !== 0
    }
    let take = nonzero
    if (op === 0xe1) take = nonzero && condition(c, 4)
    else if (op === 0xe0) take = nonzero && condition(c, 5)
    c.rip = take ? target : next
  }
}
