// The part of @probekit/x86-emu's decoder contract the CLI reads
// (packages/x86-emu/src/decoder/instruction.ts). Declared structurally here
// because x86-emu does not export the Instruction type yet; once it does,
// replace this file with `export type { Instruction, Operand } from '@probekit/x86-emu'`.

export type SegmentRegister = 'es' | 'cs' | 'ss' | 'ds' | 'fs' | 'gs'

export type DecodedOperand =
  | { kind: 'reg'; name: string }
  | {
      kind: 'mem'
      size: number
      segment: SegmentRegister | null
      base: number
      index: number
      scale: 1 | 2 | 4 | 8
      displacement: number
      ripRelative: boolean
    }
  | { kind: 'imm'; size: number; value: number; bigValue: bigint }
  | { kind: 'rel'; target: number }
  | { kind: 'far'; selector: number; offset: number }

export interface DecodedInstruction {
  address: number
  length: number
  bytes: Uint8Array
  mnemonic: string
  lock: boolean
  rep: 0 | 0xf2 | 0xf3
  addressSize: 4 | 8
  operands: DecodedOperand[]
  branchTarget: number | null
  flags: number
}

/** The InstructionFlag bits the CLI labels (same values as the contract's const enum). */
export const Flag = {
  Call: 1 << 0,
  Jump: 1 << 1,
  Conditional: 1 << 2,
  Indirect: 1 << 4,
  Ret: 1 << 5,
  Iret: 1 << 6,
  Int3: 1 << 7,
  Int: 1 << 8,
  Syscall: 1 << 9,
  Sysret: 1 << 10,
  Privileged: 1 << 11,
  Undefined: 1 << 14,
  Halt: 1 << 15,
  StringOp: 1 << 16,
  Hypercall: 1 << 20,
} as const

/** decode(bytes, address) as x86-emu exports it: one instruction, or a thrown DecodeError. */
export type DecodeFunction = (bytes: Uint8Array, address: number) => DecodedInstruction
