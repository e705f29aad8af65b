// String instructions: every size, rep/repe/repne, DF, 32-bit addressing,
// precise faults part-way through a rep, overlap semantics, and rep
// instructions that run longer than one chunk (REP_CHUNK) and resume.

import { describe, expect, test } from 'vitest'
import { REP_CHUNK } from '../src/exec/string.js'
import {
  AF,
  ARITH,
  CF,
  DATA,
  DF,
  type Expect,
  expectResult,
  PF,
  type Reg,
  run,
  runBig,
  SF,
  ZF,
} from './support/asm.js'

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
      expectResult(r, t)
    })
  }
}

function bytes(s: string): number[] {
  return [...s].map((ch) => ch.charCodeAt(0))
}

describe('movs', () => {
  table([
    {
      name: 'movsb',
      code: 'a4',
      in: { rsi: DATA, rdi: DATA + 100n },
      data: [0x5a],
      regs: { rsi: DATA + 1n, rdi: DATA + 101n },
      mem: [[100, 1, 0x5an]],
    },
    {
      name: 'movsw',
      code: '66 a5',
      in: { rsi: DATA, rdi: DATA + 100n },
      data: [1, 2, 3],
      regs: { rsi: DATA + 2n, rdi: DATA + 102n },
      mem: [[100, 4, 0x0201n]],
    },
    {
      name: 'movsd',
      code: 'a5',
      in: { rsi: DATA, rdi: DATA + 100n },
      data: [1, 2, 3, 4, 5],
      regs: { rsi: DATA + 4n, rdi: DATA + 104n },
      mem: [[100, 8, 0x04030201n]],
    },
    {
      name: 'movsq with DF=1 steps down',
      code: '48 a5',
      in: { rsi: DATA + 8n, rdi: DATA + 64n },
      flagsIn: DF,
      data: [0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
      regs: { rsi: DATA, rdi: DATA + 56n },
      mem: [[64, 8, 0x0807060504030201n]],
    },
    {
      name: 'rep movsb, 300 bytes',
      code: 'f3 a4',
      in: { rsi: DATA, rdi: DATA + 1000n, rcx: 300n },
      data: (p) => {
        for (let i = 0; i < 300; i++) p[i] = (i * 7) & 0xff
      },
      regs: { rsi: DATA + 300n, rdi: DATA + 1300n, rcx: 0n },
      mem: [
        [1000, 1, 0n],
        [1001, 1, 7n],
        [1299, 1, BigInt((299 * 7) & 0xff)],
        [1300, 1, 0n],
      ],
    },
    {
      name: 'rep movsq with DF=1',
      code: 'f3 48 a5',
      in: { rsi: DATA + 24n, rdi: DATA + 2024n, rcx: 4n },
      flagsIn: DF,
      data: (p) => {
        for (let i = 0; i < 32; i++) p[i] = i + 1
      },
      regs: { rsi: DATA - 8n, rdi: DATA + 1992n, rcx: 0n },
      mem: [
        [2000, 8, 0x0807060504030201n],
        [2024, 8, 0x201f1e1d1c1b1a19n],
        [1992, 8, 0n],
      ],
    },
  ])
})

describe('stos, lods', () => {
  table([
    {
      name: 'rep stosb, 3000 bytes',
      code: 'f3 aa',
      in: { rax: 0x41n, rdi: DATA + 10n, rcx: 3000n },
      regs: { rdi: DATA + 3010n, rcx: 0n },
      mem: [
        [9, 1, 0n],
        [10, 1, 0x41n],
        [3009, 1, 0x41n],
        [3010, 1, 0n],
      ],
    },
    {
      name: 'rep stosb with rcx = 0 does nothing',
      code: 'f3 aa',
      in: { rax: 0x41n, rdi: DATA, rcx: 0n },
      flagsIn: ZF | CF,
      regs: { rdi: DATA, rcx: 0n },
      flags: ZF | CF,
      mem: [[0, 1, 0n]],
    },
    {
      name: 'rep stosb with DF=1',
      code: 'f3 aa',
      in: { rax: 0x99n, rdi: DATA + 99n, rcx: 100n },
      flagsIn: DF,
      regs: { rdi: DATA - 1n, rcx: 0n },
      mem: [
        [0, 8, 0x9999999999999999n],
        [92, 8, 0x9999999999999999n],
        [100, 1, 0n],
      ],
    },
    {
      name: 'rep stosd with 67h: edi and ecx, written back zero-extended',
      code: '67 f3 ab',
      in: { rax: 0x11223344n, rdi: 0xffffffff00000000n | DATA, rcx: 0xdead000000000004n },
      regs: { rdi: DATA + 16n, rcx: 0n },
      mem: [
        [0, 8, 0x1122334411223344n],
        [8, 8, 0x1122334411223344n],
        [16, 1, 0n],
      ],
    },
    {
      name: 'rep stosq',
      code: 'f3 48 ab',
      in: { rax: 0x0102030405060708n, rdi: DATA + 8n, rcx: 3n },
      regs: { rdi: DATA + 32n, rcx: 0n },
      mem: [
        [0, 8, 0n],
        [8, 8, 0x0102030405060708n],
        [24, 8, 0x0102030405060708n],
        [32, 8, 0n],
      ],
    },
    {
      name: 'stosw with DF=1',
      code: '66 ab',
      in: { rax: 0xbeefn, rdi: DATA + 10n },
      flagsIn: DF,
      regs: { rdi: DATA + 8n },
      mem: [[10, 2, 0xbeefn]],
    },
    {
      name: 'lodsb keeps bits 8-63',
      code: 'ac',
      in: { rax: M(-1n), rsi: DATA },
      data: [0x42],
      regs: { rax: 0xffffffffffffff42n, rsi: DATA + 1n },
    },
    {
      name: 'lodsd zero-extends',
      code: 'ad',
      in: { rax: M(-1n), rsi: DATA },
      data: [0x11, 0x22, 0x33, 0x44],
      regs: { rax: 0x44332211n, rsi: DATA + 4n },
    },
    {
      name: 'lodsq',
      code: '48 ad',
      in: { rsi: DATA },
      data: [1, 2, 3, 4, 5, 6, 7, 8],
      regs: { rax: 0x0807060504030201n, rsi: DATA + 8n },
    },
    {
      name: 'rep lodsb leaves the last byte',
      code: 'f3 ac',
      in: { rsi: DATA, rcx: 5n },
      data: [1, 2, 3, 4, 5, 6],
      regs: { rax: 5n, rsi: DATA + 5n, rcx: 0n },
    },
  ])
})

describe('scas, cmps', () => {
  table([
    {
      name: 'scasb: flags of al - [rdi]',
      code: 'ae',
      in: { rax: 0x10n, rdi: DATA },
      data: [0x20],
      regs: { rdi: DATA + 1n },
      flags: CF | SF | PF,
    },
    {
      name: 'repne scasb: strlen of "hello"',
      code: 'f2 ae',
      in: { rax: 0n, rdi: DATA, rcx: M(-1n) },
      data: [...bytes('hello'), 0],
      regs: { rdi: DATA + 6n, rcx: M(-7n) },
      flags: ZF | PF,
    },
    {
      name: 'repe scasd stops at the first different dword',
      code: 'f3 af',
      in: { rax: 7n, rdi: DATA, rcx: 10n },
      data: [7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0],
      regs: { rdi: DATA + 16n, rcx: 6n },
      flags: CF | SF | AF,
    },
    {
      name: 'repe cmpsb stops after the first difference',
      code: 'f3 a6',
      in: { rsi: DATA, rdi: DATA + 100n, rcx: 10n },
      data: (p) => {
        p.set(bytes('abcdeaghij'), 0)
        p.set(bytes('abcdebghij'), 100)
      },
      regs: { rsi: DATA + 6n, rdi: DATA + 106n, rcx: 4n },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'repe cmpsb over equal buffers runs rcx out',
      code: 'f3 a6',
      in: { rsi: DATA, rdi: DATA + 100n, rcx: 8n },
      data: (p) => {
        p.set(bytes('abcdefgh'), 0)
        p.set(bytes('abcdefgh'), 100)
      },
      regs: { rsi: DATA + 8n, rdi: DATA + 108n, rcx: 0n },
      flags: ZF | PF,
    },
    {
      name: 'repne cmpsb stops at the first equal byte',
      code: 'f2 a6',
      in: { rsi: DATA, rdi: DATA + 100n, rcx: 10n },
      data: (p) => {
        p.set(bytes('abcd'), 0)
        p.set(bytes('xycd'), 100)
      },
      regs: { rsi: DATA + 3n, rdi: DATA + 103n, rcx: 7n },
      flags: ZF | PF,
    },
    {
      name: 'repe cmpsq',
      code: 'f3 48 a7',
      in: { rsi: DATA, rdi: DATA + 100n, rcx: 5n },
      data: (p) => {
        p.set([1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3], 0)
        p.set([1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 4], 100)
      },
      regs: { rsi: DATA + 24n, rdi: DATA + 124n, rcx: 2n },
      flags: CF | SF | AF | PF,
    },
    {
      name: 'cmpsw with DF=1',
      code: '66 a7',
      in: { rsi: DATA + 10n, rdi: DATA + 20n },
      flagsIn: DF,
      data: (p) => {
        p[10] = 1
        p[20] = 1
      },
      regs: { rsi: DATA + 8n, rdi: DATA + 18n },
      flags: ZF | PF,
      mask: ARITH,
    },
  ])
})

describe('faults part-way through a rep', () => {
  test('rep stosb running off the page: rcx and rdi describe the bytes written', () => {
    const r = run({ code: 'f3 aa', regs: { rax: 0x77n, rdi: DATA + 4086n, rcx: 20n } })
    expectResult(r, {
      fault: 14,
      regs: { rcx: 10n, rdi: DATA + 4096n },
      mem: [
        [4085, 1, 0n],
        [4086, 2, 0x7777n],
        [4088, 8, 0x7777777777777777n],
      ],
    })
    expect(r.offset).toBe(0)
  })
  test('rep movsq reading off the page', () => {
    const r = run({
      code: 'f3 48 a5',
      regs: { rsi: DATA + 4080n, rdi: DATA, rcx: 4n },
      data: (p) => p.fill(0x3c, 4080),
    })
    expectResult(r, {
      fault: 14,
      regs: { rcx: 2n, rsi: DATA + 4096n, rdi: DATA + 16n },
      mem: [
        [0, 8, 0x3c3c3c3c3c3c3c3cn],
        [8, 8, 0x3c3c3c3c3c3c3c3cn],
        [16, 1, 0n],
      ],
    })
  })
  test('an element straddling into an unmapped page faults before anything is written', () => {
    const r = run({ code: 'f3 ab', regs: { rax: M(-1n), rdi: DATA + 4094n, rcx: 3n } })
    expectResult(r, { fault: 14, regs: { rcx: 3n, rdi: DATA + 4094n }, mem: [[4092, 4, 0n]] })
  })
  test('a fault after earlier instructions reports the rep instruction', () => {
    // nop ; nop ; rep stosb
    const r = run({ code: '90 90 f3 aa', regs: { rdi: DATA + 4095n, rcx: 2n } })
    expectResult(r, { fault: 14, regs: { rcx: 1n, rdi: DATA + 4096n } })
    expect(r.offset).toBe(2)
  })
})

describe('overlapping moves keep element-by-element results', () => {
  test('rep movsb with rdi = rsi + 1 replicates the first byte', () => {
    const r = run({ code: 'f3 a4', regs: { rsi: DATA, rdi: DATA + 1n, rcx: 100n }, data: [0xab, 1, 2, 3] })
    expect([...r.data.subarray(0, 101)]).toEqual(new Array(101).fill(0xab))
    expect(r.data[101]).toBe(0)
  })
  test('rep movsq with rdi = rsi + 4 (closer than one element)', () => {
    const r = run({
      code: 'f3 48 a5',
      regs: { rsi: DATA, rdi: DATA + 4n, rcx: 3n },
      data: Array.from({ length: 28 }, (_, i) => i),
    })
    // Each 8-byte element is read whole before it is written.
    expect([...r.data.subarray(0, 28)]).toEqual([
      0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 12, 13, 14, 15, 12, 13, 14, 15, 20, 21, 22, 23,
    ])
  })
  test('rep movsb with DF=1 and rdi = rsi - 1 replicates downwards', () => {
    const r = run({
      code: 'f3 a4',
      regs: { rsi: DATA + 10n, rdi: DATA + 9n, rcx: 10n },
      flags: DF,
      data: Array.from({ length: 16 }, (_, i) => i),
    })
    expect([...r.data.subarray(0, 12)]).toEqual([10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 11])
    expectResult(r, { regs: { rsi: DATA, rdi: DATA - 1n, rcx: 0n } })
  })
  test('rep movsb with DF=1 and rdi = rsi + 1 moves like memmove', () => {
    const r = run({
      code: 'f3 a4',
      regs: { rsi: DATA + 9n, rdi: DATA + 10n, rcx: 10n },
      flags: DF,
      data: Array.from({ length: 16 }, (_, i) => i),
    })
    expect([...r.data.subarray(0, 12)]).toEqual([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11])
  })
})

describe('xlat', () => {
  table([
    {
      name: 'xlat',
      code: 'd7',
      in: { rax: M(-251n), rbx: DATA },
      data: [0, 1, 2, 3, 4, 0x42],
      regs: { rax: 0xffffffffffffff42n },
    },
    {
      name: 'xlat with 67h uses ebx',
      code: '67 d7',
      in: { rax: 0xff05n, rbx: 0xffffffff00000000n | DATA },
      data: [0, 1, 2, 3, 4, 0x42],
      regs: { rax: 0xff42n },
    },
  ])
})

describe(`rep longer than one chunk (REP_CHUNK = ${REP_CHUNK})`, () => {
  const n = 3 * REP_CHUNK + 123
  test('rep stosb stops after a chunk with RIP still on it, then resumes', () => {
    const regs = { rax: 0x5an, rdi: DATA + 1n, rcx: BigInt(n) }
    const one = runBig({ code: 'f3 aa', regs, maxInstructions: 1 })
    expectResult(one, { regs: { rcx: BigInt(n - REP_CHUNK), rdi: DATA + 1n + BigInt(REP_CHUNK) } })
    expect(one.offset).toBe(0)
    expect(one.data[REP_CHUNK]).toBe(0x5a)
    expect(one.data[REP_CHUNK + 1]).toBe(0)
    const two = runBig({ code: 'f3 aa', regs, maxInstructions: 2 })
    expectResult(two, { regs: { rcx: BigInt(n - 2 * REP_CHUNK) } })
    const all = runBig({ code: 'f3 aa', regs })
    expectResult(all, { regs: { rcx: 0n, rdi: DATA + 1n + BigInt(n) } })
    expect(all.data[0]).toBe(0)
    expect(all.data.subarray(1, n + 1).every((b) => b === 0x5a)).toBe(true)
    expect(all.data[n + 1]).toBe(0)
  })
  test('rep movsq across chunks', () => {
    const q = REP_CHUNK + 5
    const r = runBig({
      code: 'f3 48 a5',
      pages: 24,
      regs: { rsi: DATA, rdi: DATA + BigInt(q * 8), rcx: BigInt(q) },
      data: (p) => {
        for (let i = 0; i < q * 8; i++) p[i] = (i * 13) & 0xff
      },
    })
    expectResult(r, { regs: { rcx: 0n, rsi: DATA + BigInt(q * 8), rdi: DATA + BigInt(2 * q * 8) } })
    for (const i of [0, 1, 8 * REP_CHUNK - 1, 8 * REP_CHUNK, q * 8 - 1])
      expect(r.data[q * 8 + i]).toBe((i * 13) & 0xff)
  })
  test('repe cmpsb finds a difference beyond the first chunk', () => {
    const r = runBig({
      code: 'f3 a6',
      regs: { rsi: DATA, rdi: DATA + 32768n, rcx: 6000n },
      data: (p) => {
        for (let i = 0; i < 6000; i++) p[i] = p[32768 + i] = i & 0xff
        p[32768 + 5000] = 0xff
      },
    })
    // 5000 & 0xff = 0x88; 0x88 - 0xff borrows.
    expectResult(r, {
      regs: { rcx: 999n, rsi: DATA + 5001n, rdi: DATA + 32768n + 5001n },
      flags: CF,
      mask: CF | ZF,
    })
  })
  test('repne scasb finds a byte beyond the first chunk', () => {
    const r = runBig({
      code: 'f2 ae',
      regs: { rax: 0x7fn, rdi: DATA, rcx: M(-1n) },
      data: (p) => {
        p[9000] = 0x7f
      },
    })
    expectResult(r, { regs: { rdi: DATA + 9001n, rcx: M(-9002n) }, flags: ZF | PF, mask: ARITH })
  })
})
