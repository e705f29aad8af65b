// A code address from the command line, as a probekit linear number: the
// signed 64-bit value of a canonical x86-64 address, so kernel text at
// 0xffffffff81000000 is -0x7f000000 (see @probekit/x86-emu's address.ts).

import { CliError } from './cli-error.js'

const CANONICAL_LIMIT = 2n ** 47n

export function parseAddress(text: string): number {
  const trimmed = text.trim()
  const match = /^(-?)(0x[0-9a-f]+|[0-9]+)$/i.exec(trimmed)
  if (!match)
    throw new CliError(`bad address '${text}': expected hex like 0xffffffff81000000 or a decimal number`)
  const magnitude = BigInt(match[2])
  const value = match[1] === '-' ? -magnitude : magnitude
  if (value >= 2n ** 64n || value < -(2n ** 63n))
    throw new CliError(`bad address '${text}': wider than 64 bits`)
  const linear = BigInt.asIntN(64, value)
  if (linear < -CANONICAL_LIMIT || linear >= CANONICAL_LIMIT) {
    throw new CliError(`bad address '${text}': not canonical (bits 63..47 must all equal bit 47)`)
  }
  return Number(linear)
}
