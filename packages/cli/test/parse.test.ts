import { describe, expect, it } from 'vitest'
import { CliError } from '../src/cli-error.js'
import { parseAddress } from '../src/parse-address.js'
import { parseHexBytes } from '../src/parse-hex.js'

const bytes = (...args: string[]) => [...parseHexBytes(args)]

describe('parseHexBytes', () => {
  it('accepts the spellings people paste', () => {
    expect(bytes('cc')).toEqual([0xcc])
    expect(bytes('55 48 89 e5')).toEqual([0x55, 0x48, 0x89, 0xe5])
    expect(bytes('55', '4889E5')).toEqual([0x55, 0x48, 0x89, 0xe5])
    expect(bytes('0x55', '0X4889e5')).toEqual([0x55, 0x48, 0x89, 0xe5])
    expect(bytes('\\x48\\x89\\xe5')).toEqual([0x48, 0x89, 0xe5])
    expect(bytes('cc,90, c3')).toEqual([0xcc, 0x90, 0xc3])
  })

  it.each([['zz'], ['4889e'], ['0x'], ['\\x4'], ['48-89']])('rejects %j with a CliError (exit 2)', (text) => {
    expect(() => parseHexBytes([text])).toThrow(CliError)
    try {
      parseHexBytes([text])
    } catch (e) {
      expect((e as CliError).exitCode).toBe(2)
    }
  })

  it('rejects an empty byte string', () => {
    expect(() => parseHexBytes(['', '  '])).toThrow(/no bytes/)
  })
})

describe('parseAddress', () => {
  it('maps kernel addresses to negative linear numbers', () => {
    expect(parseAddress('0xffffffff81000000')).toBe(-0x7f000000)
    expect(parseAddress('18446744071578845184')).toBe(-0x7f000000)
    expect(parseAddress('-0x7f000000')).toBe(-0x7f000000)
  })

  it('keeps user addresses positive', () => {
    expect(parseAddress('0x401000')).toBe(0x401000)
    expect(parseAddress('0')).toBe(0)
    expect(parseAddress('0x00007fffffffffff')).toBe(0x7fff_ffff_ffff)
  })

  it.each([['0x800000000000'], ['0xffff7fffffffffff'], ['0x10000000000000000'], ['main'], ['']])(
    'rejects %j',
    (text) => {
      expect(() => parseAddress(text)).toThrow(CliError)
    },
  )
})
