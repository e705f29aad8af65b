// Exception vectors and the fault object the execution core throws.

export enum Vector {
  DE = 0, // divide error
  DB = 1, // debug
  NMI = 2,
  BP = 3, // breakpoint (int3)
  OF = 4, // overflow (into; invalid in 64-bit mode)
  BR = 5,
  UD = 6, // invalid opcode
  NM = 7, // device not available
  DF = 8, // double fault
  TS = 10,
  NP = 11,
  SS = 12, // stack-segment fault (non-canonical stack access)
  GP = 13, // general protection
  PF = 14, // page fault
  MF = 16, // x87 floating point
  AC = 17,
  MC = 18,
  XM = 19, // SIMD floating point
}

export const VECTOR_NAMES: Record<number, string> = {
  0: '#DE',
  1: '#DB',
  2: 'NMI',
  3: '#BP',
  4: '#OF',
  5: '#BR',
  6: '#UD',
  7: '#NM',
  8: '#DF',
  10: '#TS',
  11: '#NP',
  12: '#SS',
  13: '#GP',
  14: '#PF',
  16: '#MF',
  17: '#AC',
  18: '#MC',
  19: '#XM',
}

/** Does this vector push an error code? */
export function hasErrorCode(vector: number): boolean {
  return vector === 8 || (vector >= 10 && vector <= 14) || vector === 17
}

// #PF error code bits.
export const PF_PRESENT = 1 << 0
export const PF_WRITE = 1 << 1
export const PF_USER = 1 << 2
export const PF_RSVD = 1 << 3
export const PF_INSTR = 1 << 4

/**
 * A fault raised by an instruction. The executor throws it before changing
 * any architectural state, catches it at the block runner, rewinds RIP to the
 * faulting instruction and hands it to the system's exception handler.
 */
export class CpuFault {
  constructor(
    readonly vector: number,
    readonly errorCode = 0,
    /** Faulting linear address for #PF (becomes CR2). */
    readonly address = 0,
    /** Human detail for reports (e.g. which instruction was not implemented). */
    readonly detail = '',
    /** A trap reports the address after the instruction (int3, int n, single-step); a fault the instruction itself. */
    readonly trap = false,
  ) {}
  get name(): string {
    return VECTOR_NAMES[this.vector] ?? `vector ${this.vector}`
  }
}

/** Thrown by instructions the emulator does not implement (yet): becomes #UD for the guest, and is reported by name. */
export class Unimplemented extends CpuFault {
  constructor(detail: string) {
    super(Vector.UD, 0, 0, detail)
  }
}

/** int n / int3: a trap whose gate DPL is checked against CPL. */
export class SoftwareInterrupt extends CpuFault {
  constructor(
    vector: number,
    /** The instruction's length: a #GP for a gate it may not use points back at it. */
    readonly length: number,
  ) {
    super(vector, 0, 0, '', true)
  }
}
