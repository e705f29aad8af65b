// The decoder's output: one x86-64 (64-bit mode) instruction, fully described.
//
// Addresses are "linear numbers": the signed 64-bit value of a canonical
// address, which always fits a double exactly (kernel text at
// 0xffffffff81000000 is -0x7f000000). See ../address.ts for conversions.

export type SegmentRegister = 'es' | 'cs' | 'ss' | 'ds' | 'fs' | 'gs'

/** How the opcode was encoded. '3dnow' is 0F 0F modrm imm8. */
export type Encoding = 'legacy' | 'vex' | 'evex' | 'xop' | '3dnow'

/**
 * Opcode map: 0 = one-byte, 1 = 0F, 2 = 0F38, 3 = 0F3A (legacy, VEX and EVEX
 * share these numbers); 8, 9, 10 = XOP maps; 0x0f0f = 3DNow!.
 */
export type OpcodeMap = 0 | 1 | 2 | 3 | 5 | 6 | 8 | 9 | 10 | 0x0f0f

// biome-ignore lint/suspicious/noConstEnum: part of the decoder/executor contract; tsc inlines the values.
export const enum InstructionFlag {
  Call = 1 << 0,
  Jump = 1 << 1, // unconditional jmp
  Conditional = 1 << 2, // jcc, loop*, jrcxz
  Relative = 1 << 3, // target is rip-relative (branchTarget is set)
  Indirect = 1 << 4, // target comes from a register or memory
  Ret = 1 << 5, // ret / ret imm16 / retf
  Iret = 1 << 6, // iret / iretd / iretq
  Int3 = 1 << 7, // CC (and int1 / icebp F1 is Int)
  Int = 1 << 8, // int imm8, into, int1
  Syscall = 1 << 9, // syscall, sysenter
  Sysret = 1 << 10, // sysret, sysexit
  Privileged = 1 << 11, // raises #GP at CPL 3 (hlt, cli/sti under IOPL 0, mov cr/dr, lgdt, wrmsr, ...)
  MayFault = 1 << 12, // can raise an exception with valid operands (memory access, div, #UD-by-design, int*)
  FarBranch = 1 << 13, // far call / far jmp / retf
  Undefined = 1 << 14, // ud0/ud1/ud2: architecturally raises #UD
  Halt = 1 << 15, // hlt
  StringOp = 1 << 16, // movs/cmps/stos/lods/scas/ins/outs
  Lockable = 1 << 17, // lock prefix is legal with a memory destination
  ReadsMemory = 1 << 18,
  WritesMemory = 1 << 19,
  Hypercall = 1 << 20, // vmcall / vmmcall
}

export type Operand =
  | {
      kind: 'reg'
      /** Register name as capstone prints it: 'rax', 'r8d', 'ah', 'xmm3', 'cr3', 'dr7', 'st(1)', 'es'. */
      name: string
      class: 'gpr' | 'seg' | 'cr' | 'dr' | 'mmx' | 'xmm' | 'ymm' | 'zmm' | 'x87' | 'mask' | 'bnd'
      /** Register number within its class (gpr 0..15 in rax,rcx,rdx,rbx,rsp,rbp,rsi,rdi,r8.. order). */
      index: number
      /** Size in bytes. */
      size: number
      /** AH, CH, DH, BH (gpr 4..7 without REX, byte size). */
      high8?: boolean
    }
  | {
      kind: 'mem'
      /** Access size in bytes (0 when the instruction does not access memory, e.g. lea; size of the pointer-ed object otherwise). */
      size: number
      segment: SegmentRegister | null
      /** GPR number, or -1 for none. With ripRelative the base is RIP. */
      base: number
      index: number
      scale: 1 | 2 | 4 | 8
      /** Sign-extended displacement (for moffs forms, the absolute address as a linear number). */
      displacement: number
      ripRelative: boolean
    }
  | { kind: 'imm'; size: number; value: number; bigValue: bigint }
  | { kind: 'rel'; target: number }
  | { kind: 'far'; selector: number; offset: number }

export interface Instruction {
  address: number
  length: number
  /** The instruction's bytes (a copy, length === this.length). */
  bytes: Uint8Array
  encoding: Encoding
  map: OpcodeMap
  /** The opcode byte within its map. */
  opcode: number
  /** Lowercase mnemonic in capstone's Intel spelling where practical (e.g. 'mov', 'jne', 'movsd', 'rep stosq' is mnemonic 'stosq' with rep). */
  mnemonic: string

  // Prefixes
  lock: boolean
  /** Last of F2/F3 seen (legacy), 0 if none. For SSE this may be a mandatory prefix, see mandatoryPrefix. */
  rep: 0 | 0xf2 | 0xf3
  segment: SegmentRegister | null
  operandSizePrefix: boolean
  addressSizePrefix: boolean
  /** Prefix selecting the operation in SSE-style maps (0x66, 0xf2, 0xf3), or 0; VEX/EVEX pp mapped the same way. */
  mandatoryPrefix: 0 | 0x66 | 0xf2 | 0xf3
  /** The REX byte (0x40..0x4f) or 0 when absent (also 0 when a REX was followed by another prefix and so ignored). */
  rex: number
  rexW: boolean
  rexR: boolean
  rexX: boolean
  rexB: boolean
  /** VEX/EVEX/XOP fields when encoding is not legacy. vvvv is already inverted (the register number). */
  vex: { l: number; w: boolean; vvvv: number } | null

  // ModRM / SIB
  /** The raw ModRM byte or -1. */
  modrm: number
  mod: number
  /** ModRM.reg extended with REX.R (0..15); for /digit opcodes this is the digit plus 8*R, so use (reg & 7). */
  reg: number
  /** ModRM.rm extended with REX.B (0..15). Meaningful as a register only when mod === 3. */
  rm: number
  /** The raw SIB byte or -1. */
  sib: number

  displacement: number
  /** Offset of the displacement inside bytes, or -1. */
  displacementOffset: number
  displacementSize: 0 | 1 | 2 | 4 | 8
  /** Sign-extended immediate (exact for sizes 1, 2, 4; for 8-byte immediates use immediateBig). */
  immediate: number
  immediateBig: bigint
  immediateOffset: number
  immediateSize: 0 | 1 | 2 | 4 | 8
  /** Second immediate (enter's imm8, extrq/insertq) or 0. */
  immediate2: number
  immediate2Size: 0 | 1

  /** Effective operand size in bytes for general-purpose forms (1, 2, 4 or 8). */
  operandSize: 1 | 2 | 4 | 8
  addressSize: 4 | 8

  operands: Operand[]
  /** True when a memory operand is RIP-relative (then displacementOffset locates the disp32 to relocate). */
  ripRelative: boolean
  /** Target of a relative branch (jmp/jcc/call/loop/jrcxz/xbegin), as a linear number; null otherwise. */
  branchTarget: number | null
  /** InstructionFlag bits. */
  flags: number
  /**
   * EVEX fields (encoding 'evex' only): zeroing, broadcast/rounding bit, opmask register, raw L'L
   * (vex.l holds L'L too, and vex.vvvv includes V'). `displacement` is already scaled by disp8*N.
   */
  evex?: { z: boolean; b: boolean; aaa: number; ll: number }
}

/** Why bytes are not an instruction. 'truncated' means more bytes would be needed. */
export type DecodeFailure = 'invalid' | 'truncated' | 'too-long'

export class DecodeError extends Error {
  constructor(
    readonly reason: DecodeFailure,
    readonly address: number,
    readonly bytes: Uint8Array,
  ) {
    super(
      `cannot decode ${reason} instruction at ${address}: ${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`,
    )
    this.name = 'DecodeError'
  }
}
