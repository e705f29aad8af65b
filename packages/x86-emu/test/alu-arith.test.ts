// The integer ALU families of arith.ts (add adc sub sbb cmp and or xor test
// inc dec neg not) at every size: results and flags computed by hand from
// the SDM's definitions, run through the flat runner.

import { describe, expect, test } from 'vitest'
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
  rd,
  run,
  runBig,
  SF,
  ZF,
} from './support/asm.js'

interface Row extends Expect {
  name: string
  code: string
  in?: Partial<Record<Reg, bigint>>
  cf?: boolean
  /** All input flags (overrides cf). */
  flagsIn?: bigint
  data?: number[]
}

/** and/or/xor/test leave AF undefined. */
const LOGIC = ARITH & ~AF

function table(rows: Row[]): void {
  for (const t of rows) {
    test(t.name, () => {
      const r = run({ code: t.code, regs: t.in, flags: t.flagsIn ?? (t.cf ? CF : 0n), data: t.data })
      expectResult(r, t)
    })
  }
}

describe('add', () => {
  table([
    {
      name: 'add al, bl: 0xff + 1 wraps, carries, preserves the rest of rax',
      code: '00 d8',
      in: { rax: 0x11223344556677ffn, rbx: 1n },
      regs: { rax: 0x1122334455667700n, rbx: 1n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'add al, 0x7f: signed overflow into the sign bit',
      code: '04 7f',
      in: { rax: 1n },
      regs: { rax: 0x80n },
      flags: OF | SF | AF,
    },
    {
      name: 'add ax, bx: 0x8000 + 0x8000 overflows both ways, upper bits kept',
      code: '66 01 d8',
      in: { rax: 0xdeadbeefcafe8000n, rbx: 0x8000n },
      regs: { rax: 0xdeadbeefcafe0000n },
      flags: CF | OF | ZF | PF,
    },
    {
      name: 'add eax, ebx: 32-bit result zero-extends rax',
      code: '01 d8',
      in: { rax: 0x12345678ffffffffn, rbx: 1n },
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'add rax, rbx: 64-bit signed overflow',
      code: '48 01 d8',
      in: { rax: 0x7fffffffffffffffn, rbx: 1n },
      regs: { rax: 0x8000000000000000n },
      flags: OF | SF | AF | PF,
    },
    {
      name: 'add rax, rbx: carry from the low into the high half',
      code: '48 01 d8',
      in: { rax: 0xffffffffn, rbx: 1n },
      regs: { rax: 0x100000000n },
      flags: AF | PF,
    },
    {
      name: 'add rax, rbx: 64-bit carry out',
      code: '48 01 d8',
      in: { rax: 0xffffffffffffffffn, rbx: 2n },
      regs: { rax: 1n },
      flags: CF | AF,
    },
    {
      name: 'add rax, imm32 sign-extended (48 05 ff ff ff ff = add rax, -1)',
      code: '48 05 ff ff ff ff',
      in: { rax: 1n },
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'add [rdi], eax: memory destination',
      code: '01 07',
      in: { rdi: DATA, rax: 1n },
      data: [0xff, 0xff, 0xff, 0xff, 0x55],
      mem: [
        [0, 4, 0n],
        [4, 1, 0x55n],
      ],
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'add qword [rdi], -1 (83 /0 ib)',
      code: '48 83 07 ff',
      in: { rdi: DATA },
      mem: [[0, 8, 0xffffffffffffffffn]],
      flags: SF | PF,
    },
  ])
})

describe('adc', () => {
  table([
    {
      name: 'adc al, bl with CF=1: 0xfe + 1 + 1',
      code: '10 d8',
      in: { rax: 0xfen, rbx: 1n },
      cf: true,
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'adc al, bl with CF=0: 0xfe + 1',
      code: '10 d8',
      in: { rax: 0xfen, rbx: 1n },
      regs: { rax: 0xffn },
      flags: SF | PF,
    },
    {
      name: 'adc eax, ebx: 0xffffffff + 0xffffffff + 1',
      code: '11 d8',
      in: { rax: 0xffffffffn, rbx: 0xffffffffn },
      cf: true,
      regs: { rax: 0xffffffffn },
      flags: CF | AF | SF | PF,
    },
    {
      name: 'adc rax, rbx: carry-in alone carries out of 64 bits',
      code: '48 11 d8',
      in: { rax: 0xffffffffffffffffn, rbx: 0n },
      cf: true,
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'adc rax, rbx: carry-in alone overflows signed',
      code: '48 11 d8',
      in: { rax: 0x7fffffffffffffffn, rbx: 0n },
      cf: true,
      regs: { rax: 0x8000000000000000n },
      flags: OF | SF | AF | PF,
    },
  ])
})

describe('sub, cmp', () => {
  table([
    {
      name: 'sub al, bl: 0 - 1 borrows',
      code: '28 d8',
      in: { rax: 0n, rbx: 1n },
      regs: { rax: 0xffn },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'sub eax, ebx: 0x80000000 - 1 overflows, zero-extends',
      code: '29 d8',
      in: { rax: 0xffffffff80000000n, rbx: 1n },
      regs: { rax: 0x7fffffffn },
      flags: OF | AF | PF,
    },
    {
      name: 'sub ax, 1 (83 /5): 0 - 1 keeps bits 16-63',
      code: '66 83 e8 01',
      in: { rax: 0x123456789abc0000n },
      regs: { rax: 0x123456789abcffffn },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'cmp rax, rbx: 1 - 2, operands unchanged',
      code: '48 39 d8',
      in: { rax: 1n, rbx: 2n },
      regs: { rax: 1n, rbx: 2n },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'cmp rax, rbx: most negative - 1 overflows',
      code: '48 39 d8',
      in: { rax: 0x8000000000000000n, rbx: 1n },
      regs: { rax: 0x8000000000000000n },
      flags: OF | AF | PF,
    },
    {
      name: 'cmp al, 0x80: 0x7f - 0x80',
      code: '3c 80',
      in: { rax: 0x7fn },
      regs: { rax: 0x7fn },
      flags: CF | OF | SF | PF,
    },
    {
      name: 'cmp byte [rdi], 0x10: equal',
      code: '80 3f 10',
      in: { rdi: DATA },
      data: [0x10],
      flags: ZF | PF,
    },
    {
      name: 'sub rax, [rdi]: 64-bit borrow across the halves',
      code: '48 2b 07',
      in: { rax: 0x100000000n, rdi: DATA },
      data: [1, 0, 0, 0, 0, 0, 0, 0],
      regs: { rax: 0xffffffffn },
      flags: AF | PF,
    },
  ])
})

describe('sbb', () => {
  table([
    {
      name: 'sbb al, bl with CF=1: 0 - 0 - 1',
      code: '18 d8',
      in: { rax: 0n, rbx: 0n },
      cf: true,
      regs: { rax: 0xffn },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'sbb al, bl with CF=1: 0x80 - 0x7f - 1 = 0 overflows signed',
      code: '18 d8',
      in: { rax: 0x80n, rbx: 0x7fn },
      cf: true,
      regs: { rax: 0n },
      flags: ZF | OF | AF | PF,
    },
    {
      name: 'sbb al, bl with CF=0 is sub',
      code: '18 d8',
      in: { rax: 0x80n, rbx: 0x7fn },
      regs: { rax: 1n },
      flags: OF | AF,
    },
    {
      name: 'sbb rax, rbx with CF=1: 0 - (2^64-1) - 1 borrows to 0',
      code: '48 19 d8',
      in: { rax: 0n, rbx: 0xffffffffffffffffn },
      cf: true,
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'sbb rax, rbx with CF=1: borrow across the halves',
      code: '48 19 d8',
      in: { rax: 0x100000000n, rbx: 0n },
      cf: true,
      regs: { rax: 0xffffffffn },
      flags: AF | PF,
    },
  ])
})

describe('and, or, xor, test (AF undefined)', () => {
  table([
    {
      name: 'and al, bl clears CF and OF',
      code: '20 d8',
      in: { rax: 0xf0n, rbx: 0x3cn },
      flagsIn: CF | OF,
      regs: { rax: 0x30n },
      flags: PF,
      mask: LOGIC,
    },
    {
      name: 'or eax, ebx zero-extends',
      code: '09 d8',
      in: { rax: 0xffffffff80000000n, rbx: 1n },
      regs: { rax: 0x80000001n },
      flags: SF,
      mask: LOGIC,
    },
    {
      name: 'xor rax, rax',
      code: '48 31 c0',
      in: { rax: 0x123456789n },
      flagsIn: CF | OF | SF,
      regs: { rax: 0n },
      flags: ZF | PF,
      mask: LOGIC,
    },
    {
      name: 'xor ax, bx keeps bits 16-63',
      code: '66 31 d8',
      in: { rax: 0x111122223333ffffn, rbx: 0xffn },
      regs: { rax: 0x111122223333ff00n },
      flags: SF | PF,
      mask: LOGIC,
    },
    {
      name: 'test al, 0x80 writes nothing',
      code: 'a8 80',
      in: { rax: 0x80n },
      flagsIn: CF | OF,
      regs: { rax: 0x80n },
      flags: SF,
      mask: LOGIC,
    },
    {
      name: 'test rax, rbx on the high half',
      code: '48 85 d8',
      in: { rax: 0xff00000000000000n, rbx: 0x0f00000000000000n },
      regs: { rax: 0xff00000000000000n },
      flags: PF,
      mask: LOGIC,
    },
    {
      name: 'and rax, imm32 sign-extended: and rax, 0xfffffff0',
      code: '48 25 f0 ff ff ff',
      in: { rax: 0x80000000000000ffn },
      regs: { rax: 0x80000000000000f0n },
      flags: SF | PF,
      mask: LOGIC,
    },
    {
      name: 'or byte [rdi], 0x81',
      code: '80 0f 81',
      in: { rdi: DATA },
      data: [0x02],
      mem: [[0, 1, 0x83n]],
      flags: SF,
      mask: LOGIC,
    },
  ])
})

describe('byte registers', () => {
  table([
    {
      name: 'add ah, bh (no REX: 4..7 are AH CH DH BH)',
      code: '00 fc',
      in: { rax: 0x1234n, rbx: 0x5678n },
      regs: { rax: 0x6834n, rbx: 0x5678n },
      flags: 0n,
    },
    {
      name: 'add dh, bh (00 fe without REX)',
      code: '00 fe',
      in: { rdx: 0x7f00n, rbx: 0x0100n },
      regs: { rdx: 0x8000n },
      flags: OF | SF | AF,
    },
    {
      name: 'add sil, dil (the same ModRM with REX)',
      code: '40 00 fe',
      in: { rsi: 0x10ffn, rdi: 0x2001n, rdx: 0x7f00n, rbx: 0x0100n },
      regs: { rsi: 0x1000n, rdi: 0x2001n, rdx: 0x7f00n, rbx: 0x0100n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'sub r8b, r9b (45 28 c8)',
      code: '45 28 c8',
      in: { r8: 0xffffffffffffff05n, r9: 0x06n },
      regs: { r8: 0xffffffffffffffffn },
      flags: CF | SF | AF | PF,
    },
  ])
})

describe('inc, dec (CF preserved)', () => {
  table([
    {
      name: 'inc al: 0xff -> 0 keeps CF=1',
      code: 'fe c0',
      in: { rax: 0xffn },
      cf: true,
      regs: { rax: 0n },
      flags: CF | ZF | AF | PF,
    },
    {
      name: 'inc eax: 0x7fffffff overflows, CF stays 0',
      code: 'ff c0',
      in: { rax: 0x7fffffffn },
      regs: { rax: 0x80000000n },
      flags: OF | SF | AF | PF,
    },
    {
      name: 'dec rax: 0 -> -1 with CF=0 kept',
      code: '48 ff c8',
      in: { rax: 0n },
      regs: { rax: 0xffffffffffffffffn },
      flags: SF | AF | PF,
    },
    {
      name: 'dec rax: most negative -> most positive, CF=1 kept',
      code: '48 ff c8',
      in: { rax: 0x8000000000000000n },
      cf: true,
      regs: { rax: 0x7fffffffffffffffn },
      flags: CF | OF | AF | PF,
    },
    {
      name: 'inc rax: carry into the high half',
      code: '48 ff c0',
      in: { rax: 0xffffffffn },
      regs: { rax: 0x100000000n },
      flags: AF | PF,
    },
    {
      name: 'inc dword [rdi]',
      code: 'ff 07',
      in: { rdi: DATA },
      data: [0xff, 0xff, 0xff, 0xff],
      mem: [[0, 4, 0n]],
      flags: ZF | AF | PF,
    },
    {
      name: 'dec word [rdi]',
      code: '66 ff 0f',
      in: { rdi: DATA },
      data: [0, 0, 0x77],
      mem: [
        [0, 2, 0xffffn],
        [2, 1, 0x77n],
      ],
      flags: SF | AF | PF,
    },
    {
      name: 'inc ch (fe c5)',
      code: 'fe c5',
      in: { rcx: 0xff00n },
      regs: { rcx: 0n },
      flags: ZF | AF | PF,
    },
  ])
})

describe('neg, not', () => {
  table([
    {
      name: 'neg al: 0 -> 0 with CF=0',
      code: 'f6 d8',
      in: { rax: 0n },
      cf: true,
      regs: { rax: 0n },
      flags: ZF | PF,
    },
    {
      name: 'neg al: 0x80 -> 0x80 overflows',
      code: 'f6 d8',
      in: { rax: 0x80n },
      regs: { rax: 0x80n },
      flags: CF | OF | SF,
    },
    {
      name: 'neg eax: 1 -> 0xffffffff zero-extended',
      code: 'f7 d8',
      in: { rax: 0xabcdef0000000001n },
      regs: { rax: 0xffffffffn },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'neg rax: borrow into the high half',
      code: '48 f7 d8',
      in: { rax: 0x100000000n },
      regs: { rax: 0xffffffff00000000n },
      flags: CF | SF | PF,
    },
    {
      name: 'neg word [rdi]',
      code: '66 f7 1f',
      in: { rdi: DATA },
      data: [0x00, 0x80],
      mem: [[0, 2, 0x8000n]],
      flags: CF | OF | SF | PF,
    },
    {
      name: 'not eax zero-extends and keeps every flag',
      code: 'f7 d0',
      in: { rax: 0xffffffff0000ffffn },
      flagsIn: CF | ZF | SF | OF | PF | AF,
      regs: { rax: 0xffff0000n },
      flags: CF | ZF | SF | OF | PF | AF,
    },
    {
      name: 'not bh',
      code: 'f6 d7',
      in: { rbx: 0x1234n },
      regs: { rbx: 0xed34n },
      flags: 0n,
    },
    {
      name: 'not qword [rdi]',
      code: '48 f7 17',
      in: { rdi: DATA },
      data: [0x0f, 0, 0, 0, 0, 0, 0, 0x80],
      mem: [[0, 8, 0x7ffffffffffffff0n]],
    },
  ])
})

describe('faults are precise', () => {
  test('add [rdi], eax across into an unmapped page: #PF, nothing written, flags kept', () => {
    const r = run({
      code: '01 07',
      regs: { rdi: DATA + 4094n, rax: 1n },
      flags: CF | ZF,
      data: (p) => p.fill(0xee, 4090),
    })
    expectResult(r, { fault: 14, flags: CF | ZF, mem: [[4094, 2, 0xeeeen]], regs: { rax: 1n } })
  })
  test('a qword read across into the last mapped page does not touch the unmapped page after it', () => {
    // Two mapped pages, then nothing. At 4093 the low dword crosses into page 2 and the high dword
    // lies wholly inside it: only pages 1 and 2 may be translated (glibc's memmove does such reads
    // at the top of the stack).
    const data = (p: Uint8Array) => {
      for (let i = 0; i < p.length; i++) p[i] = i & 0xff
    }
    for (const off of [4093, 4095, 4096 + 4088]) {
      const r = runBig({ code: '48 8b 07', regs: { rdi: DATA + BigInt(off) }, pages: 2, data })
      expect(r.fault, `mov rax, [DATA+${off}]`).toBeNull()
      expect(r.regs.rax).toBe(rd(r.data, off, 8))
    }
    const over = runBig({ code: '48 8b 07', regs: { rdi: DATA + 8192n - 4n }, pages: 2, data })
    expect(over.fault).toEqual({ vector: 14, errorCode: 4 }) // user read, not present
  })
  test('movups from the end of the last mapped page reads both halves without faulting', () => {
    const data = (p: Uint8Array) => {
      for (let i = 0; i < p.length; i++) p[i] = (i * 7) & 0xff
    }
    for (let off = 4096 - 15; off < 4096; off++) {
      // movups xmm0, [rdi]; movq rax, xmm0; psrldq xmm0, 8; movq rbx, xmm0
      const r = runBig({
        code: '0f 10 07 66 48 0f 7e c0 66 0f 73 d8 08 66 48 0f 7e c3',
        regs: { rdi: DATA + BigInt(off) },
        pages: 2,
        data,
      })
      expect(r.fault, `movups xmm0, [DATA+${off}]`).toBeNull()
      expect([r.regs.rax, r.regs.rbx]).toEqual([rd(r.data, off, 8), rd(r.data, off + 8, 8)])
    }
  })
  test('sub eax, [rdi] from an unmapped page leaves rax (and its upper half) alone', () => {
    const r = run({ code: '2b 07', regs: { rdi: DATA + 4096n, rax: 0xffffffff00000005n } })
    expectResult(r, { fault: 14, regs: { rax: 0xffffffff00000005n } })
  })
})
