// Hand-built decoder results, so the CLI's formatting is tested without
// depending on the state of x86-emu's decoder.

import type { DecodedInstruction, DecodedOperand } from '../src/disassembly/decoded-instruction.js'

export function fakeInstruction(
  address: number,
  hex: string,
  mnemonic: string,
  operands: DecodedOperand[] = [],
  extra: Partial<DecodedInstruction> = {},
): DecodedInstruction {
  const bytes = Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16))
  return {
    address,
    length: bytes.length,
    bytes,
    mnemonic,
    lock: false,
    rep: 0,
    addressSize: 8,
    operands,
    branchTarget: null,
    flags: 0,
    ...extra,
  }
}

export const reg = (name: string): DecodedOperand => ({ kind: 'reg', name })

export function mem(fields: Partial<Extract<DecodedOperand, { kind: 'mem' }>>): DecodedOperand {
  return {
    kind: 'mem',
    size: 8,
    segment: null,
    base: -1,
    index: -1,
    scale: 1,
    displacement: 0,
    ripRelative: false,
    ...fields,
  }
}

export const imm = (value: number, size = 1): DecodedOperand => ({
  kind: 'imm',
  size,
  value,
  bigValue: BigInt(value),
})
