// Small integer-baseline instructions compiled in families.ts: fences,
// clflush, movnti, mov r/m from a segment register, pause.

import { describe, expect, test } from 'vitest'
import { DATA, expectResult, run } from './support/asm.js'

describe('fences and cache control', () => {
  test('lfence, mfence, sfence, pause are no-ops', () => {
    // lfence ; mfence ; sfence ; pause ; mov eax, 1
    const r = run({ code: '0f ae e8 0f ae f0 0f ae f8 f3 90 b8 01 00 00 00', regs: { rbx: 7n } })
    expectResult(r, { regs: { rax: 1n, rbx: 7n } })
    expect(r.offset).toBe(16)
  })
  test('clflush [rdi] on mapped memory', () => {
    expectResult(run({ code: '0f ae 3f', regs: { rdi: DATA } }), {})
  })
  test('clflush faults like a byte load on unmapped memory', () => {
    expectResult(run({ code: '0f ae 3f', regs: { rdi: DATA + 4096n } }), { fault: 14 })
  })
})

describe('movnti', () => {
  test('movnti [rdi], eax stores 4 bytes', () => {
    const r = run({
      code: '0f c3 07',
      regs: { rax: 0x9911223344n, rdi: DATA },
      data: new Array(8).fill(0xee),
    })
    expectResult(r, { mem: [[0, 8, 0xeeeeeeee11223344n]] })
  })
  test('movnti [rdi], rax stores 8 bytes', () => {
    const r = run({ code: '48 0f c3 07', regs: { rax: 0x0102030405060708n, rdi: DATA } })
    expectResult(r, { mem: [[0, 8, 0x0102030405060708n]] })
  })
})

describe('mov r/m, Sreg (8C)', () => {
  // The flat runner runs at CPL 3 with CS = 0x33 and SS = 0x2b.
  test('mov eax, cs zero-extends', () => {
    expectResult(run({ code: '8c c8', regs: { rax: BigInt.asUintN(64, -1n) } }), { regs: { rax: 0x33n } })
  })
  test('mov rax, ss', () => {
    expectResult(run({ code: '48 8c d0', regs: { rax: BigInt.asUintN(64, -1n) } }), { regs: { rax: 0x2bn } })
  })
  test('mov ax, ss writes 16 bits', () => {
    expectResult(run({ code: '66 8c d0', regs: { rax: BigInt.asUintN(64, -1n) } }), {
      regs: { rax: 0xffffffffffff002bn },
    })
  })
  test('mov [rdi], ss stores a word', () => {
    const r = run({ code: '8c 17', regs: { rdi: DATA }, data: [0xff, 0xff, 0xff] })
    expectResult(r, { mem: [[0, 4, 0xff002bn]] })
  })
})
