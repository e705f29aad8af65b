// Instruction bytes as people paste them: 'cc', '55 48 89 e5', '0x55',
// '4889e5', '\x48\x89\xe5', 'CC,90'. Each command-line argument may hold
// several space- or comma-separated groups; every group is whole bytes.

import { CliError } from './cli-error.js'

const HEX_PAIRS = /^(?:[0-9a-f]{2})+$/i
const ESCAPED = /^(?:\\x[0-9a-f]{2})+$/i

export function parseHexBytes(args: readonly string[]): Uint8Array {
  const out: number[] = []
  for (const arg of args) {
    for (const group of arg.split(/[\s,]+/).filter(Boolean)) {
      let digits = group
      if (ESCAPED.test(digits)) digits = digits.replaceAll(/\\x/gi, '')
      else if (/^0x/i.test(digits)) digits = digits.slice(2)
      if (!HEX_PAIRS.test(digits)) {
        throw new CliError(`bad hex bytes '${group}': expected pairs of hex digits, like 'cc' or '48 89 e5'`)
      }
      for (let i = 0; i < digits.length; i += 2) out.push(Number.parseInt(digits.slice(i, i + 2), 16))
    }
  }
  if (out.length === 0) throw new CliError('no bytes to decode')
  return Uint8Array.from(out)
}
