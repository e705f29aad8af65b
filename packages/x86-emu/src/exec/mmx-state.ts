// The MMX registers: MM0-MM7 are not separate state but the significands of
// the x87 physical registers R0-R7 (Intel SDM vol. 1, 9.5). Every MMX
// instruction except emms puts the x87 unit in "MMX state": TOP = 0 and the
// whole tag word valid; a write to MMi also sets the sign/exponent word of
// Ri to all ones, so the register reads as a NaN (or infinity) to x87 code.
// emms empties every tag (and also sets TOP = 0). Because the state is shared, fxsave/fxrstor and
// the kernel's signal frames carry the MMX registers with no extra code.
//
// Values move between the register file (bigint significands) and SCRATCH
// (sse-common.ts) through a DataView, so the SSE lane helpers work on MMX
// operands unchanged: an MMX operand occupies the low quadword of its slot.

import type { Cpu } from '../cpu/cpu.js'
import { type X87State, x87State } from '../cpu/fpu-state.js'
import type { Instruction } from '../decoder/instruction.js'
import { checkX87Pending } from './fpu-exceptions.js'
import { compileEa } from './operands.js'
import { I32, SCRATCH } from './sse-common.js'

const SV = new DataView(SCRATCH)

/** Copy MMi into SCRATCH dword lanes `lane`, `lane + 1`. */
export function mmToScratch(s: X87State, i: number, lane: number): void {
  SV.setBigUint64(lane * 4, s.sig[i], true)
}

/** MMi = SCRATCH dword lanes `lane`, `lane + 1` (exponent/sign word all ones). */
export function mmFromScratch(s: X87State, i: number, lane: number): void {
  s.sig[i] = SV.getBigUint64(lane * 4, true)
  s.se[i] = 0xffff
}

/** MMi = hi:lo (spare lanes 14-15 of SCRATCH carry the value). */
export function mmSet(s: X87State, i: number, lo: number, hi: number): void {
  I32[14] = lo
  I32[15] = hi
  mmFromScratch(s, i, 14)
}

/** The x87 state of an MMX instruction: #MF for a pending x87 exception, then the MMX transition. */
export function mmxBegin(c: Cpu): X87State {
  const s = x87State(c)
  checkX87Pending(c, s)
  return s
}

/** TOP = 0, all registers valid (after the instruction's operands were read without fault). */
export function mmxTransition(s: X87State): void {
  s.fsw &= ~0x3800
  s.ftwAbridged = 0xff
}

/** emms: all x87 registers empty, TOP = 0 (SDM vol. 1, table 9-2). */
export function emms(c: Cpu): void {
  const s = mmxBegin(c)
  s.fsw &= ~0x3800
  s.ftwAbridged = 0
}

/** Loads an MMX r/m operand (mm register, or m64 / m32 zero-extended, any alignment) into SCRATCH lanes `lane`, `lane + 1`. */
export type MmLoad = (c: Cpu, s: X87State) => void

export function loadMmRm(insn: Instruction, lane: number, memBytes: 4 | 8 = 8): MmLoad {
  if (insn.mod === 3) {
    const r = insn.rm & 7
    return (_c, s) => mmToScratch(s, r, lane)
  }
  const ea = compileEa(insn)
  if (memBytes === 4)
    return (c) => {
      I32[lane] = c.read32(ea(c))
      I32[lane + 1] = 0
    }
  return (c) => {
    I32[lane] = c.read64(ea(c))
    I32[lane + 1] = c.th
  }
}
