// Seeded byte strings for fuzzing the decoder (issue 17): uniformly random
// strings, and mutations of real instructions: bit flips, legacy/REX
// prefixes inserted or removed, VEX/EVEX/XOP escapes inserted or removed (an
// instruction re-encoded with the other escape), truncation, and the opcode
// map spliced (none, 0F, 0F38, 0F3A, 0F0F, or another VEX map).
//
// Everything is a function of the seed and the corpus: the same seed gives
// the same strings on every machine.

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DecodeError, tryDecode } from '../../src/decoder/index.js'
import { executableRegions } from './elf-text.js'

/** splitmix32 (Steele, Lea & Flood): a fixed seed gives the same stream everywhere. */
export class FuzzRng {
  private s: number
  constructor(seed: number) {
    this.s = seed >>> 0
  }
  u32(): number {
    this.s = (this.s + 0x9e3779b9) | 0
    let z = this.s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return (z ^ (z >>> 16)) >>> 0
  }
  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor((this.u32() / 0x1_0000_0000) * n)
  }
  byte(): number {
    return this.u32() & 0xff
  }
  chance(percent: number): boolean {
    return this.below(100) < percent
  }
  pick<T>(a: readonly T[]): T {
    return a[this.below(a.length)]
  }
}

/** The prefixes the mutations insert: legacy (operand/address size, REP, LOCK, segments) and REX. */
export const LEGACY_PREFIXES = [0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65] as const
const PREFIX_SET = new Set<number>(LEGACY_PREFIXES)
const isRex = (b: number) => (b & 0xf0) === 0x40
const isPrefix = (b: number) => PREFIX_SET.has(b) || isRex(b)

/**
 * Instructions of every encoding that ordinary binaries rarely contain (x87,
 * 3DNow!, XOP, EVEX masking, broadcast and rounding, VSIB, moffs, system
 * instructions): each decodes, and capstone agrees on its length.
 */
export const SEED_INSTRUCTIONS: readonly string[] = [
  // x87
  'd9 c0',
  'dd 04 24',
  'df 2c 24',
  'de c9',
  'db e3',
  'dd 7c 24 08',
  'd9 7c 24 fe',
  // 3DNow!
  '0f 0f c1 9e',
  '0f 0f 44 24 08 b4',
  // XOP: imm8 map 8, map 9, imm32 map 0A
  '8f e8 78 c0 c1 05',
  '8f e8 40 a2 c2 30',
  '8f e9 78 90 c1',
  '8f e9 78 c1 c0',
  '8f ea 78 10 c0 04 00 00 00',
  // VEX
  'c5 f9 6f 04 24',
  'c5 fd 6f c1',
  'c4 e2 7d 18 06',
  'c4 e3 7d 18 c1 01',
  'c4 e2 f9 92 04 48',
  'c4 e2 70 f2 c2',
  'c4 e2 fb f7 c1',
  'c4 e3 fb f0 c1 05',
  'c5 f8 77',
  'c5 fc 77',
  'c4 e1 f9 7e c0',
  'c5 f8 ae 14 24',
  'c5 f8 90 c1',
  'c4 e1 fb 93 c1',
  // EVEX
  '62 f1 7c 48 10 04 24',
  '62 f1 fd 48 6f 44 24 01',
  '62 f1 7c 58 58 40 01',
  '62 f1 7c 18 58 c1',
  '62 f2 7d 49 90 04 88',
  '62 f1 fe 48 6f 07',
  '62 b1 7c 48 28 c8',
  '62 f2 7d 48 7c c0',
  '62 e1 7e 08 7f 00',
  '62 f3 7d 48 1e c1 00',
  '62 f1 7d c9 fe c1',
  // legacy: immediates, moffs, far and system forms
  'a1 88 77 66 55 44 33 22 11',
  '67 a1 44 33 22 11',
  '48 b8 88 77 66 55 44 33 22 11',
  '66 c7 00 34 12',
  '48 81 84 24 00 01 00 00 78 56 34 12',
  'c8 10 00 01',
  'ca 08 00',
  'ff 2c 24',
  '0f 20 c0',
  '0f 23 f8',
  '0f 01 f8',
  '48 cf',
  'f3 48 a5',
  'f0 48 0f c7 0e',
  'f0 0f b1 0a',
  '0f 01 d0',
  '0f ae f8',
  '66 0f 3a 0f c1 08',
  '66 0f 78 c0 04 08',
  'f2 0f 79 c1',
  '0f c7 f0',
  'f3 0f 1e fa',
  '0f 0b',
  'e3 fe',
  '66 0f 73 d8 04',
  'f3 0f b8 c1',
  '8c d8',
  'f3 48 0f ae c0',
  '0f 18 00',
  '66 2e 0f 1f 84 00 00 00 00 00',
  '0f 38 f0 06',
  '66 0f 38 00 04 25 00 10 00 00',
  '41 0f b6 44 8d 80',
  'e8 00 00 00 00',
  '0f 85 00 01 00 00',
  'cd 80',
  '6a ff',
]

export function parseHex(s: string): Uint8Array {
  return Uint8Array.from(s.split(/\s+/).filter(Boolean), (x) => Number.parseInt(x, 16))
}

/**
 * Distinct instruction forms of some machine code (decoded by linear sweep,
 * skipping a byte where the decoder fails), at most `perForm` samples each:
 * a few thousand `mov`s would otherwise drown the rare forms.
 */
export function instructionCorpus(code: Iterable<Uint8Array>, perForm = 3): Uint8Array[] {
  const seen = new Map<string, number>()
  const out: Uint8Array[] = []
  for (const bytes of code) {
    let off = 0
    while (off < bytes.length) {
      const d = tryDecode(bytes, 0, off)
      if (d instanceof DecodeError) {
        off++
        continue
      }
      const prefixes = `${d.rex}:${d.operandSizePrefix}:${d.addressSizePrefix}:${d.rep}:${d.lock}:${d.segment}`
      const form = `${d.encoding}:${d.map}:${d.opcode}:${d.mandatoryPrefix}:${d.mod}:${d.reg & 7}:${prefixes}`
      const n = seen.get(form) ?? 0
      if (n < perForm) {
        seen.set(form, n + 1)
        out.push(d.bytes)
      }
      off += d.length
    }
  }
  return out
}

/**
 * Committed binaries the corpus is taken from, relative to the repository
 * root: the guest kernel (system instructions), a static glibc program
 * (its AVX2 and AVX-512 string functions), musl programs built with -O3
 * (SSE, x87) and the bare workloads.
 */
export const CORPUS_FILES = [
  'packages/kernel/guest/vmlinux',
  'packages/x86-emu/native/workloads/fpmix-native',
  'packages/x86-emu/native/workloads/intmix-bare',
  'packages/x86-emu/native/workloads/selfcheck-bare',
  'packages/kernel/fixtures/bin/floats-musl-O3',
  'packages/kernel/fixtures/bin/compute-musl-O3',
]

/** The instruction corpus of those of CORPUS_FILES that exist under `root`. */
export function fixtureCorpus(root: string): { files: string[]; corpus: Uint8Array[] } {
  const files = CORPUS_FILES.filter((f) => existsSync(join(root, f)))
  const regions = files.flatMap((f) => executableRegions(new Uint8Array(readFileSync(join(root, f)))))
  return { files, corpus: instructionCorpus(regions.map((r) => r.bytes)) }
}

type EscapeKind = 'none' | '0f' | '0f38' | '0f3a' | '3dnow' | 'vex2' | 'vex3' | 'evex' | 'xop'

/** An instruction cut at its structure: prefixes, escape bytes, then opcode and the rest. */
interface Shape {
  prefixes: number[]
  kind: EscapeKind
  escape: number[]
  rest: number[]
}

function shape(b: readonly number[]): Shape {
  let i = 0
  while (i < b.length && i < 14 && isPrefix(b[i])) i++
  const prefixes = b.slice(0, i)
  const at = (k: number) => (i + k < b.length ? b[i + k] : -1)
  let kind: EscapeKind = 'none'
  let n = 0
  if (at(0) === 0x0f) {
    const b1 = at(1)
    ;[kind, n] =
      b1 === 0x38 ? ['0f38', 2] : b1 === 0x3a ? ['0f3a', 2] : b1 === 0x0f ? ['3dnow', 2] : ['0f', 1]
  } else if (at(0) === 0xc5) [kind, n] = ['vex2', 2]
  else if (at(0) === 0xc4) [kind, n] = ['vex3', 3]
  else if (at(0) === 0x62) [kind, n] = ['evex', 4]
  else if (at(0) === 0x8f && (at(1) & 0x1f) >= 8) [kind, n] = ['xop', 3]
  n = Math.min(n, b.length - i)
  return { prefixes, kind, escape: b.slice(i, i + n), rest: b.slice(i + n) }
}

const assemble = (s: Shape) => [...s.prefixes, ...s.escape, ...s.rest]

/** Fields common to legacy and VEX-family encodings, to move an instruction between them. */
interface Fields {
  map: number // 0 none, 1 0F, 2 0F38, 3 0F3A (XOP: 8-10)
  pp: number // 0 none, 1 66, 2 F3, 3 F2
  r: number
  x: number
  b: number
  w: number
  other: number[] // legacy prefixes other than 66/F2/F3 and REX
}

const PP_PREFIX = [0, 0x66, 0xf3, 0xf2]

function legacyFields(s: Shape): Fields {
  let pp = 0
  let rex = 0
  const other: number[] = []
  for (const p of s.prefixes) {
    if (isRex(p)) rex = p
    else if (p === 0x66) pp = pp === 0 ? 1 : pp
    else if (p === 0xf3) pp = 2
    else if (p === 0xf2) pp = 3
    else other.push(p)
  }
  const map = s.kind === '0f' ? 1 : s.kind === '0f38' ? 2 : s.kind === '0f3a' ? 3 : 0
  return { map, pp, r: (rex >> 2) & 1, x: (rex >> 1) & 1, b: rex & 1, w: (rex >> 3) & 1, other }
}

function vexFields(s: Shape): Fields | null {
  const e = s.escape
  const other = s.prefixes.filter((p) => !isRex(p) && p !== 0x66 && p !== 0xf2 && p !== 0xf3)
  if (s.kind === 'vex2' && e.length === 2)
    return { map: 1, pp: e[1] & 3, r: (~e[1] >> 7) & 1, x: 0, b: 0, w: 0, other }
  if ((s.kind === 'vex3' || s.kind === 'xop') && e.length === 3)
    return {
      map: e[1] & 0x1f,
      pp: e[2] & 3,
      r: (~e[1] >> 7) & 1,
      x: (~e[1] >> 6) & 1,
      b: (~e[1] >> 5) & 1,
      w: e[2] >> 7,
      other,
    }
  if (s.kind === 'evex' && e.length === 4)
    return {
      map: e[1] & 3,
      pp: e[2] & 3,
      r: (~e[1] >> 7) & 1,
      x: (~e[1] >> 6) & 1,
      b: (~e[1] >> 5) & 1,
      w: e[2] >> 7,
      other,
    }
  return null
}

const LEGACY_ESCAPES: Record<number, number[]> = { 0: [], 1: [0x0f], 2: [0x0f, 0x38], 3: [0x0f, 0x3a] }

export type MutationName =
  | 'bit-flip'
  | 'byte-set'
  | 'prefix-insert'
  | 'prefix-remove'
  | 'escape-insert'
  | 'vex-encode'
  | 'vex-decode'
  | 'vex-field'
  | 'truncate'
  | 'map-splice'

/** Bytes the byte-set mutation favours: escapes, prefixes, ModRM/SIB edges. */
const INTERESTING = [
  0x00, 0xff, 0x0f, 0x38, 0x3a, 0x66, 0xf2, 0xf3, 0xc4, 0xc5, 0x62, 0x8f, 0x04, 0x05, 0x44, 0x84, 0xc0,
]

class Mutator {
  constructor(readonly rng: FuzzRng) {}

  /** One mutation of `b`; `truncated` says the result must not be padded again. */
  apply(name: MutationName, b: number[]): { bytes: number[]; truncated?: boolean } {
    const r = this.rng
    switch (name) {
      case 'bit-flip': {
        const out = [...b]
        for (let n = 1 + r.below(3); n > 0; n--) out[r.below(out.length)] ^= 1 << r.below(8)
        return { bytes: out }
      }
      case 'byte-set': {
        const out = [...b]
        out[r.below(out.length)] = r.chance(50) ? r.pick(INTERESTING) : r.byte()
        return { bytes: out }
      }
      case 'prefix-insert': {
        const s = shape(b)
        for (let n = 1 + r.below(3); n > 0; n--) {
          // Favour the prefixes that change lengths: REX.W, 66 (operand size) and 67 (address size).
          const x = r.below(100)
          const p = x < 35 ? 0x40 | r.below(16) : x < 60 ? 0x66 : x < 70 ? 0x67 : r.pick(LEGACY_PREFIXES)
          // Mostly right before the escape (where REX counts), else anywhere among the prefixes.
          const at = r.chance(60) ? s.prefixes.length : r.below(s.prefixes.length + 1)
          s.prefixes.splice(at, 0, p)
        }
        return { bytes: assemble(s) }
      }
      case 'prefix-remove': {
        const s = shape(b)
        if (s.prefixes.length === 0) return { bytes: b.slice(1) }
        s.prefixes.splice(r.below(s.prefixes.length), 1)
        return { bytes: assemble(s) }
      }
      case 'escape-insert': {
        // A raw VEX/EVEX/XOP escape with a random payload in front of the opcode.
        const s = shape(b)
        const c = r.pick([0xc4, 0xc5, 0x62, 0x8f])
        const payload = c === 0xc5 ? 1 : c === 0x62 ? 3 : 2
        const e = [c]
        for (let i = 0; i < payload; i++) e.push(r.byte())
        if (c === 0x8f && (e[1] & 0x1f) < 8) e[1] |= 8
        s.prefixes.push(...e)
        return { bytes: assemble(s) }
      }
      case 'vex-encode': {
        const s = shape(b)
        if (s.kind !== 'none' && s.kind !== '0f' && s.kind !== '0f38' && s.kind !== '0f3a')
          return { bytes: b }
        return { bytes: [...this.vexEncode(legacyFields(s)), ...s.rest] }
      }
      case 'vex-decode': {
        const s = shape(b)
        const f = vexFields(s)
        if (f === null) return { bytes: b }
        const pre = [...f.other]
        if (f.pp) pre.push(PP_PREFIX[f.pp])
        const rex = 0x40 | (f.w << 3) | (f.r << 2) | (f.x << 1) | f.b
        if (rex !== 0x40 || r.chance(20)) pre.push(rex)
        return { bytes: [...pre, ...(LEGACY_ESCAPES[f.map & 3] ?? []), ...s.rest] }
      }
      case 'vex-field': {
        const s = shape(b)
        if (
          s.escape.length < 2 ||
          (s.kind !== 'vex2' && s.kind !== 'vex3' && s.kind !== 'evex' && s.kind !== 'xop')
        )
          return this.apply('bit-flip', b)
        const e = [...s.escape]
        e[1 + r.below(e.length - 1)] ^= 1 << r.below(8)
        return { bytes: [...s.prefixes, ...e, ...s.rest] }
      }
      case 'truncate':
        return { bytes: b.slice(0, Math.max(1, r.below(b.length))), truncated: true }
      case 'map-splice': {
        const s = shape(b)
        const f = vexFields(s)
        if (f !== null) {
          // Another map select value: mostly a defined one.
          const e = [...s.escape]
          if (s.kind === 'evex') e[1] = (e[1] & ~7) | r.below(8)
          else if (s.kind === 'vex3') e[1] = (e[1] & ~0x1f) | (r.chance(80) ? 1 + r.below(3) : r.below(32))
          else if (s.kind === 'xop') e[1] = (e[1] & ~0x1f) | (r.chance(80) ? 8 + r.below(3) : r.below(32))
          else
            return {
              bytes: [...s.prefixes, 0xc4, (e[1] & 0x80) | 0x60 | (1 + r.below(3)), e[1] & 0x7f, ...s.rest],
            }
          return { bytes: [...s.prefixes, ...e, ...s.rest] }
        }
        const escapes = [[], [0x0f], [0x0f, 0x38], [0x0f, 0x3a], [0x0f, 0x0f]]
        return { bytes: [...s.prefixes, ...r.pick(escapes), ...s.rest] }
      }
    }
  }

  /** A VEX (2 or 3 byte), EVEX or XOP escape carrying `f`, with random vvvv, L and EVEX fields. */
  vexEncode(f: Fields): number[] {
    const r = this.rng
    const map = f.map === 0 ? 1 + r.below(3) : f.map
    const vvvv = r.chance(60) ? 0 : r.below(16) // stored inverted
    const l = r.below(2)
    const kind = r.below(10)
    const rxb = ((f.r ^ 1) << 7) | ((f.x ^ 1) << 6) | ((f.b ^ 1) << 5)
    const pre = [...f.other]
    if (kind < 3 && map === 1 && !f.x && !f.b && !f.w)
      return [...pre, 0xc5, ((f.r ^ 1) << 7) | ((vvvv ^ 15) << 3) | (l << 2) | f.pp]
    if (kind < 6) return [...pre, 0xc4, rxb | map, (f.w << 7) | ((vvvv ^ 15) << 3) | (l << 2) | f.pp]
    if (kind < 9) {
      const p0 = rxb | (r.chance(90) ? 0x10 : 0) | map
      const p1 = (f.w << 7) | ((vvvv ^ 15) << 3) | 4 | f.pp
      const ll = r.chance(90) ? r.below(3) : 3
      const p2 =
        (r.chance(10) ? 0x80 : 0) |
        (ll << 5) |
        (r.chance(15) ? 0x10 : 0) |
        (r.chance(90) ? 8 : 0) |
        (r.chance(50) ? r.below(8) : 0)
      return [...pre, 0x62, p0, p1, p2]
    }
    return [...pre, 0x8f, rxb | (8 + r.below(3)), (f.w << 7) | ((vvvv ^ 15) << 3) | (l << 2)]
  }
}

/** The mutations, with the weight each is picked with. */
const MUTATIONS: [MutationName, number][] = [
  ['bit-flip', 20],
  ['byte-set', 10],
  ['prefix-insert', 15],
  ['prefix-remove', 6],
  ['escape-insert', 5],
  ['vex-encode', 12],
  ['vex-decode', 6],
  ['vex-field', 8],
  ['truncate', 5],
  ['map-splice', 10],
]
const MUTATION_TOTAL = MUTATIONS.reduce((a, [, w]) => a + w, 0)

/**
 * Every opcode of every map, as an escape and opcode with nothing after them
 * (the random tail supplies ModRM and the rest): a VEX, EVEX or XOP header
 * with 66 as pp, W0, L0 (EVEX L'L = 10) and no vvvv register.
 */
function opcodeStubs(): Map<string, Uint8Array[]> {
  const out = new Map<string, Uint8Array[]>()
  const add = (key: string, head: number[], tail: number[] = []) =>
    out.set(
      key,
      Array.from({ length: 256 }, (_, op) => Uint8Array.from([...head, op, ...tail])),
    )
  add('legacy/0', [])
  add('legacy/1', [0x0f])
  add('legacy/2', [0x0f, 0x38])
  add('legacy/3', [0x0f, 0x3a])
  for (let map = 1; map <= 3; map++) {
    add(`vex/${map}`, [0xc4, 0xe0 | map, 0x79])
    add(`evex/${map}`, [0x62, 0xf0 | map, 0x7d, 0x48])
  }
  for (let map = 8; map <= 10; map++) add(`xop/${map}`, [0x8f, 0xe0 | map, 0x78])
  // 3DNow!: the opcode is the byte after ModRM.
  out.set(
    '3dnow/3855',
    Array.from({ length: 256 }, (_, op) => Uint8Array.of(0x0f, 0x0f, 0xc1, op)),
  )
  return out
}

/** Groups of mutation bases, then opcodes in a group, then instructions with that opcode. */
type Pool = Uint8Array[][][]

/**
 * Mutation bases grouped by encoding and map, then by opcode: a base is an
 * encoding/map group picked uniformly (the one-byte and 0F maps, where most
 * forms and most prefix interplay are, count three and two times), an opcode
 * in it, then one of the instructions with that opcode. Ordinary code is
 * mostly a few one-byte-map opcodes; this way every opcode the corpus has is
 * mutated about as often.
 */
function opcodePool(entries: Iterable<[string, number, Uint8Array]>): Pool {
  const groups = new Map<string, Map<number, Uint8Array[]>>()
  for (const [key, opcode, b] of entries) {
    let g = groups.get(key)
    if (!g) groups.set(key, (g = new Map()))
    const list = g.get(opcode)
    if (list) list.push(b)
    else g.set(opcode, [b])
  }
  const pool = [...groups.values()].map((g) => [...g.values()])
  for (const [key, times] of [
    ['legacy/0', 2],
    ['legacy/1', 1],
  ] as const) {
    const g = groups.get(key)
    for (let i = 0; g && i < times; i++) pool.push([...g.values()])
  }
  return pool
}

function* decodedEntries(instructions: readonly Uint8Array[]): Generator<[string, number, Uint8Array]> {
  for (const b of instructions) {
    const d = tryDecode(b, 0)
    if (d instanceof DecodeError) yield ['other', 0, b]
    else yield [`${d.encoding}/${d.map}`, d.opcode, b]
  }
}

function* stubEntries(): Generator<[string, number, Uint8Array]> {
  for (const [key, stubs] of opcodeStubs())
    for (let op = 0; op < stubs.length; op++) yield [key, op, stubs[op]]
}

export interface FuzzCase {
  bytes: Uint8Array
  /** 'random', or the mutations applied to a corpus instruction, in order. */
  origin: string
}

export interface FuzzOptions {
  /** Percentage of strings that are uniformly random (the rest are mutations). */
  randomPercent?: number
  /** Longest string produced (the decoder's limit is 15; longer strings check 'too-long'). */
  maxLength?: number
}

/**
 * An endless, deterministic stream of fuzz strings from `seed` and `corpus`
 * (real instructions; SEED_INSTRUCTIONS are always added).
 */
export function fuzzCases(
  seed: number,
  corpus: readonly Uint8Array[],
  opts: FuzzOptions = {},
): () => FuzzCase {
  const r = new FuzzRng(seed)
  const m = new Mutator(r)
  const randomPercent = opts.randomPercent ?? 15
  const maxLength = opts.maxLength ?? 18
  // Mostly real instructions; the rest every opcode of every map, the corpus has it or not.
  const real = opcodePool(decodedEntries([...SEED_INSTRUCTIONS.map(parseHex), ...corpus]))
  const stubs = opcodePool(stubEntries())
  const pickMutation = (): MutationName => {
    let x = r.below(MUTATION_TOTAL)
    for (const [name, w] of MUTATIONS) {
      if (x < w) return name
      x -= w
    }
    return 'bit-flip'
  }
  return () => {
    if (r.chance(randomPercent)) {
      const bytes = new Uint8Array(1 + r.below(15))
      for (let i = 0; i < bytes.length; i++) bytes[i] = r.byte()
      return { bytes, origin: 'random' }
    }
    let b = [...r.pick(r.pick(r.pick(r.chance(75) ? real : stubs)))]
    const names: MutationName[] = []
    let truncated = false
    // One to three stacked mutations (mostly one).
    const n = r.chance(60) ? 1 : r.chance(70) ? 2 : 3
    for (let i = 0; i < n && b.length > 0; i++) {
      const name = pickMutation()
      const res = m.apply(name, b)
      names.push(name)
      b = res.bytes
      truncated ||= res.truncated === true
    }
    // Random tail bytes: a mutation may make the instruction longer (a SIB, a displacement, an immediate).
    if (!truncated && r.chance(85)) while (b.length < 15) b.push(r.byte())
    if (b.length === 0) b.push(r.byte())
    return { bytes: Uint8Array.from(b.slice(0, maxLength)), origin: names.join('+') }
  }
}
