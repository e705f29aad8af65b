// probekit decode <hex bytes...> [--address 0x...]: disassemble with x86-emu's decoder.

import { decode } from '@probekit/x86-emu'
import { CliError } from '../cli-error.js'
import { disassemble } from '../disassembly/disassemble.js'
import { formatAddress } from '../disassembly/hex.js'
import { renderListing } from '../disassembly/render-listing.js'
import type { CliIo } from '../io.js'
import { parseAddress } from '../parse-address.js'
import { parseHexBytes } from '../parse-hex.js'

export interface DecodeCommandOptions {
  address: string
}

export function decodeCommand(hex: readonly string[], options: DecodeCommandOptions, io: CliIo): void {
  const bytes = parseHexBytes(hex)
  const address = parseAddress(options.address)
  const { instructions, failure } = disassemble(decode, bytes, address)
  if (instructions.length > 0) io.stdout.write(`${renderListing(instructions, io.colors)}\n`)
  if (failure) {
    const offset = failure.address - address
    throw new CliError(
      `cannot decode the bytes at ${formatAddress(failure.address)} (offset ${offset}): ${failure.reason} instruction`,
    )
  }
}
