// Shifts, rotates and double shifts: results and the SDM-defined flags,
// computed by hand. AF is undefined after a shift; OF only defined for a
// count of 1; CF of shl/shr undefined for counts >= the width.

import { describe, test } from 'vitest'
import {
  AF,
  ARITH,
  CF,
  DATA,
  type Expect,
  expectResult,
  OF,
  PF,
  type Reg,
  run,
  SF,
  ZF,
} from './support/asm.js'

interface Row extends Expect {
  name: string
  code: string
  in?: Partial<Record<Reg, bigint>>
  flagsIn?: bigint
  data?: number[]
}

const SHIFT1 = ARITH & ~AF
const SHIFTN = ARITH & ~AF & ~OF
const ROTN = ARITH & ~OF
const ALL_IN = CF | PF | AF | ZF | SF | OF

function table(rows: Row[]): void {
  for (const t of rows) {
    test(t.name, () => {
      const r = run({ code: t.code, regs: t.in, flags: t.flagsIn ?? 0n, data: t.data })
      expectResult(r, t)
    })
  }
}

describe('shl / sal', () => {
  table([
    {
      name: 'shl al, 1: CF = old bit 7, OF = MSB xor CF, rest of rax kept',
      code: 'd0 e0',
      in: { rax: 0xffffffffffffff81n },
      regs: { rax: 0xffffffffffffff02n },
      flags: CF | OF,
      mask: SHIFT1,
    },
    {
      name: 'shl al, 1 into the sign bit',
      code: 'd0 e0',
      in: { rax: 0x40n },
      regs: { rax: 0x80n },
      flags: OF | SF,
      mask: SHIFT1,
    },
    {
      name: 'sal (/6) is shl',
      code: 'd0 f0',
      in: { rax: 0x81n },
      regs: { rax: 0x02n },
      flags: CF | OF,
      mask: SHIFT1,
    },
    {
      name: 'shl eax, 0: no flag changes, still a 32-bit write',
      code: 'c1 e0 00',
      in: { rax: 0xdeadbeef00000001n },
      flagsIn: ALL_IN,
      regs: { rax: 1n },
      flags: ALL_IN,
    },
    {
      name: 'shl eax, cl with cl = 32: count masked to 0',
      code: 'd3 e0',
      in: { rax: 5n, rcx: 0x20n },
      flagsIn: ZF | CF,
      regs: { rax: 5n },
      flags: ZF | CF,
    },
    {
      name: 'shl eax, cl with cl = 33: count masked to 1',
      code: 'd3 e0',
      in: { rax: 0xc0000000n, rcx: 0x21n },
      regs: { rax: 0x80000000n },
      flags: CF | SF | PF,
      mask: SHIFT1,
    },
    {
      name: 'shl rax, 63',
      code: '48 c1 e0 3f',
      in: { rax: 3n },
      regs: { rax: 0x8000000000000000n },
      flags: CF | SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shl rax, cl with cl = 64: masked to 0',
      code: '48 d3 e0',
      in: { rax: 0x1234n, rcx: 64n },
      flagsIn: CF | OF,
      regs: { rax: 0x1234n },
      flags: CF | OF,
    },
    {
      name: 'shl al, 8 (count = width): result 0',
      code: 'c0 e0 08',
      in: { rax: 0x1201n },
      regs: { rax: 0x1200n },
      flags: ZF | PF,
      mask: SHIFTN & ~CF,
    },
    {
      name: 'shl al, 9 (count > width): result 0',
      code: 'c0 e0 09',
      in: { rax: 0xffn },
      regs: { rax: 0n },
      flags: ZF | PF,
      mask: SHIFTN & ~CF,
    },
    {
      name: 'shl rax, 32: CF = old bit 32',
      code: '48 c1 e0 20',
      in: { rax: 0x180000000n },
      regs: { rax: 0x8000000000000000n },
      flags: CF | SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shl rax, 40',
      code: '48 c1 e0 28',
      in: { rax: 0x800001n },
      regs: { rax: 0x8000010000000000n },
      flags: SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shl dword [rdi], 4',
      code: 'c1 27 04',
      in: { rdi: DATA },
      data: [0x01, 0x00, 0x00, 0x10],
      mem: [[0, 4, 0x10n]],
      flags: CF,
      mask: SHIFTN,
    },
  ])
})

describe('shr', () => {
  table([
    {
      name: 'shr al, 1: OF = old MSB',
      code: 'd0 e8',
      in: { rax: 0x81n },
      regs: { rax: 0x40n },
      flags: CF | OF,
      mask: SHIFT1,
    },
    {
      name: 'shr eax, 31',
      code: 'c1 e8 1f',
      in: { rax: 0x80000000n },
      regs: { rax: 1n },
      flags: 0n,
      mask: SHIFTN,
    },
    {
      name: 'shr rax, 32',
      code: '48 c1 e8 20',
      in: { rax: 0x1234567880000000n },
      regs: { rax: 0x12345678n },
      flags: CF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shr rax, 33: CF = old bit 32',
      code: '48 c1 e8 21',
      in: { rax: 0x8000000100000000n },
      regs: { rax: 0x40000000n },
      flags: CF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shr ax, 1 keeps bits 16-63',
      code: '66 d1 e8',
      in: { rax: 0xffffffffffff0001n },
      regs: { rax: 0xffffffffffff0000n },
      flags: CF | ZF | PF,
      mask: SHIFT1,
    },
  ])
})

describe('sar', () => {
  table([
    {
      name: 'sar al, 1: OF = 0',
      code: 'd0 f8',
      in: { rax: 0x81n },
      flagsIn: OF,
      regs: { rax: 0xc0n },
      flags: CF | SF | PF,
      mask: SHIFT1,
    },
    {
      name: 'sar eax, cl = 31',
      code: 'd3 f8',
      in: { rax: 0x80000000n, rcx: 31n },
      regs: { rax: 0xffffffffn },
      flags: SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'sar ax, 20: count beyond the width fills with the sign, CF = sign',
      code: '66 c1 f8 14',
      in: { rax: 0x1111222233338000n },
      regs: { rax: 0x111122223333ffffn },
      flags: CF | SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'sar rax, 63',
      code: '48 c1 f8 3f',
      in: { rax: 0x4000000000000000n },
      regs: { rax: 0n },
      flags: CF | ZF | PF,
      mask: SHIFTN,
    },
    {
      name: 'sar rax, 40',
      code: '48 c1 f8 28',
      in: { rax: 0x8000000000000000n },
      regs: { rax: 0xffffffffff800000n },
      flags: SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'sar dword [rdi], 4',
      code: 'c1 3f 04',
      in: { rdi: DATA },
      data: [0x10, 0x00, 0x00, 0x80],
      mem: [[0, 4, 0xf8000001n]],
      flags: SF,
      mask: SHIFTN,
    },
  ])
})

describe('rol / ror (only CF and OF change)', () => {
  table([
    {
      name: 'rol al, 1',
      code: 'd0 c0',
      in: { rax: 0x81n },
      flagsIn: ZF | SF | PF | AF,
      regs: { rax: 0x03n },
      flags: CF | OF | ZF | SF | PF | AF,
    },
    {
      name: 'rol al, 8: value unchanged, CF = LSB',
      code: 'c0 c0 08',
      in: { rax: 0x81n },
      regs: { rax: 0x81n },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'rol ax, 4',
      code: '66 c1 c0 04',
      in: { rax: 0x1234n },
      regs: { rax: 0x2341n },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'ror eax, 1: OF = xor of the two top bits, zero-extends',
      code: 'd1 c8',
      in: { rax: 0xffffffff00000001n },
      regs: { rax: 0x80000000n },
      flags: CF | OF,
    },
    {
      name: 'rol rax, 36',
      code: '48 c1 c0 24',
      in: { rax: 0x0123456789abcdefn },
      flagsIn: CF,
      regs: { rax: 0x9abcdef012345678n },
      flags: 0n,
      mask: ROTN,
    },
    {
      name: 'ror rax, 4',
      code: '48 c1 c8 04',
      in: { rax: 0x0123456789abcdefn },
      regs: { rax: 0xf0123456789abcden },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'ror rax, cl = 64: masked to 0',
      code: '48 d3 c8',
      in: { rax: 0x0123456789abcdefn, rcx: 0x40n },
      flagsIn: OF,
      regs: { rax: 0x0123456789abcdefn },
      flags: OF,
    },
  ])
})

describe('rcl / rcr (through CF)', () => {
  table([
    { name: 'rcl al, 1', code: 'd0 d0', in: { rax: 0x80n }, regs: { rax: 0n }, flags: CF | OF },
    {
      name: 'rcl al, 9: count mod 9 = 0 changes nothing',
      code: 'c0 d0 09',
      in: { rax: 0x81n },
      flagsIn: CF,
      regs: { rax: 0x81n },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'rcl al, cl = 4 with CF=1',
      code: 'd2 d0',
      in: { rax: 0x81n, rcx: 4n },
      flagsIn: CF,
      regs: { rax: 0x1cn },
      flags: 0n,
      mask: ROTN,
    },
    {
      name: 'rcl ax, 17: count mod 17 = 0',
      code: '66 c1 d0 11',
      in: { rax: 0x8001n },
      regs: { rax: 0x8001n },
      flags: 0n,
      mask: ROTN,
    },
    {
      name: 'rcr ax, 1 with CF=1',
      code: '66 d1 d8',
      in: { rax: 1n },
      flagsIn: CF,
      regs: { rax: 0x8000n },
      flags: CF | OF,
    },
    {
      name: 'rcr eax, cl = 2',
      code: 'd3 d8',
      in: { rax: 3n, rcx: 2n },
      regs: { rax: 0x80000000n },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'rcr al, cl = 9: nothing',
      code: 'd2 d8',
      in: { rax: 0x5an, rcx: 9n },
      regs: { rax: 0x5an },
      flags: 0n,
      mask: ROTN,
    },
    {
      name: 'rcl eax, 31 (a 33-bit rotation)',
      code: 'c1 d0 1f',
      in: { rax: 2n },
      flagsIn: CF,
      regs: { rax: 0x40000000n },
      flags: CF,
      mask: ROTN,
    },
    {
      name: 'rcl rax, 1',
      code: '48 d1 d0',
      in: { rax: 0x8000000000000000n },
      flagsIn: CF,
      regs: { rax: 1n },
      flags: CF | OF,
    },
    {
      name: 'rcr rax, 63 (= rcl by 2 in 65 bits)',
      code: '48 c1 d8 3f',
      in: { rax: 1n },
      regs: { rax: 4n },
      flags: 0n,
      mask: ROTN,
    },
  ])
})

describe('shld / shrd', () => {
  table([
    {
      name: 'shld eax, ebx, 4',
      code: '0f a4 d8 04',
      in: { rax: 0x12345678n, rbx: 0x9abcdef0n },
      regs: { rax: 0x23456789n },
      flags: CF,
      mask: SHIFTN,
    },
    {
      name: 'shrd eax, ebx, cl = 8',
      code: '0f ad d8',
      in: { rax: 0x12345678n, rbx: 0x9abcdef0n, rcx: 8n },
      regs: { rax: 0xf0123456n },
      flags: SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shld rax, rbx, 1',
      code: '48 0f a4 d8 01',
      in: { rax: 0x4000000000000000n, rbx: 0x8000000000000000n },
      regs: { rax: 0x8000000000000001n },
      flags: OF | SF,
      mask: SHIFT1,
    },
    {
      name: 'shrd rax, rbx, 36',
      code: '48 0f ac d8 24',
      in: { rax: 0x0123456789abcdefn, rbx: 0xfedcba9876543210n },
      regs: { rax: 0x8765432100123456n },
      flags: SF | PF,
      mask: SHIFTN,
    },
    {
      name: 'shld rax, rbx, cl = 32',
      code: '48 0f a5 d8',
      in: { rax: 0x12345678n, rbx: 0x9abcdef000000000n, rcx: 32n },
      regs: { rax: 0x123456789abcdef0n },
      flags: PF,
      mask: SHIFTN,
    },
    {
      name: 'shrd rax, rbx, 1',
      code: '48 0f ac d8 01',
      in: { rax: 1n, rbx: 1n },
      regs: { rax: 0x8000000000000000n },
      flags: CF | OF | SF | PF,
      mask: SHIFT1,
    },
    {
      name: 'shld ax, bx, 4 keeps bits 16-63',
      code: '66 0f a4 d8 04',
      in: { rax: 0xaaaaaaaaaaaa1234n, rbx: 0xabcdn },
      regs: { rax: 0xaaaaaaaaaaaa234an },
      flags: CF,
      mask: SHIFTN,
    },
    {
      name: 'shld eax, ebx, 0: flags kept, still a 32-bit write',
      code: '0f a4 d8 00',
      in: { rax: 0xffffffff12345678n, rbx: 0xffffffffn },
      flagsIn: CF | ZF,
      regs: { rax: 0x12345678n },
      flags: CF | ZF,
    },
    {
      name: 'shrd [rdi], eax, 4',
      code: '0f ac 07 04',
      in: { rdi: DATA, rax: 0xfn },
      data: [0x78, 0x56, 0x34, 0x12],
      mem: [[0, 4, 0xf1234567n]],
      flags: CF | SF,
      mask: SHIFTN,
    },
  ])
})

describe('faults', () => {
  test('shl dword [rdi], 1 straddling into an unmapped page: #PF, memory and flags kept', () => {
    const r = run({ code: 'd1 27', regs: { rdi: DATA + 4094n }, flags: ZF, data: (p) => p.fill(0x81, 4092) })
    expectResult(r, { fault: 14, flags: ZF, mem: [[4094, 2, 0x8181n]] })
  })
})
