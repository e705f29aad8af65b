// probekit decode <hex bytes...> [--address 0x...]: disassemble with x86-emu's decoder.

import { CliError } from '../cli-error.js'
import { disassemble } from '../disassembly/disassemble.js'
import { findDecoder } from '../disassembly/find-decoder.js'
import { formatAddress } from '../disassembly/hex.js'
import { renderListing } from '../disassembly/render-listing.js'
import type { CliIo } from '../io.js'
import { parseAddress } from '../parse-address.js'
import { parseHexBytes } from '../parse-hex.js'

export interface DecodeCommandOptions {
  address: string
}

export function decodeCommand(hex: readonly string[], options: DecodeCommandOptions, io: CliIo): void {
  // Validate the input first: a typo deserves its message even before the decoder exists.
  const bytes = parseHexBytes(hex)
  const address = parseAddress(options.address)
  const decode = findDecoder()
  if (decode === null) {
    throw new CliError(
      'the x86-64 decoder is not available yet: @probekit/x86-emu does not export decode()',
      1,
    )
  }
  const { instructions, failure } = disassemble(decode, bytes, address)
  if (instructions.length > 0) io.stdout.write(`${renderListing(instructions, io.colors)}\n`)
  if (failure) {
    const offset = failure.address - address
    throw new CliError(
      `cannot decode the bytes at ${formatAddress(failure.address)} (offset ${offset}): ${failure.reason} instruction`,
    )
  }
}
