// Hand-built decoder results, so the CLI's formatting is tested on exactly
// the operand shapes each case is about.

import type { Operand } from '@probekit/x86-emu'
import type { ListedInstruction } from '../src/disassembly/listed-instruction.js'

export function fakeInstruction(
  address: number,
  hex: string,
  mnemonic: string,
  operands: Operand[] = [],
  extra: Partial<ListedInstruction> = {},
): ListedInstruction {
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

// The listing prints only the name; class/index/size are the decoder's bookkeeping.
export const reg = (name: string): Operand => ({ kind: 'reg', name, class: 'gpr', index: 0, size: 8 })

export function mem(fields: Partial<Extract<Operand, { kind: 'mem' }>>): Operand {
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

export const imm = (value: number, size = 1): Operand => ({
  kind: 'imm',
  size,
  value,
  bigValue: BigInt(value),
})
