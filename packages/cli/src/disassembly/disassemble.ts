// Linear-sweep disassembly: decode one instruction, step over its length,
// repeat. Stops at the first bytes that are not an instruction and says why.

import { DecodeError } from '@probekit/x86-emu'
import type { DecodeFunction, ListedInstruction } from './listed-instruction.js'

export interface Disassembly {
  instructions: ListedInstruction[]
  /** Where and why decoding stopped early ('invalid', 'truncated', 'too-long'); null if all bytes decoded. */
  failure: { address: number; reason: string } | null
}

export function disassemble(decode: DecodeFunction, bytes: Uint8Array, address: number): Disassembly {
  const instructions: ListedInstruction[] = []
  let offset = 0
  while (offset < bytes.length) {
    let insn: ListedInstruction
    try {
      insn = decode(bytes.subarray(offset), address + offset)
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error // a bug in the decoder, not in the input
      return { instructions, failure: { address: address + offset, reason: error.reason } }
    }
    // A zero length would loop forever; treat it as the decoder bug it is.
    if (!(insn.length > 0)) throw new Error(`decoder returned length ${insn.length} at offset ${offset}`)
    instructions.push(insn)
    offset += insn.length
  }
  return { instructions, failure: null }
}
