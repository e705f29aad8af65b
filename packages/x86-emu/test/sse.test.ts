// SSE/SSE2 unit tests with hand-computed vectors: one or a few instructions
// on known XMM contents, run at CPL 3 in the flat harness, in the interpreter
// and the block compiler (which must agree). The native differential test
// (sse-differential.test.ts) covers random operands; these pin down the
// documented behaviours one by one.

import { describe, expect, test } from 'vitest'
import { CF, hex, OF, PF, REGS, type Reg, SF, ZF } from './support/asm.js'
import { FLAT_DATA_ADDRESS, type FlatOutcome, runFlat } from './support/flat.js'

const DATA = FLAT_DATA_ADDRESS
const AF = 0x10n

// MXCSR bits.
const IE = 0x01
const DE = 0x02
const ZE = 0x04
const OE = 0x08
const UE = 0x10
const PE = 0x20
const DAZ = 0x40
const FTZ = 0x8000
const RN = 0 << 13
const RD = 1 << 13
const RU = 2 << 13
const RZ = 3 << 13
const MX = 0x1f80

/** Initial XMM contents: dwords, bytes, singles, doubles or qwords (lane 0 first). */
type XmmInit = { d: number[] } | { b: number[] } | { f: number[] } | { pd: number[] } | { q: bigint[] }

interface SCase {
  code: string
  xmm?: Record<number, XmmInit>
  mxcsr?: number
  regs?: Partial<Record<Reg, bigint>>
  data?: (page: DataView) => void
  flags?: bigint
}

class Out {
  constructor(readonly o: FlatOutcome) {}
  private view(n: number): DataView {
    return new DataView(this.o.xmm.buffer, this.o.xmm.byteOffset + 16 * n, 16)
  }
  d(n: number): number[] {
    const v = this.view(n)
    return [0, 1, 2, 3].map((i) => v.getUint32(4 * i, true))
  }
  b(n: number): number[] {
    return Array.from(this.o.xmm.subarray(16 * n, 16 * n + 16))
  }
  w(n: number): number[] {
    const v = this.view(n)
    return [0, 1, 2, 3, 4, 5, 6, 7].map((i) => v.getUint16(2 * i, true))
  }
  f(n: number): number[] {
    const v = this.view(n)
    return [0, 1, 2, 3].map((i) => v.getFloat32(4 * i, true))
  }
  pd(n: number): number[] {
    const v = this.view(n)
    return [v.getFloat64(0, true), v.getFloat64(8, true)]
  }
  q(n: number): bigint[] {
    const v = this.view(n)
    return [v.getBigUint64(0, true), v.getBigUint64(8, true)]
  }
  reg(r: Reg): bigint {
    return this.o.gpr[REGS.indexOf(r)]
  }
  get mxcsr(): number {
    return this.o.mxcsr
  }
  /** MXCSR exception flags only. */
  get fx(): number {
    return this.o.mxcsr & 0x3f
  }
  get flags(): bigint {
    return this.o.rflags & (CF | PF | AF | ZF | SF | OF)
  }
  get fault(): FlatOutcome['fault'] {
    return this.o.fault
  }
  get data(): DataView {
    return new DataView(this.o.data.buffer, this.o.data.byteOffset, this.o.data.length)
  }
}

function run(c: SCase): Out {
  const xmm = new Uint8Array(256)
  const xv = new DataView(xmm.buffer)
  for (const [k, init] of Object.entries(c.xmm ?? {})) {
    const o = 16 * Number(k)
    if ('d' in init) for (const [i, v] of init.d.entries()) xv.setUint32(o + 4 * i, v >>> 0, true)
    else if ('b' in init) for (const [i, v] of init.b.entries()) xv.setUint8(o + i, v)
    else if ('f' in init) for (const [i, v] of init.f.entries()) xv.setFloat32(o + 4 * i, v, true)
    else if ('pd' in init) for (const [i, v] of init.pd.entries()) xv.setFloat64(o + 8 * i, v, true)
    else for (const [i, v] of init.q.entries()) xv.setBigUint64(o + 8 * i, BigInt.asUintN(64, v), true)
  }
  const data = new Uint8Array(4096)
  c.data?.(new DataView(data.buffer))
  const gpr = REGS.map((r) => BigInt.asUintN(64, c.regs?.[r] ?? (r === 'rbx' ? DATA : 0n)))
  const flat = { code: hex(c.code), gpr, rflags: (c.flags ?? 0n) | 2n, data, xmm, mxcsr: c.mxcsr ?? MX }
  const a = runFlat(flat, 1000, Number.POSITIVE_INFINITY)
  const b = runFlat(flat, 1000, 0)
  expect(b, 'block compiler and interpreter agree').toEqual(a)
  return new Out(a)
}

const f32bits = (x: number) => {
  const v = new DataView(new ArrayBuffer(4))
  v.setFloat32(0, x, true)
  return v.getUint32(0, true)
}

describe('moves', () => {
  test('pxor + movaps zero a stack slot; movaps to a misaligned address is #GP(0)', () => {
    const r = run({
      code: '66 0f ef c0 | 0f 29 03', // pxor xmm0,xmm0; movaps [rbx],xmm0
      xmm: { 0: { d: [1, 2, 3, 4] } },
      data: (p) => p.setUint32(0, 0xdeadbeef, true),
    })
    expect(r.d(0)).toEqual([0, 0, 0, 0])
    expect(r.data.getUint32(0, true)).toBe(0)
    const m = run({ code: '0f 29 43 08', xmm: { 0: { d: [1, 2, 3, 4] } } }) // movaps [rbx+8],xmm0
    expect(m.fault).toEqual({ vector: 13, errorCode: 0 })
    expect(m.data.getUint32(8, true)).toBe(0)
  })

  test('movups/movdqu accept any alignment; movdqa load misaligned faults', () => {
    const r = run({
      code: 'f3 0f 6f 4b 03 | 0f 11 53 21', // movdqu xmm1,[rbx+3]; movups [rbx+0x21],xmm2
      xmm: { 2: { d: [0x11111111, 0x22222222, 0x33333333, 0x44444444] } },
      data: (p) => {
        for (let i = 0; i < 32; i++) p.setUint8(i, i)
      },
    })
    expect(r.b(1)).toEqual(Array.from({ length: 16 }, (_, i) => i + 3))
    expect(r.data.getUint32(0x21, true)).toBe(0x11111111)
    expect(r.data.getUint32(0x2d, true)).toBe(0x44444444)
    expect(run({ code: '66 0f 6f 4b 04' }).fault).toEqual({ vector: 13, errorCode: 0 })
  })

  test('movss/movsd: from memory zero the rest, between registers keep it', () => {
    const r = run({
      code: 'f3 0f 10 03 | f2 0f 10 ca', // movss xmm0,[rbx]; movsd xmm1,xmm2
      xmm: { 0: { d: [9, 9, 9, 9] }, 1: { d: [5, 6, 7, 8] }, 2: { d: [1, 2, 3, 4] } },
      data: (p) => p.setUint32(0, 0x3f800000, true),
    })
    expect(r.d(0)).toEqual([0x3f800000, 0, 0, 0])
    expect(r.d(1)).toEqual([1, 2, 7, 8])
  })

  test('movhps/movlps/movhlps/movlhps move the right quadwords', () => {
    const r = run({
      code: '0f 16 03 | 0f 12 4b 08 | 0f 12 d3 | 0f 16 e3', // movhps xmm0,[rbx]; movlps xmm1,[rbx+8]; movhlps xmm2,xmm3; movlhps xmm4,xmm3
      xmm: {
        0: { q: [1n, 2n] },
        1: { q: [3n, 4n] },
        2: { q: [5n, 6n] },
        3: { q: [7n, 8n] },
        4: { q: [9n, 10n] },
      },
      data: (p) => {
        p.setBigUint64(0, 0xaan, true)
        p.setBigUint64(8, 0xbbn, true)
      },
    })
    expect(r.q(0)).toEqual([1n, 0xaan])
    expect(r.q(1)).toEqual([0xbbn, 4n])
    expect(r.q(2)).toEqual([8n, 6n])
    expect(r.q(4)).toEqual([9n, 7n])
  })

  test('movd/movq between GPRs and XMM zero-extend', () => {
    const r = run({
      code: '66 0f 6e c0 | 66 48 0f 7e c9 | 66 0f 7e d2 | f3 0f 7e da', // movd xmm0,eax; movq rcx,xmm1; movd edx,xmm2; movq xmm3,xmm2
      regs: { rax: 0xffffffff80000001n, rdx: 0x1234567890n },
      xmm: {
        0: { d: [7, 7, 7, 7] },
        1: { q: [0x8877665544332211n, 5n] },
        2: { d: [0xcafe, 0xbabe, 3, 4] },
        3: { d: [1, 1, 1, 1] },
      },
    })
    expect(r.d(0)).toEqual([0x80000001, 0, 0, 0])
    expect(r.reg('rcx')).toBe(0x8877665544332211n)
    expect(r.reg('rdx')).toBe(0xcafen)
    expect(r.d(3)).toEqual([0xcafe, 0xbabe, 0, 0])
  })

  test('pinsrw/pextrw use imm8 & 7; pextrw zero-extends into r64', () => {
    const r = run({
      code: '66 0f c4 c0 0b | 66 48 0f c5 c8 03', // pinsrw xmm0,eax,11; pextrw rcx,xmm0,3
      regs: { rax: 0xabcd1234n, rcx: -1n },
      xmm: { 0: { d: [0, 0, 0, 0] } },
    })
    expect(r.w(0)).toEqual([0, 0, 0, 0x1234, 0, 0, 0, 0])
    expect(r.reg('rcx')).toBe(0x1234n)
  })

  test('maskmovdqu stores only the selected bytes at [rdi]', () => {
    const r = run({
      code: '66 0f f7 c1', // maskmovdqu xmm0, xmm1
      regs: { rdi: DATA + 0x10n },
      xmm: {
        0: { b: Array.from({ length: 16 }, (_, i) => 0xa0 + i) },
        1: { b: [0x80, 0, 0xff, 0x7f, ...Array(12).fill(0)] },
      },
      data: (p) => {
        for (let i = 0; i < 16; i++) p.setUint8(0x10 + i, 0x11)
      },
    })
    expect([0x10, 0x11, 0x12, 0x13, 0x14, 0x1f].map((o) => r.data.getUint8(o))).toEqual([
      0xa0, 0x11, 0xa2, 0x11, 0x11, 0x11,
    ])
  })
})

describe('packed integer', () => {
  test('strlen core: pcmpeqb against zero + pmovmskb finds the terminator', () => {
    const s = 'hello, world'
    const r = run({
      code: '66 0f ef c0 | f3 0f 6f 0b | 66 0f 74 c8 | 66 0f d7 c1 | 0f bc c0', // pxor; movdqu xmm1,[rbx]; pcmpeqb xmm1,xmm0; pmovmskb eax,xmm1; bsf eax,eax
      data: (p) => {
        for (let i = 0; i < 16; i++) p.setUint8(i, i < s.length ? s.charCodeAt(i) : 0)
      },
      regs: { rax: -1n },
    })
    expect(r.reg('rax')).toBe(BigInt(s.length))
    expect(r.b(1).slice(10, 16)).toEqual([0, 0, 0xff, 0xff, 0xff, 0xff])
  })

  test('saturating adds and subtracts', () => {
    const r = run({
      code: '66 0f dc c1 | 66 0f ec d3 | 66 0f d8 e5 | 66 0f ed f7', // paddusb xmm0,xmm1; paddsb xmm2,xmm3; psubusb xmm4,xmm5; paddsw xmm6,xmm7
      xmm: {
        0: { b: [0xf0, 0x01, 0x80, ...Array(13).fill(0)] },
        1: { b: [0x20, 0x02, 0x80, ...Array(13).fill(0)] },
        2: { b: [0x70, 0x90, 0x7f, ...Array(13).fill(0)] },
        3: { b: [0x20, 0xf0, 0x80, ...Array(13).fill(0)] },
        4: { b: [0x10, 0x30, ...Array(14).fill(0)] },
        5: { b: [0x20, 0x10, ...Array(14).fill(0)] },
        6: { d: [0x80007fff, 0, 0, 0] },
        7: { d: [0xffff0001, 0, 0, 0] },
      },
    })
    expect(r.b(0).slice(0, 3)).toEqual([0xff, 0x03, 0xff])
    expect(r.b(2).slice(0, 3)).toEqual([0x7f, 0x80, 0xff])
    expect(r.b(4).slice(0, 2)).toEqual([0x00, 0x20])
    expect(r.d(6)[0]).toBe(0x80007fff)
  })

  test('multiplies: pmullw, pmulhw, pmulhuw, pmuludq, pmaddwd', () => {
    const r = run({
      code: '66 0f d5 c1 | 66 0f e5 d1 | 66 0f e4 d9 | 66 0f f4 e5 | 66 0f f5 f7',
      xmm: {
        0: { d: [0xfffe0003, 0, 0, 0] },
        1: { d: [0x00030005, 0, 0, 0] },
        2: { d: [0xfffe0003, 0, 0, 0] },
        3: { d: [0xfffe0003, 0, 0, 0] },
        4: { d: [0xffffffff, 7, 0x10000, 9] },
        5: { d: [0xffffffff, 8, 0x10000, 10] },
        6: { d: [0x80008000, 0x00020003, 0, 0] },
        7: { d: [0x80008000, 0x00040005, 0, 0] },
      },
    })
    expect(r.w(0).slice(0, 2)).toEqual([15, 0xfffa]) // 3*5, -2*3
    expect(r.w(2).slice(0, 2)).toEqual([0, 0xffff]) // high halves of 15 and -6
    expect(r.w(3).slice(0, 2)).toEqual([0, 2]) // 3*5 >> 16, 0xfffe*3 >> 16
    expect(r.q(4)).toEqual([0xfffffffe00000001n, 0x100000000n])
    expect(r.d(6).slice(0, 2)).toEqual([0x80000000, 2 * 4 + 3 * 5]) // (-32768)^2 * 2 wraps
  })

  test('psadbw, pavgb, pminub/pmaxsw', () => {
    const r = run({
      code: '66 0f f6 c1 | 66 0f e0 d3 | 66 0f da e5 | 66 0f ee f7',
      xmm: {
        0: { b: [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 255] },
        1: { b: [8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0] },
        2: { b: [1, 255, 0, ...Array(13).fill(0)] },
        3: { b: [2, 254, 1, ...Array(13).fill(0)] },
        4: { b: [0x80, 0x7f, ...Array(14).fill(0)] },
        5: { b: [0x7f, 0x80, ...Array(14).fill(0)] },
        6: { d: [0x7fff8000, 0, 0, 0] },
        7: { d: [0x80000001, 0, 0, 0] },
      },
    })
    expect(r.q(0)).toEqual([32n, 255n])
    expect(r.b(2).slice(0, 3)).toEqual([2, 255, 1])
    expect(r.b(4).slice(0, 2)).toEqual([0x7f, 0x7f])
    expect(r.d(6)[0]).toBe(0x7fff0001)
  })

  test('shifts: counts past the lane width, arithmetic fill, byte shifts', () => {
    const r = run({
      code: '66 0f e1 c1 | 66 0f f3 d1 | 66 0f 73 db 03 | 66 0f 73 fc 10 | 66 0f 72 e5 1f | 66 0f 71 f6 04',
      // psraw xmm0,xmm1 (count 40); psllq xmm2,xmm1; psrldq xmm3,3; pslldq xmm4,16; psrad xmm5,31; psllw xmm6,4
      xmm: {
        0: { d: [0x80007fff, 0, 0, 0] },
        1: { q: [40n, 0n] },
        2: { q: [0xffffffffffffffffn, 1n] },
        3: { b: Array.from({ length: 16 }, (_, i) => i) },
        4: { d: [1, 2, 3, 4] },
        5: { d: [0x80000000, 0x7fffffff, 0, 0xffffffff] },
        6: { d: [0x12341234, 0, 0, 0] },
      },
    })
    expect(r.w(0).slice(0, 2)).toEqual([0, 0xffff])
    expect(r.q(2)).toEqual([0xffffff0000000000n, 1n << 40n])
    expect(r.b(3)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0, 0])
    expect(r.d(4)).toEqual([0, 0, 0, 0])
    expect(r.d(5)).toEqual([0xffffffff, 0, 0, 0xffffffff])
    expect(r.d(6)[0]).toBe(0x23402340)
  })

  test('packs and unpacks', () => {
    const r = run({
      code: '66 0f 63 c1 | 66 0f 67 d1 | 66 0f 60 e5 | 66 0f 6c f7',
      xmm: {
        0: { d: [0x7fff8000, 0x00010080, 0, 0] }, // words -32768, 32767, 128, 1
        1: { d: [0x0000ffff, 0, 0, 0] }, // words -1, 0
        2: { d: [0x7fff8000, 0x00010080, 0, 0] },
        4: { b: Array.from({ length: 16 }, (_, i) => i) },
        5: { b: Array.from({ length: 16 }, (_, i) => 0x80 + i) },
        6: { q: [1n, 2n] },
        7: { q: [3n, 4n] },
      },
    })
    expect(r.b(0).slice(0, 10)).toEqual([0x80, 0x7f, 0x7f, 0x01, 0, 0, 0, 0, 0xff, 0])
    expect(r.b(2).slice(0, 10)).toEqual([0, 0xff, 0x80, 0x01, 0, 0, 0, 0, 0, 0])
    expect(r.b(4).slice(0, 6)).toEqual([0, 0x80, 1, 0x81, 2, 0x82])
    expect(r.q(6)).toEqual([1n, 3n])
  })

  test('pshufd, pshuflw, pshufhw and shufps permutations', () => {
    const r = run({
      code: '66 0f 70 c1 1b | f2 0f 70 d1 1b | f3 0f 70 d9 1b | 0f c6 e5 4e',
      xmm: {
        1: { d: [0x00010000, 0x00030002, 0x00050004, 0x00070006] },
        4: { d: [10, 11, 12, 13] },
        5: { d: [20, 21, 22, 23] },
      },
    })
    expect(r.d(0)).toEqual([0x00070006, 0x00050004, 0x00030002, 0x00010000])
    expect(r.w(2)).toEqual([3, 2, 1, 0, 4, 5, 6, 7])
    expect(r.w(3)).toEqual([0, 1, 2, 3, 7, 6, 5, 4])
    expect(r.d(4)).toEqual([12, 13, 20, 21]) // imm 01 00 11 10
  })
})

describe('floating point', () => {
  test('addps/mulpd/subss/divsd basic values', () => {
    const r = run({
      code: '0f 58 c1 | 66 0f 59 d3 | f3 0f 5c e5 | f2 0f 5e f7',
      xmm: {
        0: { f: [1, 2, 3, 4] },
        1: { f: [0.5, 0.25, -3, 1e30] },
        2: { pd: [3, -0.5] },
        3: { pd: [7, 8] },
        4: { f: [10, 99, 99, 99] },
        5: { f: [0.25, 0, 0, 0] },
        6: { pd: [1, 42] },
        7: { pd: [3, 0] },
      },
    })
    expect(r.f(0)).toEqual([1.5, 2.25, 0, Math.fround(1e30)])
    expect(r.pd(2)).toEqual([21, -4])
    expect(r.f(4)).toEqual([9.75, 99, 99, 99])
    expect(r.pd(6)).toEqual([1 / 3, 42])
    expect(r.fx).toBe(PE) // 1/3 and 4 + 1e30 are inexact
  })

  test('minps/maxps: a NaN operand or equal zeros give the second operand', () => {
    const r = run({
      code: '0f 5d c1 | 0f 5f d3',
      xmm: {
        0: { d: [0x7fc00000, 0x3f800000, 0x00000000, 0x7f800001] },
        1: { d: [0x3f800000, 0xff800001, 0x80000000, 0x40000000] },
        2: { d: [0x80000000, 0x40000000, 0, 0] },
        3: { d: [0x00000000, 0x7fc00000, 0, 0] },
      },
    })
    expect(r.d(0)).toEqual([0x3f800000, 0xff800001, 0x80000000, 0x40000000])
    expect(r.d(2)).toEqual([0x00000000, 0x7fc00000, 0, 0])
    expect(r.fx).toBe(IE)
  })

  test('NaN propagation: first operand wins, SNaN is quieted with IE; invalid gives the default NaN', () => {
    const r = run({
      code: 'f3 0f 58 c1 | f3 0f 58 d3 | f2 0f 51 e5 | f3 0f 59 f7',
      xmm: {
        0: { d: [0x7f800001, 0, 0, 0] }, // SNaN + QNaN
        1: { d: [0x7fc00002, 0, 0, 0] },
        2: { d: [0x3f800000, 0, 0, 0] }, // 1 + SNaN
        3: { d: [0xff812345, 0, 0, 0] },
        5: { pd: [-1, 0] }, // sqrt(-1)
        6: { f: [0, 0, 0, 0] }, // 0 * inf
        7: { f: [Number.POSITIVE_INFINITY, 0, 0, 0] },
      },
    })
    expect(r.d(0)[0]).toBe(0x7fc00001)
    expect(r.d(2)[0]).toBe(0xffc12345)
    expect(r.q(4)[0]).toBe(0xfff8000000000000n)
    expect(r.d(6)[0]).toBe(0xffc00000)
    expect(r.fx).toBe(IE)
  })

  test('divide by zero gives a signed infinity and ZE', () => {
    const r = run({ code: 'f3 0f 5e c1', xmm: { 0: { f: [-3, 0, 0, 0] }, 1: { f: [0, 0, 0, 0] } } })
    expect(r.f(0)[0]).toBe(Number.NEGATIVE_INFINITY)
    expect(r.fx).toBe(ZE)
  })

  test('overflow: OE|PE, infinity when rounding to nearest, the largest finite towards zero', () => {
    const code = 'f3 0f 59 c1' // mulss xmm0, xmm1
    const xmm = { 0: { f: [3e38, 0, 0, 0] }, 1: { f: [10, 0, 0, 0] } }
    const rn = run({ code, xmm })
    expect(rn.f(0)[0]).toBe(Number.POSITIVE_INFINITY)
    expect(rn.fx).toBe(OE | PE)
    const rz = run({ code, xmm, mxcsr: MX | RZ })
    expect(rz.d(0)[0]).toBe(0x7f7fffff)
    expect(rz.fx).toBe(OE | PE)
  })

  test('underflow: a tiny inexact result sets UE|PE; FTZ flushes it to a signed zero', () => {
    const code = 'f3 0f 59 c1'
    // -1.5 * (1 + 2^-20) * 2^-140: below 2^-126 and not a multiple of 2^-149.
    const xmm = { 0: { f: [-1.5 * 2 ** -70, 0, 0, 0] }, 1: { f: [(1 + 2 ** -20) * 2 ** -70, 0, 0, 0] } }
    const plain = run({ code, xmm })
    expect(plain.d(0)[0]).toBe(f32bits(Math.fround(-1.5 * (1 + 2 ** -20) * 2 ** -140)))
    expect(plain.fx).toBe(UE | PE)
    const ftz = run({ code, xmm, mxcsr: MX | FTZ })
    expect(ftz.d(0)[0]).toBe(0x80000000)
    expect(ftz.fx).toBe(UE | PE)
  })

  test('denormal operands: DE, or read as zero under DAZ', () => {
    const code = 'f3 0f 58 c1'
    const xmm = { 0: { d: [0x00000001, 0, 0, 0] }, 1: { d: [0, 0, 0, 0] } }
    const plain = run({ code, xmm })
    expect(plain.d(0)[0]).toBe(1)
    expect(plain.fx).toBe(DE)
    const daz = run({ code, xmm, mxcsr: MX | DAZ })
    expect(daz.d(0)[0]).toBe(0)
    expect(daz.fx).toBe(0)
  })

  test('rounding control applies to arithmetic; an exact zero sum is -0 when rounding down', () => {
    const code = 'f2 0f 58 c1 | f2 0f 5c d3' // addsd xmm0,xmm1; subsd xmm2,xmm3
    const xmm = { 0: { pd: [1, 0] }, 1: { pd: [2 ** -60, 0] }, 2: { pd: [1.5, 0] }, 3: { pd: [1.5, 0] } }
    const expected: Array<[number, number, number]> = [
      [RN, 1, 0],
      [RD, 1, -0],
      [RU, 1 + 2 ** -52, 0],
      [RZ, 1, 0],
    ]
    for (const [rc, sum, zero] of expected) {
      const r = run({ code, xmm, mxcsr: MX | rc })
      expect(r.pd(0)[0]).toBe(sum)
      expect(Object.is(r.pd(2)[0], zero)).toBe(true)
      expect(r.fx).toBe(PE)
    }
  })

  test('sqrtsd is correctly rounded and keeps the upper lane', () => {
    const r = run({ code: 'f2 0f 51 c1', xmm: { 0: { pd: [0, 7] }, 1: { pd: [2, 9] } } })
    expect(r.pd(0)).toEqual([Math.SQRT2, 7])
  })

  test('rcpps/rsqrtps: within 1.5*2^-12 of the exact value; special operands', () => {
    const r = run({
      code: '0f 53 c1 | 0f 52 d1',
      xmm: { 1: { f: [3, -0.1, 0, 1e-40] } },
    })
    const rcp = r.f(0)
    expect(Math.abs(rcp[0] - 1 / 3) / (1 / 3)).toBeLessThanOrEqual(1.5 * 2 ** -12)
    expect(Math.abs(rcp[1] + 10) / 10).toBeLessThanOrEqual(1.5 * 2 ** -12)
    expect(rcp.slice(2)).toEqual([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]) // 0 and a denormal
    const rsq = r.d(2)
    expect(Math.abs(r.f(2)[0] - 1 / Math.sqrt(3)) * Math.sqrt(3)).toBeLessThanOrEqual(1.5 * 2 ** -12)
    expect(rsq[1]).toBe(0xffc00000) // negative: the default NaN
    expect(r.fx).toBe(0)
  })

  test('cmpps predicates 0-7 on ordered, equal and unordered lanes', () => {
    const xmm = { 0: { f: [1, 2, Number.NaN, 3] }, 1: { f: [2, 2, 1, Number.NaN] } }
    const expected = [
      [0, -1, 0, 0], // eq
      [-1, 0, 0, 0], // lt
      [-1, -1, 0, 0], // le
      [0, 0, -1, -1], // unord
      [-1, 0, -1, -1], // neq
      [0, -1, -1, -1], // nlt
      [0, 0, -1, -1], // nle
      [-1, -1, 0, 0], // ord
    ]
    expected.forEach((want, p) => {
      const r = run({ code: `0f c2 c1 0${p}`, xmm })
      expect(r.d(0).map((v) => v | 0)).toEqual(want)
      // lt, le, nlt, nle signal on QNaN operands; the others do not.
      expect(r.fx).toBe([1, 2, 5, 6].includes(p) ? IE : 0)
    })
  })

  test('comisd/ucomisd set ZF PF CF, clear OF SF AF; comisd signals on QNaN', () => {
    const all = CF | PF | AF | ZF | SF | OF
    const nan = { 0: { pd: [Number.NaN, 0] }, 1: { pd: [1, 0] } }
    const c = run({ code: '66 0f 2f c1', xmm: nan, flags: OF | SF | AF })
    expect(c.flags).toBe(ZF | PF | CF)
    expect(c.fx).toBe(IE)
    const u = run({ code: '66 0f 2e c1', xmm: nan, flags: all })
    expect(u.flags).toBe(ZF | PF | CF)
    expect(u.fx).toBe(0)
    const less = run({ code: '66 0f 2f c1', xmm: { 0: { pd: [1, 0] }, 1: { pd: [2, 0] } }, flags: all })
    expect(less.flags).toBe(CF)
    const eq = run({ code: '0f 2f c1', xmm: { 0: { f: [-0, 0, 0, 0] }, 1: { f: [0, 0, 0, 0] } }, flags: all })
    expect(eq.flags).toBe(ZF)
    const gt = run({ code: '0f 2e c1', xmm: { 0: { f: [3, 0, 0, 0] }, 1: { f: [2, 0, 0, 0] } }, flags: all })
    expect(gt.flags).toBe(0n)
  })

  test('bitwise: andnps, xorpd, movmskps/movmskpd', () => {
    const r = run({
      code: '0f 55 c1 | 66 0f 57 d3 | 0f 50 c4 | 66 0f 50 cd',
      xmm: {
        0: { d: [0xff00ff00, 0, 0xffffffff, 0] },
        1: { d: [0x0ff00ff0, 5, 0x12345678, 7] },
        2: { d: [1, 2, 3, 4] },
        3: { d: [1, 2, 3, 4] },
        4: { d: [0x80000000, 0, 0xffffffff, 0x7fffffff] },
        5: { q: [0x8000000000000000n, 1n] },
      },
      regs: { rax: -1n, rcx: -1n },
    })
    expect(r.d(0)).toEqual([0x00f000f0, 5, 0, 7])
    expect(r.d(2)).toEqual([0, 0, 0, 0])
    expect(r.reg('rax')).toBe(0b0101n)
    expect(r.reg('rcx')).toBe(0b01n)
  })
})

describe('conversions', () => {
  test('cvttsd2si: 2^63 and NaN give the integer indefinite with IE; in range truncates', () => {
    const r = run({
      code: 'f2 48 0f 2c c0 | f2 0f 2c c9 | f2 48 0f 2c d2 | f2 0f 2c db',
      xmm: {
        0: { pd: [2 ** 63, 0] },
        1: { pd: [Number.NaN, 0] },
        2: { pd: [-(2 ** 63), 0] },
        3: { pd: [-2.9, 0] },
      },
      regs: { rcx: -1n },
    })
    expect(r.reg('rax')).toBe(0x8000000000000000n)
    expect(r.reg('rcx')).toBe(0x80000000n) // 32-bit result, zero-extended
    expect(r.reg('rdx')).toBe(0x8000000000000000n) // -2^63 itself is in range (exact)
    expect(r.reg('rbx')).toBe(0xfffffffen)
    expect(r.fx).toBe(IE | PE)
  })

  test('cvtsd2si rounds per MXCSR.RC (ties to even when nearest)', () => {
    const table: Array<[number, bigint, bigint]> = [
      [RN, 2n, -2n],
      [RD, 2n, -3n],
      [RU, 3n, -2n],
      [RZ, 2n, -2n],
    ]
    for (const [rc, pos, neg] of table) {
      const r = run({
        code: 'f2 48 0f 2d c0 | f2 48 0f 2d c9',
        xmm: { 0: { pd: [2.5, 0] }, 1: { pd: [-2.5, 0] } },
        mxcsr: MX | rc,
      })
      expect(r.reg('rax')).toBe(pos)
      expect(r.reg('rcx')).toBe(BigInt.asUintN(64, neg))
      expect(r.fx).toBe(PE)
    }
  })

  test('cvtsi2ss/cvtsi2sd: 64-bit sources round per RC, 32-bit into double is exact', () => {
    const code = 'f3 48 0f 2a c0 | f2 48 0f 2a c9 | f2 0f 2a d2' // cvtsi2ss xmm0,rax; cvtsi2sd xmm1,rcx; cvtsi2sd xmm2,edx
    const regs = { rax: 2n ** 24n + 1n, rcx: 2n ** 53n + 1n, rdx: 0xffffffffn }
    const rn = run({ code, regs })
    expect(rn.f(0)[0]).toBe(2 ** 24)
    expect(rn.pd(1)[0]).toBe(2 ** 53)
    expect(rn.pd(2)[0]).toBe(-1)
    expect(rn.fx).toBe(PE)
    const ru = run({ code, regs, mxcsr: MX | RU })
    expect(ru.f(0)[0]).toBe(2 ** 24 + 2)
    expect(ru.pd(1)[0]).toBe(2 ** 53 + 2)
  })

  test('cvtsd2ss/cvtss2sd: rounding, overflow, NaN payloads', () => {
    const r = run({
      code: 'f2 0f 5a c1 | f2 0f 5a d3 | f3 0f 5a e5',
      xmm: {
        0: { d: [0, 0x11111111, 0x22222222, 0x33333333] },
        1: { pd: [1 / 3, 0] },
        3: { pd: [1e300, 0] },
        5: { d: [0x7f800123, 0, 0, 0] }, // SNaN single
      },
    })
    expect(r.d(0)).toEqual([f32bits(Math.fround(1 / 3)), 0x11111111, 0x22222222, 0x33333333])
    expect(r.f(2)[0]).toBe(Number.POSITIVE_INFINITY)
    expect(r.q(4)[0]).toBe(0x7ff8002460000000n)
    expect(r.fx).toBe(IE | OE | PE)
  })

  test('packed conversions: cvtdq2ps, cvttps2dq, cvtps2pd, cvtpd2ps, cvtdq2pd, cvtpd2dq', () => {
    const r = run({
      code: '0f 5b c1 | f3 0f 5b d3 | 0f 5a e5 | 66 0f 5a f7 | f3 0f e6 c9 | f2 0f e6 df',
      xmm: {
        1: { d: [1, 0xffffffff, 0x7fffffff, 16777217] },
        3: { f: [1.9, -1.9, 3e9, Number.NaN] },
        5: { f: [1.5, -2, 9, 9] },
        6: { d: [9, 9, 9, 9] },
        7: { pd: [0.1, -4] },
      },
      mxcsr: MX,
    })
    expect(r.f(0)).toEqual([1, -1, 2 ** 31, 16777216])
    expect(r.d(2)).toEqual([1, 0xffffffff, 0x80000000, 0x80000000])
    expect(r.pd(4)).toEqual([1.5, -2])
    expect(r.f(6)).toEqual([Math.fround(0.1), -4, 0, 0])
    expect(r.pd(1)).toEqual([1, -1]) // cvtdq2pd xmm1, xmm1: the dwords 1 and -1
    expect(r.d(3)).toEqual([0, 0xfffffffc, 0, 0]) // cvtpd2dq xmm3, xmm7: 0.1 -> 0, -4
    expect(r.fx).toBe(IE | PE)
  })
})

describe('state', () => {
  test('ldmxcsr/stmxcsr round-trip; a reserved bit is #GP(0)', () => {
    const r = run({
      code: '0f ae 13 | 0f ae 5b 04', // ldmxcsr [rbx]; stmxcsr [rbx+4]
      data: (p) => p.setUint32(0, 0xffff, true),
    })
    expect(r.mxcsr).toBe(0xffff)
    expect(r.data.getUint32(4, true)).toBe(0xffff)
    const bad = run({ code: '0f ae 13', data: (p) => p.setUint32(0, 0x10000 | MX, true) })
    expect(bad.fault).toEqual({ vector: 13, errorCode: 0 })
    expect(bad.mxcsr).toBe(MX)
  })

  test('fxsave layout and fxrstor round-trip', () => {
    const xmm: Record<number, XmmInit> = {}
    for (let i = 0; i < 16; i++) xmm[i] = { d: [i, 0x100 + i, 0x200 + i, 0x300 + i] }
    const r = run({
      // fxsave64 [rbx]; pxor xmm3,xmm3; pxor xmm15,xmm15; ldmxcsr [rbx+0x400]; fxrstor64 [rbx]
      code: '48 0f ae 03 | 66 0f ef db | 66 45 0f ef ff | 0f ae 93 00 04 00 00 | 48 0f ae 0b',
      xmm,
      mxcsr: MX | RZ | PE,
      data: (p) => {
        p.setUint32(0x400, MX, true)
        for (let i = 416; i < 512; i++) p.setUint8(i, 0xaa)
      },
    })
    const p = r.data
    expect(p.getUint16(0, true)).toBe(0x037f) // FCW
    expect(p.getUint16(2, true)).toBe(0) // FSW
    expect(p.getUint8(4)).toBe(0) // abridged FTW: all empty
    expect(p.getUint32(24, true)).toBe(MX | RZ | PE)
    expect(p.getUint32(28, true)).toBe(0xffff)
    for (let i = 0; i < 16; i++) expect(p.getUint32(160 + 16 * i + 4, true)).toBe(0x100 + i)
    expect(p.getUint8(416)).toBe(0xaa) // bytes 416-511 untouched
    expect(p.getUint8(511)).toBe(0xaa)
    expect(r.d(3)).toEqual([3, 0x103, 0x203, 0x303])
    expect(r.d(15)).toEqual([15, 0x10f, 0x20f, 0x30f])
    expect(r.mxcsr).toBe(MX | RZ | PE)
  })

  test('fxsave/fxrstor: misaligned area is #GP(0); fxrstor of reserved MXCSR bits is #GP(0)', () => {
    expect(run({ code: '0f ae 43 08' }).fault).toEqual({ vector: 13, errorCode: 0 })
    const bad = run({ code: '0f ae 0b', data: (p) => p.setUint32(24, 0x80000000 | MX, true) })
    expect(bad.fault).toEqual({ vector: 13, errorCode: 0 })
  })
})
