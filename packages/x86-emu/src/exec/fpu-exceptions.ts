// Delivery of unmasked floating-point exceptions (Intel SDM vol. 1, 8.6 and
// 11.5).
//
// x87: an unmasked exception sets FSW.ES and FSW.B and the instruction
// completes (x87-stack.ts commitExc); #MF (vector 16) is raised before the
// NEXT waiting x87 instruction or MMX instruction executes, with RIP at that
// instruction. The non-waiting forms (fninit, fnclex, fnstsw, fnstcw,
// fnstenv, fnsave) and fxsave/fxrstor do not check. Only the native mode
// (CR0.NE = 1) is modelled; with CR0.NE = 0 real hardware signals FERR# to
// an external interrupt controller this machine does not have, and the
// pending exception is simply never delivered.
//
// SSE: the exceptions an instruction detects are split into pre-computation
// (IE, DE, ZE) and post-computation (OE, UE, PE). If any pre-computation
// exception is unmasked, only the pre-computation flags are set; otherwise,
// if any post-computation exception is unmasked, all of them are. Either
// way the destination is not written and the instruction raises #XM
// (vector 19) when CR4.OSXMMEXCPT = 1, #UD otherwise. Otherwise the flags
// are ORed into MXCSR and the result is written (the masked response).
// Approximation: with UE or OE unmasked, which of PE/UE/OE accompany the
// exception follows the host for underflowing products (UE, plus PE when the
// result rounded with an unbounded exponent is inexact) but is not verified
// for every operation; the differential test unmasks IE, DE, ZE and PE only.

import type { Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import type { X87State } from '../cpu/fpu-state.js'
import { CR0_NE, CR4_OSXMMEXCPT } from '../cpu/registers.js'

/** FSW.ES: an unmasked exception is pending. */
export const FSW_ES = 0x80
const FSW_B = 0x8000

/** Raise #MF if an unmasked x87 exception is pending (the check of every waiting x87/MMX instruction). */
export function checkX87Pending(c: Cpu, s: X87State): void {
  if ((s.fsw & FSW_ES) !== 0 && (c.cr0 & CR0_NE) !== 0)
    throw new CpuFault(Vector.MF, 0, 0, 'x87 floating-point exception pending')
}

/** Recompute FSW.ES and FSW.B from the flags and masks (after FCW or FSW were loaded). */
export function updateX87Summary(s: X87State): void {
  if ((s.fsw & ~s.fcw & 0x3f) !== 0) s.fsw |= FSW_ES | FSW_B
  else s.fsw &= ~(FSW_ES | FSW_B)
}

const PRE = 0x07
const POST = 0x38

/**
 * Commit the exception flags `fx` an SSE instruction raised: ORs them into
 * MXCSR, and throws #XM (#UD without CR4.OSXMMEXCPT) when one is unmasked;
 * the caller writes its destination only when this returns.
 */
export function commitSimd(c: Cpu, fx: number): void {
  if (fx === 0) return
  const m = c.mxcsr
  const unmasked = fx & ~(m >> 7) & 0x3f
  if (unmasked === 0) {
    c.mxcsr = m | fx
    return
  }
  c.mxcsr = m | ((unmasked & PRE) !== 0 ? fx & PRE : fx & (PRE | POST))
  if ((c.cr4 & CR4_OSXMMEXCPT) === 0)
    throw new CpuFault(Vector.UD, 0, 0, 'unmasked SIMD exception (CR4.OSXMMEXCPT = 0)')
  throw new CpuFault(Vector.XM, 0, 0, 'SIMD floating-point exception')
}
