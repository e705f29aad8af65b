// Comparing the outcome of one generated case on the host CPU and in the
// emulator, and printing a mismatch so that it can be reproduced by hand.

import { CODE_BASE, DATA_BASE, flagNames, type GeneratedCase, GPR_NAMES } from './instruction-forms.js'
import { COMPARED_RFLAGS_MASK } from './native.js'

/** The outcome shape shared by runFlat and the native oracle. */
export interface Outcome {
  gpr: bigint[]
  rflags: bigint
  data: Uint8Array
  rip: bigint
  fault: null | { vector: number; errorCode: number }
}

const hex = (v: bigint, digits = 16) => `0x${BigInt.asUintN(64, v).toString(16).padStart(digits, '0')}`

function faultText(o: Outcome): string {
  return o.fault
    ? `vector ${o.fault.vector} error 0x${o.fault.errorCode.toString(16)} at ${hex(o.rip, 8)}`
    : `no fault, rip ${hex(o.rip, 8)}`
}

function dataMask(c: GeneratedCase): Uint8Array {
  const mask = new Uint8Array(c.data.length).fill(0xff)
  for (const [off, bits] of c.undefinedData) {
    for (let i = 0; i < 8 && off + i < mask.length; i++) {
      if (off + i < 0) continue
      mask[off + i] &= ~Number((bits >> BigInt(8 * i)) & 0xffn) & 0xff
    }
  }
  return mask
}

/** Differences between the host's outcome and the emulator's, ignoring what the case leaves undefined. */
export function compareOutcomes(c: GeneratedCase, native: Outcome, emu: Outcome): string[] {
  const diffs: string[] = []
  const nf = native.fault
  const ef = emu.fault
  if (!nf !== !ef || (nf && ef && (nf.vector !== ef.vector || nf.errorCode !== ef.errorCode)))
    diffs.push(`fault: host ${faultText(native)}, emulator ${faultText(emu)}`)
  if (BigInt.asUintN(64, native.rip) !== BigInt.asUintN(64, emu.rip))
    diffs.push(`rip: host ${hex(native.rip, 8)}, emulator ${hex(emu.rip, 8)}`)
  const ignore = new Map<number, bigint>()
  for (const [r, bits] of c.undefinedGpr) ignore.set(r, (ignore.get(r) ?? 0n) | bits)
  for (let i = 0; i < 16; i++) {
    const keep = ~(ignore.get(i) ?? 0n)
    const a = BigInt.asUintN(64, native.gpr[i] & keep)
    const b = BigInt.asUintN(64, emu.gpr[i] & keep)
    if (a !== b) diffs.push(`${GPR_NAMES[i]}: host ${hex(a)}, emulator ${hex(b)}`)
  }
  const flagMask = COMPARED_RFLAGS_MASK & ~BigInt(c.undefinedFlags)
  const fa = native.rflags & flagMask
  const fb = emu.rflags & flagMask
  if (fa !== fb)
    diffs.push(
      `rflags: host ${hex(fa, 4)} [${flagNames(Number(fa))}], emulator ${hex(fb, 4)} [${flagNames(Number(fb))}]` +
        ` (differ: ${flagNames(Number(fa ^ fb))}; ignored: ${flagNames(c.undefinedFlags)})`,
    )
  const mask = dataMask(c)
  const bad: number[] = []
  for (let i = 0; i < native.data.length; i++) if ((native.data[i] ^ emu.data[i]) & mask[i]) bad.push(i)
  if (bad.length) {
    const shown = bad
      .slice(0, 12)
      .map(
        (i) =>
          `+0x${i.toString(16)}: ${native.data[i].toString(16).padStart(2, '0')}/${emu.data[i].toString(16).padStart(2, '0')}`,
      )
    diffs.push(
      `data page: ${bad.length} byte(s) differ (host/emulator) ${shown.join(' ')}${bad.length > 12 ? ' ...' : ''}`,
    )
  }
  return diffs
}

/** The case's code bytes in hex, one instruction per group when lengths are known. */
export function codeHex(code: Uint8Array): string {
  return Array.from(code, (b) => b.toString(16).padStart(2, '0')).join(' ')
}

/** A self-contained description of a case: enough to rebuild it as a unit test. */
export function describeCase(c: GeneratedCase): string {
  const lines = [
    `form: ${c.form} [group ${c.group}, case ${c.index}]`,
    `code @ ${hex(CODE_BASE, 8)}: ${codeHex(c.code)}`,
    `rflags in: ${hex(c.rflags, 4)} [${flagNames(Number(c.rflags))}]; undefined: ${flagNames(c.undefinedFlags)}`,
  ]
  const regs: string[] = []
  for (let i = 0; i < 16; i++) regs.push(`${GPR_NAMES[i]}=${hex(c.gpr[i])}`)
  for (let i = 0; i < 16; i += 4) lines.push(`  ${regs.slice(i, i + 4).join(' ')}`)
  // The data page bytes the case most likely touches: around each register that points into it.
  const near = new Set<number>()
  for (const v of c.gpr) {
    const off = Number(BigInt.asUintN(64, v) - DATA_BASE)
    if (off >= 0 && off < c.data.length) near.add(off & ~15)
  }
  for (const off of [...near].sort((a, b) => a - b).slice(0, 6)) {
    const bytes = Array.from(c.data.subarray(off, off + 16), (b) => b.toString(16).padStart(2, '0')).join(' ')
    lines.push(`  data+0x${off.toString(16).padStart(3, '0')}: ${bytes}`)
  }
  return lines.join('\n')
}

export function describeOutcome(label: string, o: Outcome): string {
  const regs: string[] = []
  for (let i = 0; i < 16; i++) regs.push(`${GPR_NAMES[i]}=${hex(o.gpr[i])}`)
  const lines = [`${label}: ${faultText(o)}, rflags ${hex(o.rflags, 4)} [${flagNames(Number(o.rflags))}]`]
  for (let i = 0; i < 16; i += 4) lines.push(`  ${regs.slice(i, i + 4).join(' ')}`)
  return lines.join('\n')
}

export function describeMismatch(c: GeneratedCase, native: Outcome, emu: Outcome, diffs: string[]): string {
  return [
    describeCase(c),
    describeOutcome('host', native),
    describeOutcome('emulator', emu),
    'differences:',
    ...diffs.map((d) => `  ${d}`),
  ].join('\n')
}
