// A disassembly as an objdump-like table (address, bytes, instruction, labels),
// laid out by cli-table3 without borders so it reads and copies like a listing.

import Table from 'cli-table3'
import type { Colors } from '../io.js'
import { formatInstruction, instructionLabels } from './format-instruction.js'
import { addressDigits, formatBytes } from './hex.js'
import type { ListedInstruction } from './listed-instruction.js'

const NO_BORDERS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
}

export function renderListing(instructions: readonly ListedInstruction[], colors: Colors): string {
  // Kernel addresses print with all 16 digits, user addresses as wide as the widest one.
  const width = Math.max(...instructions.map((i) => addressDigits(i.address).length), 8)
  const table = new Table({
    head: ['address', 'bytes', 'instruction', 'notes'].map((h) => colors.bold(h)),
    chars: NO_BORDERS,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  })
  for (const insn of instructions) {
    const labels = instructionLabels(insn)
    table.push([
      colors.dim(addressDigits(insn.address, width)),
      formatBytes(insn.bytes),
      labels.includes('breakpoint') ? colors.red(formatInstruction(insn)) : formatInstruction(insn),
      colors.yellow(labels.join(' ')),
    ])
  }
  // cli-table3 pads the last column too; trailing blanks only get in the way of diffs.
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}
