// MMX/x87 aliasing and FP exception delivery, one documented behaviour at a
// time (Intel SDM vol. 1, 9.5 table 9-2, 8.6 and 11.5), in the interpreter
// and the block compiler. The native differential test
// (mmx-differential.test.ts) covers the same ground against the host CPU.

import { describe, expect, test } from 'vitest'
import { FLAT_CODE_ADDRESS, FLAT_DATA_ADDRESS, type FlatOutcome, runFlat } from './support/flat.js'

const FX = 0x200 // fxsave64 [rbx+0x200]
const FXSAVE = [0x48, 0x0f, 0xae, 0x83, 0x00, 0x02, 0x00, 0x00]
const MM_VALUE = 0x0123456789abcdefn

function run(code: number[], opts: { linuxFpu?: boolean; mxcsr?: number } = {}): FlatOutcome[] {
  const data = new Uint8Array(4096)
  const dv = new DataView(data.buffer)
  dv.setBigUint64(0, MM_VALUE, true)
  dv.setUint16(0x40, 0x037f & ~0x04, true) // FCW with ZE unmasked
  dv.setUint32(0x48, 0x1f80 & ~0x200, true) // MXCSR with ZE unmasked
  dv.setFloat32(0x50, 1, true)
  const gpr = Array.from({ length: 16 }, () => 0n)
  gpr[3] = FLAT_DATA_ADDRESS
  gpr[4] = FLAT_DATA_ADDRESS + 0xf00n
  return [Number.POSITIVE_INFINITY, 0].map((jit) =>
    runFlat({ code: Uint8Array.from(code), gpr, rflags: 2n, data, ...opts }, 1000, jit),
  )
}

const fxsave = (o: FlatOutcome) => new DataView(o.data.buffer, o.data.byteOffset + FX, 512)
const MOVQ_MM3 = [0x0f, 0x6f, 0x1b] // movq mm3, [rbx]

describe('MMX registers are the x87 registers', () => {
  test('an MMX write: TOP = 0, all tags valid, MMi = significand of Ri with sign/exponent all ones', () => {
    for (const o of run([0xd9, 0xe8, ...MOVQ_MM3, ...FXSAVE])) {
      const fx = fxsave(o)
      expect((fx.getUint16(2, true) >> 11) & 7).toBe(0)
      expect(fx.getUint8(4)).toBe(0xff)
      expect(fx.getBigUint64(32 + 16 * 3, true)).toBe(MM_VALUE)
      expect(fx.getUint16(40 + 16 * 3, true)).toBe(0xffff)
    }
  })
  test('emms empties the tag word (and sets TOP to 0)', () => {
    for (const o of run([...MOVQ_MM3, 0xd9, 0xe8, 0x0f, 0x77, ...FXSAVE])) {
      expect(fxsave(o).getUint8(4)).toBe(0)
      expect((fxsave(o).getUint16(2, true) >> 11) & 7).toBe(0)
    }
  })
  test('fld of an MMX-written register sees the 80-bit pattern ffff:<mm bits>', () => {
    // movq mm3; ffree st7; fld st3; fstp tbyte [rbx+0x100]
    for (const o of run([...MOVQ_MM3, 0xdd, 0xc7, 0xd9, 0xc3, 0xdb, 0xbb, 0x00, 0x01, 0x00, 0x00])) {
      const dv = new DataView(o.data.buffer, o.data.byteOffset)
      expect(dv.getBigUint64(0x100, true)).toBe(MM_VALUE)
      expect(dv.getUint16(0x108, true)).toBe(0xffff)
    }
  })
  test('x87 pushes are visible to MMX reads (movd eax, mm7 after fld1 = low half of 1.0)', () => {
    for (const o of run([0xdb, 0xe3, 0xd9, 0xe8, 0x0f, 0x7e, 0xf8])) expect(o.gpr[0]).toBe(0n)
    // fld1 at TOP 7: R7 = 0x8000000000000000; movq rax, mm7 (REX.W 0F 7E)
    for (const o of run([0xdb, 0xe3, 0xd9, 0xe8, 0x48, 0x0f, 0x7e, 0xf8]))
      expect(o.gpr[0]).toBe(0x8000000000000000n)
  })
})

describe('unmasked FP exceptions', () => {
  // fldcw [rbx+0x40]; fld1; fldz; fdivp (1/0, ZE unmasked); paddb mm0, mm1
  const X87 = [0xd9, 0x6b, 0x40, 0xd9, 0xe8, 0xd9, 0xee, 0xde, 0xf9]
  const PADDB = [0x0f, 0xfc, 0xc1]
  const at = (n: number) => BigInt.asUintN(64, FLAT_CODE_ADDRESS + BigInt(n))
  test('x87: ES set by the fdivp, #MF at the next waiting (MMX) instruction with CR0.NE', () => {
    for (const o of run([...X87, ...PADDB], { linuxFpu: true })) {
      expect(o.fault).toEqual({ vector: 16, errorCode: 0 })
      expect(o.rip).toBe(at(X87.length))
    }
  })
  test('x87: fnstsw does not wait; fnclex clears the pending exception', () => {
    // fnstsw ax; fnclex; paddb
    for (const o of run([...X87, 0xdf, 0xe0, 0xdb, 0xe2, ...PADDB], { linuxFpu: true })) {
      expect(o.fault).toBe(null)
      expect(Number(o.gpr[0]) & 0x8084).toBe(0x8084) // B, ES, ZE
    }
  })
  test('x87: without CR0.NE nothing is delivered', () => {
    for (const o of run([...X87, ...PADDB])) expect(o.fault).toBe(null)
  })
  // ldmxcsr [rbx+0x48]; movss xmm1, [rbx+0x50]; divss xmm1, xmm0 (1/0)
  const SSE = [0x0f, 0xae, 0x53, 0x48, 0xf3, 0x0f, 0x10, 0x4b, 0x50, 0xf3, 0x0f, 0x5e, 0xc8]
  test('SSE: #XM with CR4.OSXMMEXCPT, destination unchanged, ZE set', () => {
    for (const o of run(SSE, { linuxFpu: true })) {
      expect(o.fault).toEqual({ vector: 19, errorCode: 0 })
      expect(o.rip).toBe(at(SSE.length - 4))
      expect(new DataView(o.xmm.buffer, o.xmm.byteOffset).getFloat32(16, true)).toBe(1)
      expect(o.mxcsr & 0x3f).toBe(0x04)
    }
  })
  test('SSE: #UD without CR4.OSXMMEXCPT', () => {
    for (const o of run(SSE)) expect(o.fault).toEqual({ vector: 6, errorCode: 0 })
  })
})
