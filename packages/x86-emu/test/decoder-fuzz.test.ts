// The decoder on fuzzed byte strings (issue 17): uniformly random strings and
// mutations of the instructions of committed binaries (test/support/fuzz-bytes.ts),
// with a fixed seed. The decoder must never fail with anything but its
// DecodeError, and its length must equal capstone 5's (or both reject),
// except for the explained disagreements of CAPSTONE_ALLOW_LIST. The long
// run (10^6 strings and more) is tools/fuzz/decoder.ts.

import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DecodeError, decode, type Instruction, tryDecode } from '../src/decoder/index.js'
import { type CapstoneX64, type Decoded, judge, openCapstone } from './support/capstone.js'
import { type FuzzCase, fixtureCorpus, fuzzCases, parseHex, SEED_INSTRUCTIONS } from './support/fuzz-bytes.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..')
// DECODER_FUZZ_N / DECODER_FUZZ_SEED widen the search when hunting for new disagreements.
const N = Number(process.env.DECODER_FUZZ_N ?? 100_000)
const SEED = Number(process.env.DECODER_FUZZ_SEED ?? 0x1717_f022)
const ADDRESS = 0x40_1000
const REASONS = new Set(['invalid', 'truncated', 'too-long'])

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')
const decodeAt = (b: Uint8Array): Decoded => tryDecode(b, ADDRESS)

let cs: CapstoneX64
let cases: FuzzCase[]
let corpusSize = 0
beforeAll(async () => {
  cs = await openCapstone()
  const { corpus } = fixtureCorpus(ROOT)
  corpusSize = corpus.length
  const next = fuzzCases(SEED, corpus)
  cases = Array.from({ length: N }, next)
})
afterAll(() => cs?.close())

/** decode() through its documented API: an Instruction, a DecodeError, or a description of anything else thrown. */
function decodeChecked(bytes: Uint8Array): Decoded | string {
  try {
    return decode(bytes, ADDRESS)
  } catch (e) {
    if (e instanceof DecodeError && REASONS.has(e.reason)) return e
    return `${hex(bytes)}: threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`
  }
}

describe('decoder fuzz', () => {
  it("decodes every seed instruction, with capstone's length", () => {
    for (const h of SEED_INSTRUCTIONS) {
      const b = parseHex(h)
      const d = decodeAt(b)
      expect(d instanceof DecodeError ? d.reason : d.length, h).toBe(b.length)
      expect(cs.one(b, ADDRESS)?.size, h).toBe(b.length)
    }
  })

  it(`agrees with capstone on ${N} random and mutated byte strings (seed ${SEED})`, () => {
    const failures: string[] = []
    const verdicts = new Map<string, number>()
    const agreedBy = new Map<string, number>()
    const origins = new Map<string, number>()
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
    for (const { bytes, origin } of cases) {
      const ours = decodeChecked(bytes)
      if (typeof ours === 'string') {
        failures.push(`${ours} (${origin})`)
        continue
      }
      const v = judge(bytes, ADDRESS, ours, cs, decodeAt)
      bump(verdicts, v.kind === 'allowed' ? v.id : v.kind)
      if (v.kind === 'unexplained') failures.push(`${v.message} (${origin})`)
      if (v.kind === 'same') {
        const i = ours as Instruction
        bump(agreedBy, `${i.encoding}/${i.map.toString(16)}`)
        bump(origins, origin.split('+')[0])
      }
    }
    const list = (m: Map<string, number>) => [...m.entries()].map(([k, v]) => `${k}=${v}`).join(' ')
    console.log(`corpus ${corpusSize} forms; verdicts: ${list(verdicts)}`)
    console.log(`same length, by map: ${list(agreedBy)}`)
    console.log(`same length, by first mutation: ${list(origins)}`)
    expect(failures, failures.slice(0, 20).join('\n')).toEqual([])

    // The strings reach every encoding and map with decodable instructions, and every mutation produces some.
    for (const key of [
      'legacy/0',
      'legacy/1',
      'legacy/2',
      'legacy/3',
      'vex/1',
      'vex/2',
      'vex/3',
      'evex/1',
      'evex/2',
    ])
      expect(agreedBy.get(key) ?? 0, key).toBeGreaterThan(N / 1000)
    for (const key of ['evex/3', 'xop/8', 'xop/9', '3dnow/f0f'])
      expect(agreedBy.get(key) ?? 0, key).toBeGreaterThan(0)
    for (const key of [
      'random',
      'bit-flip',
      'byte-set',
      'prefix-insert',
      'prefix-remove',
      'escape-insert',
      'vex-encode',
      'vex-decode',
      'vex-field',
      'truncate',
      'map-splice',
    ])
      expect(origins.get(key) ?? 0, key).toBeGreaterThan(0)
    expect(verdicts.get('same') ?? 0).toBeGreaterThan(N / 3)
  })

  it('decodes an instruction alike from exactly its bytes and at any offset; every shorter cut is truncated', () => {
    const failures: string[] = []
    const junk = Uint8Array.of(0x0f, 0x66, 0xc4)
    for (const { bytes } of cases.slice(0, 20_000)) {
      const d = decodeAt(bytes)
      if (d instanceof DecodeError) {
        // 15 bytes hold any instruction: the decoder can only run out of bytes in a shorter string.
        if (d.reason === 'truncated' && bytes.length >= 15)
          failures.push(`${hex(bytes)}: truncated at 15 bytes`)
        continue
      }
      const n = d.length
      if (n > 15 || n > bytes.length || hex(d.bytes) !== hex(bytes.subarray(0, n)))
        failures.push(`${hex(bytes)}: length ${n}, bytes ${hex(d.bytes)}`)
      const exact = decodeAt(bytes.subarray(0, n))
      if (exact instanceof DecodeError || exact.length !== n || exact.mnemonic !== d.mnemonic)
        failures.push(
          `${hex(bytes)}: its ${n} bytes alone decode to ${exact instanceof DecodeError ? exact.reason : exact.mnemonic}`,
        )
      const buf = new Uint8Array(junk.length + bytes.length)
      buf.set(junk)
      buf.set(bytes, junk.length)
      const shifted = tryDecode(buf, ADDRESS, junk.length)
      if (shifted instanceof DecodeError || shifted.length !== n || hex(shifted.bytes) !== hex(d.bytes))
        failures.push(`${hex(bytes)}: differs at offset ${junk.length}`)
      for (let k = 1; k < n; k++) {
        const cut = decodeAt(bytes.subarray(0, k))
        if (!(cut instanceof DecodeError) || cut.reason !== 'truncated')
          failures.push(
            `${hex(bytes.subarray(0, k))} (first ${k} of ${n} bytes): ${cut instanceof DecodeError ? cut.reason : `decodes as ${cut.mnemonic}`}`,
          )
      }
    }
    expect(failures, failures.slice(0, 20).join('\n')).toEqual([])
  })

  it('answers an offset outside the bytes: past the end is truncated, a non-index a one-line RangeError', () => {
    const b = parseHex('48 89 e5')
    expect(tryDecode(b, ADDRESS, 3)).toMatchObject({ reason: 'truncated' })
    expect(tryDecode(b, ADDRESS, 100)).toMatchObject({ reason: 'truncated' })
    for (const offset of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => tryDecode(b, ADDRESS, offset)).toThrow(
        new RangeError(`decode: offset ${offset} is not an index`),
      )
  })

  it('is deterministic: a seed gives the same strings, another seed others', () => {
    const corpus = SEED_INSTRUCTIONS.map(parseHex)
    const take = (seed: number) => {
      const next = fuzzCases(seed, corpus)
      return Array.from({ length: 200 }, () => hex(next().bytes)).join('|')
    }
    expect(take(SEED)).toBe(take(SEED))
    expect(take(SEED)).not.toBe(take(SEED + 1))
  })
})
