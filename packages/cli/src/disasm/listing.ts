// A function's disassembly for `probekit disasm`: instruction boundaries
// and branch targets from the engine's decoder (what kprobes and the CPU
// use), the text from capstone; laid out as objdump -d lays it out, with
// <symbol+0xoff> after a branch's target and notes (probes) at the end.

import { tryDecode } from '@probekit/x86-emu'
import { formatInstruction } from '../disassembly/format-instruction.js'
import { addressDigits, formatBytes } from '../disassembly/hex.js'
import type { Colors } from '../io.js'
import type { CapstoneOne } from './capstone.js'

export interface DisasmLine {
  address: number
  bytes: Uint8Array
  /** capstone's mnemonic and operands (the decoder's when capstone rejects the bytes), targets named. */
  text: string
  notes: string[]
}

/** A name for a code address ('do_fork+0x10'), or null when no symbol covers it. */
export type NameOf = (address: number) => string | null

/** Linear sweep over `bytes` at `address`; undecodable bytes become one-byte '(bad)' lines, as objdump shows them. */
export function sweep(bytes: Uint8Array, address: number, cs: CapstoneOne, nameOf: NameOf): DisasmLine[] {
  const out: DisasmLine[] = []
  let off = 0
  while (off < bytes.length) {
    const at = address + off
    const insn = tryDecode(bytes.subarray(off), at)
    if (insn instanceof Error) {
      out.push({ address: at, bytes: bytes.subarray(off, off + 1), text: '(bad)', notes: [] })
      off++
      continue
    }
    const mine = bytes.subarray(off, off + insn.length)
    const theirs = cs(mine, at)
    let text =
      theirs && theirs.size === insn.length
        ? `${theirs.mnemonic}${theirs.opStr ? ` ${theirs.opStr}` : ''}`
        : formatInstruction(insn)
    if (insn.branchTarget !== null) {
      const name = nameOf(insn.branchTarget)
      if (name) text += ` <${name}>`
    }
    out.push({ address: at, bytes: mine, text, notes: [] })
    off += insn.length
  }
  return out
}

/** The lines as columns: address, <+offset> from `base`, bytes, instruction, notes (trailing blanks trimmed). */
export function renderDisasm(lines: readonly DisasmLine[], base: number, colors: Colors): string {
  const width = Math.max(8, ...lines.map((l) => addressDigits(l.address).length))
  const offs = lines.map((l) => `<+${l.address - base}>`)
  const offWidth = Math.max(0, ...offs.map((o) => o.length))
  const byteWidth = Math.max(0, ...lines.map((l) => formatBytes(l.bytes).length))
  const textWidth = Math.max(0, ...lines.map((l) => l.text.length))
  return lines
    .map((l, i) => {
      const notes = l.notes.join(' ')
      const row = [
        colors.dim(addressDigits(l.address, width)),
        offs[i].padEnd(offWidth),
        formatBytes(l.bytes).padEnd(byteWidth),
        notes ? l.text.padEnd(textWidth) : l.text,
        notes ? colors.yellow(notes) : '',
      ]
      return row.join('  ').trimEnd()
    })
    .join('\n')
}
