// Linear-sweep disassembly: decode one instruction, step over its length,
// repeat. Stops at the first bytes that are not an instruction and says why.

import type { DecodedInstruction, DecodeFunction } from './decoded-instruction.js'

export interface Disassembly {
  instructions: DecodedInstruction[]
  /** Where and why decoding stopped early ('invalid', 'truncated', 'too-long'); null if all bytes decoded. */
  failure: { address: number; reason: string } | null
}

/** x86-emu's DecodeError, recognised by shape since the class is not exported yet. */
function decodeFailureReason(error: unknown): string | null {
  if (!(error instanceof Error) || error.name !== 'DecodeError') return null
  const reason = (error as { reason?: unknown }).reason
  return typeof reason === 'string' ? reason : 'invalid'
}

export function disassemble(decode: DecodeFunction, bytes: Uint8Array, address: number): Disassembly {
  const instructions: DecodedInstruction[] = []
  let offset = 0
  while (offset < bytes.length) {
    let insn: DecodedInstruction
    try {
      insn = decode(bytes.subarray(offset), address + offset)
    } catch (error) {
      const reason = decodeFailureReason(error)
      if (reason === null) throw error // a bug in the decoder, not in the input
      return { instructions, failure: { address: address + offset, reason } }
    }
    // A zero length would loop forever; treat it as the decoder bug it is.
    if (!(insn.length > 0)) throw new Error(`decoder returned length ${insn.length} at offset ${offset}`)
    instructions.push(insn)
    offset += insn.length
  }
  return { instructions, failure: null }
}
