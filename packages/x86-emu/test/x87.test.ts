// Hand-computed x87 checks (the differential test compares against the host
// CPU; these pin down the expected values explicitly). Memory operands are
// [rbx+disp8] with rbx = the data page.

import { describe, expect, it } from 'vitest'
import { FLAT_DATA_ADDRESS, type FlatOutcome, runFlat } from './support/flat.js'

const m = (op: number, r: number, disp: number) => [op, 0x43 | (r << 3), disp]
const FLD1 = [0xd9, 0xe8]
const fildD = (d: number) => m(0xdb, 0, d)
const fildQ = (d: number) => m(0xdf, 5, d)
const fildW = (d: number) => m(0xdf, 0, d)
const fistpD = (d: number) => m(0xdb, 3, d)
const fistpQ = (d: number) => m(0xdf, 7, d)
const fistpW = (d: number) => m(0xdf, 3, d)
const fstpT = (d: number) => m(0xdb, 7, d)
const fldT = (d: number) => m(0xdb, 5, d)
const fstpL = (d: number) => m(0xdd, 3, d)
const fldL = (d: number) => m(0xdd, 0, d)
const fldcw = (d: number) => m(0xd9, 5, d)
const fnstswM = (d: number) => m(0xdd, 7, d)
const FNSTSW_AX = [0xdf, 0xe0]
const FDIVP = [0xde, 0xf9] // fdivp st(1), st0: st1 = st1 / st0
const FADDP = [0xde, 0xc1]
const FCOMIP = [0xdf, 0xf1]
const FUCOMIP = [0xdf, 0xe9]
const FXAM = [0xd9, 0xe5]
const FSTP_ST0 = [0xdd, 0xd8]

function run(
  code: number[][],
  init: (v: DataView) => void = () => {},
  jit = Number.POSITIVE_INFINITY,
): FlatOutcome {
  const data = new Uint8Array(4096)
  init(new DataView(data.buffer))
  const gpr = Array.from({ length: 16 }, (_, i) => (i === 3 ? FLAT_DATA_ADDRESS : 0n))
  const r = runFlat({ code: new Uint8Array(code.flat()), gpr, rflags: 2n, data }, 10_000, jit)
  expect(r.fault).toBeNull()
  return r
}
const view = (r: FlatOutcome) => new DataView(r.data.buffer, r.data.byteOffset)
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')

describe('x87', () => {
  for (const jit of [Number.POSITIVE_INFINITY, 0]) {
    const mode = jit === 0 ? 'block compiler' : 'interpreter'
    it(`1/3 in extended precision, stored as m80 and m64 (${mode})`, () => {
      const r = run(
        [FLD1, fildD(0), FDIVP, [0xd9, 0xc0], fstpT(16), fnstswM(32), fstpL(48), fnstswM(34)],
        (v) => v.setInt32(0, 3, true),
        jit,
      )
      // 1/3 = 0x3ffd 0xaaaaaaaaaaaaaaab (rounded up); the m80 store is exact (C1 clear).
      expect(hex(r.data.subarray(16, 26))).toBe('abaaaaaaaaaaaaaafd3f')
      // After fstp m80 one value is left: TOP = 7, PE from the division.
      expect(view(r).getUint16(32, true)).toBe(0x3820)
      // To double: 0x3fd5555555555555 (rounded down: C1 clear), stack empty again (TOP 0).
      expect(view(r).getBigUint64(48, true)).toBe(0x3fd5555555555555n)
      expect(view(r).getUint16(34, true)).toBe(0x0020)
    })
  }

  it('fild/fistp round trips m16/m32/m64', () => {
    const r = run(
      [fildW(0), fistpW(64), fildD(8), fistpD(72), fildQ(16), fistpQ(80), fildQ(24), fistpQ(88)],
      (v) => {
        v.setInt16(0, -32768, true)
        v.setInt32(8, -123456789, true)
        v.setBigInt64(16, 0x7fffffffffffffffn, true)
        v.setBigInt64(24, -(1n << 63n), true)
      },
    )
    const v = view(r)
    expect(v.getInt16(64, true)).toBe(-32768)
    expect(v.getInt32(72, true)).toBe(-123456789)
    expect(v.getBigInt64(80, true)).toBe(0x7fffffffffffffffn)
    expect(v.getBigInt64(88, true)).toBe(-(1n << 63n))
  })

  it('fistp overflow stores the integer indefinite and sets IE', () => {
    const r = run([fildD(0), fistpW(64), fnstswM(32)], (v) => v.setInt32(0, 40000, true))
    expect(view(r).getUint16(64, true)).toBe(0x8000)
    expect(view(r).getUint16(32, true) & 0x3f).toBe(1)
  })

  it('fistp of 2.5 and -2.5 under each rounding control', () => {
    const expected = [
      [2, -2],
      [2, -3],
      [3, -2],
      [2, -2],
    ]
    for (let rc = 0; rc < 4; rc++) {
      const r = run([fldcw(0), fldL(8), fistpD(64), fldL(16), fistpD(68)], (v) => {
        v.setUint16(0, 0x037f | (rc << 10), true)
        v.setFloat64(8, 2.5, true)
        v.setFloat64(16, -2.5, true)
      })
      expect([view(r).getInt32(64, true), view(r).getInt32(68, true)]).toEqual(expected[rc])
    }
  })

  it('precision control 24 bits rounds fadd results', () => {
    // 1 + 2^-30: exact with PC=64, 1.0 (inexact) with PC=24.
    for (const [cw, sig, pe] of [
      [0x037f, 0x8000000200000000n, 0],
      [0x007f, 0x8000000000000000n, 0x20],
    ] as const) {
      const r = run([fldcw(0), fldL(8), fldL(16), FADDP, fnstswM(32), fstpT(48)], (v) => {
        v.setUint16(0, cw, true)
        v.setFloat64(8, 1, true)
        v.setFloat64(16, 2 ** -30, true)
      })
      expect(view(r).getBigUint64(48, true)).toBe(sig)
      expect(view(r).getUint16(56, true)).toBe(0x3fff)
      expect(view(r).getUint16(32, true) & 0x3f).toBe(pe)
    }
  })

  it('fcomip/fucomip set ZF PF CF (unordered: all three)', () => {
    const ZF = 0x40n
    const PF = 4n
    const CF = 1n
    const cases: Array<[number, number, bigint]> = [
      [1, 2, 0n], // st0 = 2 > st1 = 1
      [2, 1, CF],
      [3, 3, ZF],
      [Number.NaN, 1, ZF | PF | CF],
    ]
    for (const [b, a, f] of cases) {
      for (const op of [FCOMIP, FUCOMIP]) {
        const r = run([fldL(8), fldL(0), op, FSTP_ST0, fnstswM(32)], (v) => {
          v.setFloat64(0, a, true)
          v.setFloat64(8, b, true)
        })
        expect(r.rflags & (ZF | PF | CF | 0x80n | 0x800n | 0x10n)).toBe(f)
        // fcomip with a NaN raises IE, fucomip does not (QNaN).
        const ie = Number.isNaN(b) && op === FCOMIP ? 1 : 0
        expect(view(r).getUint16(32, true) & 1).toBe(ie)
      }
    }
  })

  it('fxam classifies (C3 C2 C1 C0)', () => {
    const C = (c3: number, c2: number, c1: number, c0: number) =>
      (c3 << 14) | (c2 << 10) | (c1 << 9) | (c0 << 8)
    const cases: Array<[(v: DataView) => void, number]> = [
      [(v) => v.setFloat64(0, 1.5, true), C(0, 1, 0, 0)], // normal
      [(v) => v.setFloat64(0, -0, true), C(1, 0, 1, 0)], // zero, negative
      [(v) => v.setFloat64(0, Number.NEGATIVE_INFINITY, true), C(0, 1, 1, 1)], // infinity
      [(v) => v.setFloat64(0, Number.NaN, true), C(0, 0, 0, 1)], // NaN
    ]
    for (const [init, cc] of cases) {
      const r = run([fldL(0), FXAM, fnstswM(32)], init)
      expect(view(r).getUint16(32, true) & 0x4700).toBe(cc)
    }
    // Extended denormal (loaded as m80): C3 C2 = 1 1.
    let r = run([fldT(0), FXAM, fnstswM(32)], (v) => v.setBigUint64(0, 1n, true))
    expect(view(r).getUint16(32, true) & 0x4700).toBe(C(1, 1, 0, 0))
    // Empty: C3 C0 = 1 1.
    r = run([FXAM, fnstswM(32)])
    expect(view(r).getUint16(32, true) & 0x4500).toBe(C(1, 0, 0, 1))
  })

  it('keeps TOP in FSW across pushes and pops', () => {
    const r = run([FLD1, FLD1, FLD1, FNSTSW_AX, [0x89, 0xc1], FSTP_ST0, FNSTSW_AX])
    expect(Number(r.gpr[1] >> 11n) & 7).toBe(5)
    expect(Number(r.gpr[0] >> 11n) & 7).toBe(6)
  })

  it('stack underflow gives the indefinite with IE and SF', () => {
    const r = run([FLD1, [0xd8, 0xc1], fnstswM(32), fstpT(48)]) // fadd st0, st1 (empty)
    expect(hex(r.data.subarray(48, 58))).toBe('00000000000000c0ffff')
    expect(view(r).getUint16(32, true) & 0x2ff).toBe(0x41)
  })

  it('stack overflow on the ninth push', () => {
    const r = run([...Array(9).fill(FLD1), fnstswM(32), fstpT(48)])
    expect(view(r).getUint16(32, true) & 0x2ff).toBe(0x241) // C1 = 1, SF, IE
    expect(hex(r.data.subarray(48, 58))).toBe('00000000000000c0ffff')
  })

  it('fxsave/fxrstor carry the x87 registers, TOP and tags', () => {
    const FXSAVE = [0x48, 0x0f, 0xae, 0x83, 0x00, 0x02, 0x00, 0x00] // fxsave64 [rbx+0x200]
    const FXRSTOR = [0x48, 0x0f, 0xae, 0x8b, 0x00, 0x02, 0x00, 0x00]
    const FNINIT = [0xdb, 0xe3]
    const r = run([fldL(0), FLD1, FXSAVE, FNINIT, FXRSTOR, fstpT(48), fstpL(64), fnstswM(32)], (v) =>
      v.setFloat64(0, -6.25, true),
    )
    const v = view(r)
    expect(v.getUint16(0x200, true)).toBe(0x037f)
    expect(v.getUint16(0x202, true)).toBe(0x3000) // TOP = 6
    expect(r.data[0x204]).toBe(0xc0) // physical registers 6 and 7 in use
    expect(hex(r.data.subarray(0x220, 0x22a))).toBe('0000000000000080ff3f') // ST0 = 1
    expect(v.getFloat64(64, true)).toBe(-6.25)
    expect(hex(r.data.subarray(48, 58))).toBe('0000000000000080ff3f')
    expect(v.getUint16(32, true)).toBe(0)
  })

  it('fld constants follow the rounding control', () => {
    const near = run([[0xd9, 0xeb], fstpT(48)]) // fldpi
    expect(hex(near.data.subarray(48, 58))).toBe('35c26821a2da0fc90040')
    const chop = run([fldcw(0), [0xd9, 0xeb], fstpT(48)], (v) => v.setUint16(0, 0x0f7f, true))
    expect(hex(chop.data.subarray(48, 58))).toBe('34c26821a2da0fc90040')
  })

  it('transcendentals: fpatan(1, 1) = pi/4, fyl2x(8) = 3, fsin of a huge argument sets C2', () => {
    let r = run([FLD1, FLD1, [0xd9, 0xf3], fstpT(48)])
    expect(hex(r.data.subarray(48, 58))).toBe('35c26821a2da0fc9fe3f') // pi/4, rounded to nearest
    r = run([FLD1, fildD(0), [0xd9, 0xf1], fstpT(48)], (v) => v.setInt32(0, 8, true))
    expect(hex(r.data.subarray(48, 58))).toBe('00000000000000c00040') // 3.0
    r = run([fildQ(0), [0xd9, 0xfe], fnstswM(32), fistpQ(64)], (v) => v.setBigInt64(0, 1n << 63n, true))
    expect(view(r).getUint16(32, true) & 0x400).toBe(0x400)
    expect(view(r).getBigInt64(64, true)).toBe(-(1n << 63n)) // unchanged
  })
})
