// Looks up decode() in @probekit/x86-emu at run time. The decoder was written
// in parallel with this CLI; without it, `probekit decode` says so plainly
// instead of crashing on an undefined function.

import * as x86emu from '@probekit/x86-emu'
import type { DecodeFunction } from './decoded-instruction.js'

// Compile-time check that x86-emu's decode(), once exported, still fits the
// part of the contract this CLI relies on (true while it is not exported).
type ExportedDecode = typeof x86emu extends { decode: infer F } ? F : DecodeFunction
const contractHolds: ExportedDecode extends DecodeFunction ? true : never = true
void contractHolds

export function findDecoder(): DecodeFunction | null {
  const candidate = (x86emu as unknown as { decode?: unknown }).decode
  return typeof candidate === 'function' ? (candidate as DecodeFunction) : null
}
