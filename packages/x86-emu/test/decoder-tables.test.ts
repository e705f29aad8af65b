// The opcode tables' leaves are parsed when the decoder first reaches one (tables/spec.ts):
// every one is parsed here, so a bad table string fails this test, not the program that
// happens to meet it.

import { expect, it } from 'vitest'
import { decode } from '../src/decoder/index.js'
import { A, checkLeaves, leaf, parsedLeaf } from '../src/decoder/tables/spec.js'

it('every leaf of the opcode tables parses', () => {
  expect(checkLeaves()).toBeGreaterThan(1000)
})

it('a leaf is parsed on first use, in place: one object per text, as the prefix selectors compare them', () => {
  const l = leaf('adc Eb,Gb | lock')
  expect(leaf('adc Eb,Gb | lock')).toBe(l)
  expect(parsedLeaf(l)).toBe(l)
  expect(l.parsed).toBe(true)
  expect(l.mn).toBe('adc')
  expect(l.ops).toHaveLength(2)
  expect(l.attr & (A.Lock | A.ModRM | A.Byte)).toBe(A.Lock | A.ModRM | A.Byte)
  // The decoder reaches the same leaf through the 1-byte map (10 /r).
  expect(decode(new Uint8Array([0x10, 0xc8]), 0).mnemonic).toBe('adc')
})

it('a bad leaf text throws when it is parsed', () => {
  expect(() => parsedLeaf(leaf('adc Eb,Gq7'))).toThrow(/opcode table: bad size 'q7'/)
})
