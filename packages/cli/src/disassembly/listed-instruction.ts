// The part of x86-emu's decoded Instruction that a listing reads. Narrower
// than Instruction so tests can hand-build the odd instruction to format.

import type { Instruction } from '@probekit/x86-emu'

export type ListedInstruction = Pick<
  Instruction,
  | 'address'
  | 'length'
  | 'bytes'
  | 'mnemonic'
  | 'lock'
  | 'rep'
  | 'addressSize'
  | 'operands'
  | 'branchTarget'
  | 'flags'
>

/** decode(bytes, address) as x86-emu exports it: one instruction, or a thrown DecodeError. */
export type DecodeFunction = (bytes: Uint8Array, address: number) => ListedInstruction
