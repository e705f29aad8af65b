// cmpxchg, xadd, cmpxchg8b, cmpxchg16b.

import { describe, expect, test } from 'vitest'
import {
  AF,
  ARITH,
  CF,
  DATA,
  type Expect,
  expectResult,
  le,
  OF,
  PF,
  type Reg,
  run,
  SF,
  ZF,
} from './support/asm.js'
import { FLAT_CODE_ADDRESS } from './support/flat.js'

interface Row extends Expect {
  name: string
  code: string
  in?: Partial<Record<Reg, bigint>>
  flagsIn?: bigint
  data?: number[] | ((p: Uint8Array) => void)
}

const M = (v: bigint) => BigInt.asUintN(64, v)

function table(rows: Row[]): void {
  for (const t of rows) {
    test(t.name, () => {
      const r = run({ code: t.code, regs: t.in, flags: t.flagsIn ?? 0n, data: t.data })
      expectResult(r, { mask: ARITH, ...t })
    })
  }
}

describe('cmpxchg', () => {
  table([
    {
      name: 'register success: dest = src, accumulator untouched',
      code: '0f b1 d1',
      in: { rax: 0xffffffff00000005n, rcx: 5n, rdx: 9n },
      regs: { rax: 0xffffffff00000005n, rcx: 9n, rdx: 9n },
      flags: ZF | PF,
    },
    {
      name: 'register success with a 32-bit destination zero-extends it',
      code: '0f b1 d1',
      in: { rax: 5n, rcx: 0xdeadbeef00000005n, rdx: 9n },
      regs: { rcx: 9n },
      flags: ZF | PF,
    },
    {
      name: 'register failure: accumulator loaded (zero-extended), destination untouched',
      code: '0f b1 d1',
      in: { rax: 0xffffffff00000005n, rcx: 0xdeadbeef00000007n, rdx: 9n },
      regs: { rax: 7n, rcx: 0xdeadbeef00000007n },
      flags: CF | SF | AF,
    },
    {
      name: 'lock cmpxchg [rdi], edx success',
      code: 'f0 0f b1 17',
      in: { rax: 5n, rdx: 9n, rdi: DATA },
      data: le(5n, 4),
      regs: { rax: 5n },
      mem: [[0, 4, 9n]],
      flags: ZF | PF,
    },
    {
      name: 'lock cmpxchg [rdi], edx failure',
      code: 'f0 0f b1 17',
      in: { rax: 5n, rdx: 9n, rdi: DATA },
      data: le(7n, 4),
      regs: { rax: 7n },
      mem: [[0, 4, 7n]],
      flags: CF | SF | AF,
    },
    {
      name: 'cmpxchg bl, cl',
      code: '0f b0 cb',
      in: { rax: 0x10n, rbx: 0x10n, rcx: 0x20n },
      regs: { rbx: 0x20n, rax: 0x10n },
      flags: ZF | PF,
    },
    {
      name: 'cmpxchg ah, ch: AL compared with AH',
      code: '0f b0 ec',
      in: { rax: 0x1010n, rcx: 0x2000n },
      regs: { rax: 0x2010n },
      flags: ZF | PF,
    },
    {
      name: 'cmpxchg cx, dx failure keeps bits 16-63 of rax',
      code: '66 0f b1 d1',
      in: { rax: 0xffffffffffff0001n, rcx: 0x1111111111110002n },
      regs: { rax: 0xffffffffffff0002n, rcx: 0x1111111111110002n },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'cmpxchg [rdi], rcx success',
      code: '48 0f b1 0f',
      in: { rax: 0x1122334455667788n, rcx: 0xcafen, rdi: DATA },
      data: le(0x1122334455667788n, 8),
      mem: [[0, 8, 0xcafen]],
      flags: ZF | PF,
    },
    {
      name: 'cmpxchg [rdi], rcx failure in the high half',
      code: '48 0f b1 0f',
      in: { rax: 0x0000000155667788n, rcx: 0xcafen, rdi: DATA },
      data: le(0x1122334455667788n, 8),
      regs: { rax: 0x1122334455667788n },
      mem: [[0, 8, 0x1122334455667788n]],
      flags: CF | SF | PF,
    },
  ])
  test('a failing compare still writes: read-only memory faults and nothing changes', () => {
    const r = run({ code: 'f0 0f b1 17', regs: { rax: 0n, rdx: 9n, rdi: FLAT_CODE_ADDRESS }, flags: CF })
    expectResult(r, { fault: 14, regs: { rax: 0n }, flags: CF })
    expect((r.fault?.errorCode ?? 0) & 2).toBe(2)
  })
})

describe('xadd', () => {
  table([
    {
      name: 'xadd [rdi], eax',
      code: '0f c1 07',
      in: { rax: 0xaaaaaaaa00000001n, rdi: DATA },
      data: le(0xffffffffn, 4),
      regs: { rax: 0xffffffffn },
      mem: [[0, 4, 0n]],
      flags: CF | ZF | AF | PF,
    },
    { name: 'xadd eax, eax leaves the sum', code: '0f c1 c0', in: { rax: 3n }, regs: { rax: 6n }, flags: PF },
    {
      name: 'xadd cl, dl',
      code: '0f c0 d1',
      in: { rcx: 0x7fn, rdx: 1n },
      regs: { rcx: 0x80n, rdx: 0x7fn },
      flags: OF | SF | AF,
    },
    {
      name: 'xadd rbx, rcx',
      code: '48 0f c1 cb',
      in: { rbx: M(-1n), rcx: 2n },
      regs: { rbx: 1n, rcx: M(-1n) },
      flags: CF | AF,
    },
  ])
})

describe('cmpxchg8b / cmpxchg16b (only ZF changes)', () => {
  table([
    {
      name: 'cmpxchg8b success (unaligned is fine)',
      code: '0f c7 0f',
      in: {
        rax: 0xaaaaaaaa22222222n,
        rdx: 0xbbbbbbbb11111111n,
        rbx: 0x33333333n,
        rcx: 0x44444444n,
        rdi: DATA + 3n,
      },
      flagsIn: CF | SF,
      data: [0, 0, 0, ...le(0x1111111122222222n, 8)],
      regs: { rax: 0xaaaaaaaa22222222n, rdx: 0xbbbbbbbb11111111n },
      mem: [[3, 8, 0x4444444433333333n]],
      flags: CF | SF | ZF,
    },
    {
      name: 'cmpxchg8b failure loads edx:eax zero-extended',
      code: '0f c7 0f',
      in: {
        rax: 0xaaaaaaaa22222222n,
        rdx: 0xbbbbbbbb11111111n,
        rbx: 0x33333333n,
        rcx: 0x44444444n,
        rdi: DATA,
      },
      flagsIn: CF | ZF,
      data: le(0x1111111122222223n, 8),
      regs: { rax: 0x22222223n, rdx: 0x11111111n },
      mem: [[0, 8, 0x1111111122222223n]],
      flags: CF,
    },
    {
      name: 'cmpxchg16b success',
      code: '48 0f c7 0f',
      in: { rax: 0x0123456789abcdefn, rdx: 0xfedcba9876543210n, rbx: 0x1111n, rcx: 0x2222n, rdi: DATA + 16n },
      data: [...new Array(16).fill(0), ...le(0x0123456789abcdefn, 8), ...le(0xfedcba9876543210n, 8)],
      regs: { rax: 0x0123456789abcdefn, rdx: 0xfedcba9876543210n },
      mem: [
        [16, 8, 0x1111n],
        [24, 8, 0x2222n],
      ],
      flags: ZF,
    },
    {
      name: 'cmpxchg16b failure loads rdx:rax',
      code: '48 0f c7 0f',
      in: { rax: 0x0123456789abcdefn, rdx: 0xfedcba9876543211n, rbx: 0x1111n, rcx: 0x2222n, rdi: DATA + 16n },
      flagsIn: ZF,
      data: [...new Array(16).fill(0), ...le(0x0123456789abcdefn, 8), ...le(0xfedcba9876543210n, 8)],
      regs: { rax: 0x0123456789abcdefn, rdx: 0xfedcba9876543210n },
      mem: [
        [16, 8, 0x0123456789abcdefn],
        [24, 8, 0xfedcba9876543210n],
      ],
      flags: 0n,
    },
  ])
  test('cmpxchg16b on an 8-byte-aligned operand: #GP(0), nothing changes', () => {
    const r = run({
      code: '48 0f c7 0f',
      regs: { rax: 1n, rdx: 2n, rbx: 3n, rcx: 4n, rdi: DATA + 8n },
      data: [...new Array(8).fill(0), ...le(1n, 8), ...le(2n, 8)],
    })
    expectResult(r, { fault: 13, regs: { rax: 1n, rdx: 2n }, mem: [[8, 8, 1n]] })
    expect(r.fault?.errorCode).toBe(0)
  })
})
