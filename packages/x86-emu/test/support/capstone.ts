// capstone-wasm (capstone 5) as a reference disassembler for tests.
//
// The wasm module must be loaded once (loadCapstone) before a handle can be
// opened. capstone throws when it cannot decode the first instruction; the
// wrapper turns that into null.

// @ts-expect-error capstone-wasm's package.json "exports" has no "types" condition, so NodeNext cannot see its typings.
import * as capstoneWasm from 'capstone-wasm'
import { DecodeError, type Instruction } from '../../src/decoder/index.js'

/** The part of capstone-wasm's API used here (see node_modules/capstone-wasm/dist/index.d.ts). */
interface CapstoneModule {
  loadCapstone(): Promise<void>
  Const: { CS_ARCH_X86: number; CS_MODE_64: number }
  Capstone: {
    new (
      arch: number,
      mode: number,
    ): {
      disasm(
        data: Uint8Array,
        options?: { address?: number | bigint; count?: number },
      ): { address: number | bigint; size: number; mnemonic: string; opStr: string }[]
      close(): void
    }
    version(): { major: number; minor: number }
  }
}
const { Capstone, Const, loadCapstone } = capstoneWasm as CapstoneModule

export interface CsInsn {
  address: number
  size: number
  mnemonic: string
  opStr: string
}

export interface CapstoneX64 {
  /** The first instruction of `bytes`, or null when capstone rejects it. */
  one(bytes: Uint8Array, address?: number): CsInsn | null
  /** Instructions from the start of `bytes` until the first one capstone rejects or that is cut off. */
  many(bytes: Uint8Array, address?: number): CsInsn[]
  close(): void
  version: string
}

function convert(i: { address: number | bigint; size: number; mnemonic: string; opStr: string }): CsInsn {
  return { address: Number(i.address), size: i.size, mnemonic: i.mnemonic, opStr: i.opStr }
}

export async function openCapstone(): Promise<CapstoneX64> {
  await loadCapstone()
  const cs = new Capstone(Const.CS_ARCH_X86, Const.CS_MODE_64)
  const v = Capstone.version()
  // capstone-wasm's disasm wants a non-negative address; kernel addresses are negative linear numbers.
  const addr = (a: number) => (a < 0 ? BigInt.asUintN(64, BigInt(a)) : a)
  return {
    version: `${v.major}.${v.minor}`,
    one(bytes, address = 0) {
      try {
        const r = cs.disasm(bytes, { address: addr(address), count: 1 })
        return r.length > 0 ? convert(r[0]) : null
      } catch {
        return null
      }
    },
    many(bytes, address = 0) {
      try {
        return cs.disasm(bytes, { address: addr(address), count: 0 }).map(convert)
      } catch {
        return []
      }
    },
    close() {
      cs.close()
    },
  }
}

// ---------------------------------------------------------------------------
// Known disagreements between capstone 5 and the decoder (which follows the
// Intel SDM). Each entry names one capstone behaviour and checks it narrowly:
// most re-decode a repaired copy of the bytes and require both sides to agree
// on it, so an entry cannot hide an unrelated length bug.

export type Decoded = Instruction | DecodeError

export interface Disagreement {
  bytes: Uint8Array
  ours: Decoded
  cs: CsInsn | null
  decode(bytes: Uint8Array): Decoded
  capstone: CapstoneX64
}

export interface AllowEntry {
  id: string
  reason: string
  /** The disagreement is exactly this behaviour. */
  matches?(d: Disagreement): boolean
  /**
   * Bytes with this behaviour's trigger removed (a prefix replaced by the
   * null DS prefix, a reserved field fixed). The entry explains the
   * disagreement when the repaired bytes agree (or are explained by another
   * entry) and the repair keeps the length of the side that decoded.
   */
  repair?(d: Disagreement): Uint8Array | null
}

const LEGACY_PREFIXES = new Set([0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3])
const isRex = (b: number) => (b & 0xf0) === 0x40
const isSse = (b: number) => b === 0x66 || b === 0xf2 || b === 0xf3

/** Index of the first byte after the legacy and REX prefixes (capped at 15). */
export function prefixEnd(bytes: Uint8Array): number {
  let i = 0
  while (i < bytes.length && i < 15 && (LEGACY_PREFIXES.has(bytes[i]) || isRex(bytes[i]))) i++
  return i
}

/** The bytes with the selected legacy prefixes replaced by 3E (a null prefix in 64-bit mode: same length). */
function neutralize(bytes: Uint8Array, which: (b: number) => boolean): Uint8Array | null {
  const end = prefixEnd(bytes)
  let n = 0
  const out = new Uint8Array(bytes)
  for (let i = 0; i < end; i++)
    if (!isRex(bytes[i]) && which(bytes[i])) {
      out[i] = 0x3e
      n++
    }
  return n > 0 ? out : null
}

/** `bytes` completed with zeros to 15 bytes, to see what a truncated instruction decodes to. */
function padded(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.max(15, bytes.length))
  out.set(bytes)
  return out
}

const ok = (d: Decoded): d is Instruction => !(d instanceof DecodeError)
const rejected = (d: Decoded) => d instanceof DecodeError && d.reason === 'invalid'
const agree = (ours: Decoded, cs: CsInsn | null) =>
  ok(ours) ? cs !== null && cs.size === ours.length : cs === null

function escapeAt(bytes: Uint8Array): { kind: 'vex' | 'evex' | 'xop' | 'other'; at: number } {
  const at = prefixEnd(bytes)
  const b = bytes[at]
  if (b === 0xc4 || b === 0xc5) return { kind: 'vex', at }
  if (b === 0x62) return { kind: 'evex', at }
  if (b === 0x8f && at + 1 < bytes.length && (bytes[at + 1] & 0x1f) >= 8) return { kind: 'xop', at }
  return { kind: 'other', at }
}

function effectiveRexW(bytes: Uint8Array): boolean {
  const end = prefixEnd(bytes)
  return end > 0 && isRex(bytes[end - 1]) && (bytes[end - 1] & 8) !== 0
}

/** (encoding, map, mandatory prefix, opcode) forms where capstone is stricter about W or L than the SDM. */
const CAPSTONE_WL_QUIRKS: Record<string, string> = {
  // VEX.W1: the SDM marks these WIG.
  'vex:2:66:06': 'vphsubd',
  'vex:2:66:2b': 'vpackusdw',
  // EVEX.W1: WIG in the SDM.
  'evex:1:66:d1': 'vpsrlw',
  'evex:1:66:e1': 'vpsraw',
  'evex:1:66:f1': 'vpsllw',
  'evex:3:66:0f': 'vpalignr',
  // EVEX scalar forms: the SDM marks them LLIG, capstone wants L'L = 00.
  'evex:1:f3:c2': 'vcmpss',
  'evex:1:f2:c2': 'vcmpsd',
  'evex:2:66:2d': 'vscalefss/sd',
  'evex:2:66:43': 'vgetexpss/sd',
  'evex:2:66:4d': 'vrcp14ss/sd',
  'evex:2:66:4f': 'vrsqrt14ss/sd',
  'evex:2:66:cb': 'vrcp28ss/sd',
  'evex:2:66:cd': 'vrsqrt28ss/sd',
  'evex:2:f2:9b': 'v4fmaddss',
  'evex:2:f2:ab': 'v4fnmaddss',
  'evex:3:66:0a': 'vrndscaless',
  'evex:3:66:0b': 'vrndscalesd',
  'evex:3:66:67': 'vfpclassss/sd',
}
const quirkKey = (i: Instruction) =>
  `${i.encoding}:${i.map}:${i.mandatoryPrefix.toString(16)}:${i.opcode.toString(16).padStart(2, '0')}`

export const CAPSTONE_ALLOW_LIST: AllowEntry[] = [
  {
    id: 'legacy-prefix-before-vex',
    reason:
      'SDM 2.3.2: a 66, F2 or F3 prefix before VEX/EVEX/XOP is #UD (decoder: invalid); capstone ignores it (it does reject F0 and REX there), except that a 66 shrinks the imm32 of XOP map 0A (bextr, lwpins, lwpval) to 16 bits',
    matches: (d) => {
      const e = escapeAt(d.bytes)
      if (!rejected(d.ours) || d.cs === null || e.kind !== 'xop' || (d.bytes[e.at + 1] & 0x1f) !== 0x0a)
        return false
      const fixed = neutralize(d.bytes, isSse)
      let r = fixed && d.decode(fixed)
      if (!r || !d.bytes.subarray(0, e.at).includes(0x66)) return false
      // Cut short inside the imm32: what the decoder reads once the bytes are there.
      if (fixed && !ok(r) && r.reason === 'truncated') r = d.decode(padded(fixed))
      // With the full imm32 the instruction may exceed 15 bytes.
      return ok(r) ? r.length === d.cs.size + 2 : r.reason === 'too-long' && d.cs.size + 2 > 15
    },
    repair: (d) => (escapeAt(d.bytes).kind === 'other' ? null : neutralize(d.bytes, isSse)),
  },
  {
    id: 'lock-not-lockable',
    reason:
      'SDM LOCK: #UD unless the instruction is lockable and its destination is memory; capstone only wants a memory operand (lock add eax, [rax]; lock nop [rax]) and ignores LOCK entirely next to F2/F3',
    repair: (d) => (rejected(d.ours) ? neutralize(d.bytes, (b) => b === 0xf0) : null),
  },
  {
    id: 'prefix-context-fallback',
    reason:
      'with REX.W or 67, capstone falls back to the no-prefix form when an opcode has no 66/F2/F3 form (66 48 0F 77 = emms, F2 48 0F 5B = cvtdq2ps, 67 66 0F AE /4 = xsave), and with both it decodes 0F 38 F8 as movdir64b without its 66; the SDM makes those prefixes #UD (NP) or undefined',
    matches: (d) =>
      rejected(d.ours) &&
      effectiveRexW(d.bytes) &&
      d.bytes.subarray(0, prefixEnd(d.bytes)).includes(0x67) &&
      d.cs?.mnemonic === 'movdir64b',
    repair: (d) =>
      rejected(d.ours) && (effectiveRexW(d.bytes) || d.bytes.subarray(0, prefixEnd(d.bytes)).includes(0x67))
        ? neutralize(d.bytes, isSse)
        : null,
  },
  {
    id: 'mandatory-prefix-position',
    reason:
      'capstone takes 66/F2/F3 as mandatory prefixes only right before the opcode or REX (66 36 0F 16 is movlhps, 66 F2 67 0F 58 is rejected, F3 26 66 0F 6C is punpcklqdq) and rejects many instructions carrying both 66 and F2/F3 (66 F2 0F 85 = bnd jne, 66 F3 90 = pause); in the SDM prefix order does not matter, F2/F3 take precedence over 66 and 66 is ignored on near branches',
    matches: (d) => {
      // Put 66 then F2/F3 right before the opcode (and REX); capstone must then agree with the decoder.
      const end = prefixEnd(d.bytes)
      const pre = [...d.bytes.subarray(0, end)]
      if (!pre.some(isSse)) return false
      const rex = end > 0 && isRex(pre[end - 1]) ? [pre[end - 1]] : []
      const legacy = pre.filter((b) => !isRex(b))
      const order = [
        ...legacy.filter((b) => !isSse(b)),
        ...legacy.filter((b) => b === 0x66),
        ...legacy.filter((b) => b === 0xf2 || b === 0xf3),
        ...rex,
      ]
      if (order.length !== end || order.every((b, i) => b === pre[i])) return false
      const canon = new Uint8Array(d.bytes)
      canon.set(order)
      const ours = d.decode(canon)
      const same = ok(d.ours) ? ok(ours) && ours.length === d.ours.length : !ok(ours)
      return same && agree(ours, d.capstone.one(canon))
    },
    // capstone accepts an instruction with both 66 and F2/F3 once the 66 is gone.
    repair: (d) =>
      ok(d.ours) &&
      d.cs === null &&
      d.ours.encoding === 'legacy' &&
      d.ours.operandSizePrefix &&
      d.ours.rep !== 0
        ? neutralize(d.bytes, (b) => b === 0x66)
        : null,
  },
  {
    id: 'stray-rex',
    reason:
      'SDM 2.2.1: a REX prefix not immediately before the opcode is ignored; capstone lets it change how it reads the other prefixes (66 48 F2 64 0F 7E C0 is movd eax, xmm0 to capstone, which rejects it with a null 3E in place of the 48)',
    matches: (d) => {
      const end = prefixEnd(d.bytes)
      const fixed = new Uint8Array(d.bytes)
      let n = 0
      for (let i = 0; i < end - 1; i++)
        if (isRex(fixed[i])) {
          fixed[i] = 0x3e
          n++
        }
      if (n === 0) return false
      // The decoder must not see the difference; capstone must then agree (or be explained otherwise).
      const ours = d.decode(fixed)
      const same = ok(d.ours) ? ok(ours) && ours.length === d.ours.length : !ok(ours)
      if (!same) return false
      const cs = d.capstone.one(fixed)
      return agree(ours, cs) || explain({ ...d, bytes: fixed, ours, cs }, 1) !== null
    },
  },
  {
    id: 'movsxd-without-rexw',
    reason: 'SDM: 63 /r without REX.W is MOVSXD r32, r/m32 (valid, discouraged); capstone rejects it',
    matches: (d) => d.cs === null && ok(d.ours) && d.ours.map === 0 && d.ours.opcode === 0x63 && !d.ours.rexW,
  },
  {
    id: 'mov-cs-reserved-cr-dr',
    reason:
      'SDM MOV: loading CS (8E /1) and using CR1, CR5-CR7, CR9-CR15 or DR8-DR15 are #UD; capstone decodes them',
    matches: (d) =>
      rejected(d.ours) &&
      d.cs !== null &&
      d.cs.mnemonic === 'mov' &&
      /(^cs,)|\bcr(1|[5-7]|9|1[0-5])\b|\bdr(8|9|1[0-5])\b/.test(d.cs.opStr),
  },
  {
    id: 'ud0-ud1-modrm',
    reason:
      'SDM: UD0 (0F FF /r) and UD1 (0F B9 /r) have a ModRM byte; capstone decodes them as two-byte instructions',
    matches: (d) => {
      if (d.cs === null || (d.cs.mnemonic !== 'ud0' && d.cs.mnemonic !== 'ud1')) return false
      // Cut short after the opcode, the decoder wants the ModRM (and what it implies) capstone does not read.
      const ours = ok(d.ours) || d.ours.reason !== 'truncated' ? d.ours : d.decode(padded(d.bytes))
      return ok(ours) && ours.mnemonic === d.cs.mnemonic && d.cs.size < ours.length
    },
  },
  {
    id: 'jo-jno-66-rel16',
    reason:
      'capstone decodes 66 0F 80 / 66 0F 81 (jo/jno only) with a 16-bit displacement; Intel ignores 66 on near branches in 64-bit mode, as capstone does for the other jcc',
    matches: (d) => {
      // Cut short inside the rel32, the decoder wants the two bytes capstone does not read.
      const ours = ok(d.ours) ? d.ours : d.ours.reason === 'truncated' ? d.decode(padded(d.bytes)) : d.ours
      return (
        ok(ours) &&
        ours.map === 1 &&
        (ours.opcode === 0x80 || ours.opcode === 0x81) &&
        ours.operandSizePrefix &&
        d.cs !== null &&
        d.cs.size === ours.length - 2
      )
    },
  },
  {
    id: 'ret-imm16-66-rexw',
    reason:
      'capstone reads a 4-byte immediate for C2 (ret imm16) when both 66 and REX.W are present; the immediate is always 16 bits',
    matches: (d) => {
      if (
        !ok(d.ours) ||
        d.ours.map !== 0 ||
        d.ours.opcode !== 0xc2 ||
        !d.ours.operandSizePrefix ||
        !d.ours.rexW
      )
        return false
      // When the bytes end inside those 4, capstone rejects the instruction.
      const cs = d.cs ?? d.capstone.one(padded(d.bytes))
      return cs !== null && cs.size === d.ours.length + 2
    },
  },
  {
    id: 'evex-ll-11',
    reason:
      "SDM 2.7: EVEX.L'L = 11 is reserved (#UD) except as a rounding mode; capstone decodes it as 512-bit",
    repair: (d) => {
      const e = escapeAt(d.bytes)
      if (
        !rejected(d.ours) ||
        e.kind !== 'evex' ||
        e.at + 3 >= d.bytes.length ||
        ((d.bytes[e.at + 3] >> 5) & 3) !== 3
      )
        return null
      const out = new Uint8Array(d.bytes)
      out[e.at + 3] &= ~0x20 // L'L = 10
      return out
    },
  },
  {
    id: 'vex-evex-w-l-quirks',
    reason:
      "forms the SDM marks WIG/LIG that capstone accepts only with W0 or L'L = 00 (" +
      Object.values(CAPSTONE_WL_QUIRKS).join(', ') +
      '); and vcvtsi2sd EVEX.W0 {er}, which the SDM does not define but capstone decodes',
    matches: (d) => {
      if (d.cs === null) return ok(d.ours) && quirkKey(d.ours) in CAPSTONE_WL_QUIRKS
      if (!rejected(d.ours) || d.cs.mnemonic !== 'vcvtsi2sd') return false
      const e = escapeAt(d.bytes)
      return e.kind === 'evex' && (d.bytes[e.at + 2] & 0x80) === 0 && (d.bytes[e.at + 3] & 0x10) !== 0
    },
  },
]

/** The allow-list entry explaining a disagreement, or null. */
export function explain(d: Disagreement, depth = 0): AllowEntry | null {
  for (const e of CAPSTONE_ALLOW_LIST) {
    if (e.matches?.(d)) return e
    const bytes = e.repair?.(d)
    if (!bytes) continue
    const ours = d.decode(bytes)
    const cs = d.capstone.one(bytes)
    // The repair must keep the length of the side that decoded the original bytes.
    const kept = ok(d.ours)
      ? ok(ours) && ours.length === d.ours.length
      : d.cs !== null && cs !== null && cs.size === d.cs.size
    if (!kept) continue
    if (agree(ours, cs) || (depth < 3 && explain({ ...d, bytes, ours, cs }, depth + 1))) return e
  }
  return null
}

export type Verdict =
  | { kind: 'same' | 'both-rejected' }
  | { kind: 'allowed'; id: string }
  | { kind: 'unexplained'; message: string }

const hexBytes = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')

/**
 * The decoder's result for `bytes` (at `address`) against capstone's:
 * the same length, both rejected, an allow-listed disagreement, or an
 * unexplained one described with its hex bytes.
 */
export function judge(
  bytes: Uint8Array,
  address: number,
  ours: Decoded,
  capstone: CapstoneX64,
  decode: (bytes: Uint8Array) => Decoded,
): Verdict {
  const cs = capstone.one(bytes, address)
  if (agree(ours, cs)) return { kind: ok(ours) ? 'same' : 'both-rejected' }
  const entry = explain({ bytes, ours, cs, decode, capstone })
  if (entry) return { kind: 'allowed', id: entry.id }
  const mine = ok(ours) ? `${ours.mnemonic} (${ours.length} bytes)` : ours.reason
  const theirs = cs ? `${cs.mnemonic} ${cs.opStr} (${cs.size} bytes)` : 'rejected'
  return { kind: 'unexplained', message: `${hexBytes(bytes)}: decoder ${mine}, capstone ${theirs}` }
}
