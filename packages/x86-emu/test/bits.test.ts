// bt/bts/btr/btc, bsf/bsr (and their F3 forms), popcnt, setcc, cmovcc.

import { describe, expect, test } from 'vitest'
import { ARITH, CF, DATA, type Expect, expectResult, OF, PF, type Reg, run, SF, ZF } from './support/asm.js'

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

// bt*: CF is the bit, ZF is unaffected; OF SF AF PF are undefined.
const BT = CF | ZF

describe('bt, bts, btr, btc on registers', () => {
  table([
    {
      name: 'bt eax, 5',
      code: '0f ba e0 05',
      in: { rax: 0x20n },
      flagsIn: ZF,
      regs: { rax: 0x20n },
      flags: CF | ZF,
      mask: BT,
    },
    {
      name: 'bt eax, 37: the immediate is masked to 5',
      code: '0f ba e0 25',
      in: { rax: 0x20n },
      flags: CF,
      mask: BT,
    },
    {
      name: 'bts ecx, 31 zero-extends',
      code: '0f ba e9 1f',
      in: { rcx: 0xffffffff00000000n },
      flagsIn: CF,
      regs: { rcx: 0x80000000n },
      flags: 0n,
      mask: BT,
    },
    {
      name: 'btr rax, 63',
      code: '48 0f ba f0 3f',
      in: { rax: 0x8000000000000001n },
      regs: { rax: 1n },
      flags: CF,
      mask: BT,
    },
    {
      name: 'btc ax, 15 keeps bits 16-63',
      code: '66 0f ba f8 0f',
      in: { rax: 0x1111222233330000n },
      regs: { rax: 0x1111222233338000n },
      flags: 0n,
      mask: BT,
    },
    {
      name: 'bt rax, rcx: the register offset is masked to 6 bits',
      code: '48 0f a3 c8',
      in: { rax: 0x200000000n, rcx: 97n },
      regs: { rax: 0x200000000n },
      flags: CF,
      mask: BT,
    },
    {
      name: 'bts eax, ecx',
      code: '0f ab c8',
      in: { rax: 0xffffffff00000000n, rcx: 0xffffffe0n },
      regs: { rax: 1n },
      flags: 0n,
      mask: BT,
    },
  ])
})

describe('bt* on memory with register offsets', () => {
  table([
    {
      name: 'bt dword [rdi], ecx = -1: bit 31 of the dword below',
      code: '0f a3 0f',
      in: { rdi: DATA + 64n, rcx: 0xffffffffn },
      data: (p) => {
        p[63] = 0x80
      },
      flags: CF,
      mask: BT,
    },
    {
      name: 'bt dword [rdi], ecx = -33: two dwords below',
      code: '0f a3 0f',
      in: { rdi: DATA + 64n, rcx: M(-33n) },
      data: (p) => {
        p[59] = 0x80
      },
      flags: CF,
      mask: BT,
    },
    {
      name: 'bt dword [rdi], ecx = 803: 25 dwords up, bit 3',
      code: '0f a3 0f',
      in: { rdi: DATA, rcx: 803n },
      data: (p) => {
        p[100] = 0x08
      },
      flags: CF,
      mask: BT,
    },
    {
      name: 'bts qword [rdi], rcx = -1: bit 63 of the qword below',
      code: '48 0f ab 0f',
      in: { rdi: DATA + 64n, rcx: M(-1n) },
      mem: [
        [56, 8, 0x8000000000000000n],
        [64, 8, 0n],
      ],
      flags: 0n,
      mask: BT,
    },
    {
      name: 'btr word [rdi], cx = 0xffff: the 16-bit offset is signed',
      code: '66 0f b3 0f',
      in: { rdi: DATA + 64n, rcx: 0xffffn },
      data: (p) => p.fill(0xff, 60, 68),
      mem: [[62, 2, 0x7fffn]],
      flags: CF,
      mask: BT,
    },
    {
      name: 'btr word [rdi], cx = 16: next word, bit 0',
      code: '66 0f b3 0f',
      in: { rdi: DATA + 64n, rcx: 16n },
      data: (p) => {
        p[66] = 0x01
      },
      mem: [[64, 4, 0n]],
      flags: CF,
      mask: BT,
    },
    {
      name: 'btc dword [rdi], 35: an immediate offset is masked, no address change',
      code: '0f ba 3f 23',
      in: { rdi: DATA },
      mem: [[0, 4, 8n]],
      flags: 0n,
      mask: BT,
    },
    {
      name: 'bt qword [rdi], rcx = -2^40: 2^37 bytes below faults',
      code: '48 0f a3 0f',
      in: { rdi: DATA, rcx: M(-(1n << 40n)) },
      fault: 14,
    },
  ])
})

describe('bsf, bsr', () => {
  // Only ZF is defined.
  table([
    {
      name: 'bsf eax, ecx',
      code: '0f bc c1',
      in: { rax: M(-1n), rcx: 0x10000n },
      regs: { rax: 16n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsr eax, ecx',
      code: '0f bd c1',
      in: { rcx: 0x10001n },
      regs: { rax: 16n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsf rax, rcx: top bit',
      code: '48 0f bc c1',
      in: { rcx: 1n << 63n },
      regs: { rax: 63n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsf rax, rcx: bit 32',
      code: '48 0f bc c1',
      in: { rcx: 1n << 32n },
      regs: { rax: 32n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsr rax, rcx: bit 0',
      code: '48 0f bd c1',
      in: { rcx: 1n },
      flagsIn: ZF,
      regs: { rax: 0n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsr rax, rcx: bit 32',
      code: '48 0f bd c1',
      in: { rcx: (1n << 32n) | 1n },
      regs: { rax: 32n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsf rax, rcx = 0: ZF=1, destination unchanged',
      code: '48 0f bc c1',
      in: { rax: 0x1234n, rcx: 0n },
      regs: { rax: 0x1234n },
      flags: ZF,
      mask: ZF,
    },
    {
      name: 'bsf eax, ecx = 0: destination unchanged (as AMD documents)',
      code: '0f bc c1',
      in: { rax: 0xffffffff12345678n, rcx: 0xabcdef0000000000n },
      regs: { rax: 0xffffffff12345678n },
      flags: ZF,
      mask: ZF,
    },
    {
      name: 'bsf ax, cx keeps bits 16-63',
      code: '66 0f bc c1',
      in: { rax: 0xaaaaaaaaaaaaaaaan, rcx: 0x8000n },
      regs: { rax: 0xaaaaaaaaaaaa000fn },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'bsr ax, cx = 0',
      code: '66 0f bd c1',
      in: { rax: 0xaaaaaaaaaaaaaaaan, rcx: 0xffff0000n },
      regs: { rax: 0xaaaaaaaaaaaaaaaan },
      flags: ZF,
      mask: ZF,
    },
    {
      name: 'bsf eax, [rdi]',
      code: '0f bc 07',
      in: { rdi: DATA },
      data: [0, 1, 0, 0],
      regs: { rax: 8n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'F3 0F BC (tzcnt without BMI1) is bsf: zero source leaves the destination',
      code: 'f3 0f bc c1',
      in: { rax: 0x77n, rcx: 0n },
      regs: { rax: 0x77n },
      flags: ZF,
      mask: ZF,
    },
    {
      name: 'F3 0F BC is bsf: 8 -> 3',
      code: 'f3 0f bc c1',
      in: { rcx: 8n },
      regs: { rax: 3n },
      flags: 0n,
      mask: ZF,
    },
    {
      name: 'F3 0F BD (lzcnt without ABM) is bsr: 1 -> 0 (lzcnt would give 31)',
      code: 'f3 0f bd c1',
      in: { rax: 0x77n, rcx: 1n },
      regs: { rax: 0n },
      flags: 0n,
      mask: ZF,
    },
  ])
  test('popcnt raises #UD (cpuid reports no POPCNT)', () => {
    expectResult(run({ code: 'f3 0f b8 c1', regs: { rcx: 7n, rax: 5n } }), { fault: 6, regs: { rax: 5n } })
  })
})

// Condition codes per the SDM's table, evaluated from raw flags.
const CONDITIONS: Array<(f: bigint) => boolean> = [
  (f) => (f & OF) !== 0n, // o
  (f) => (f & OF) === 0n, // no
  (f) => (f & CF) !== 0n, // b
  (f) => (f & CF) === 0n, // ae
  (f) => (f & ZF) !== 0n, // e
  (f) => (f & ZF) === 0n, // ne
  (f) => (f & (CF | ZF)) !== 0n, // be
  (f) => (f & (CF | ZF)) === 0n, // a
  (f) => (f & SF) !== 0n, // s
  (f) => (f & SF) === 0n, // ns
  (f) => (f & PF) !== 0n, // p
  (f) => (f & PF) === 0n, // np
  (f) => ((f & SF) !== 0n) !== ((f & OF) !== 0n), // l
  (f) => ((f & SF) !== 0n) === ((f & OF) !== 0n), // ge
  (f) => (f & ZF) !== 0n || ((f & SF) !== 0n) !== ((f & OF) !== 0n), // le
  (f) => (f & ZF) === 0n && ((f & SF) !== 0n) === ((f & OF) !== 0n), // g
]

/** setcc byte [rdi + cc] for all 16 conditions. */
const SET_ALL = Array.from(
  { length: 16 },
  (_, cc) => `0f ${(0x90 + cc).toString(16)} 47 ${cc.toString(16).padStart(2, '0')}`,
).join(' ')

describe('setcc', () => {
  const combos = [0n, CF, ZF, SF, OF, PF, SF | OF, CF | ZF, ZF | SF, ZF | OF, ARITH]
  for (const f of combos) {
    test(`all 16 conditions with flags 0x${f.toString(16)}`, () => {
      const r = run({ code: SET_ALL, regs: { rdi: DATA }, flags: f, data: (p) => p.fill(0xcc) })
      const got = [...r.data.subarray(0, 16)]
      expect(got).toEqual(CONDITIONS.map((c) => (c(f) ? 1 : 0)))
      expect(r.data[16]).toBe(0xcc)
    })
  }
  test('after cmp eax, ebx with -1 vs 1 (signed less, unsigned above)', () => {
    const r = run({ code: `39 d8 ${SET_ALL}`, regs: { rax: 0xffffffffn, rbx: 1n, rdi: DATA } })
    // o no b ae e ne be a s ns p np l ge le g
    expect([...r.data.subarray(0, 16)]).toEqual([0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0])
  })
  test('after cmp rax, rbx with 1 vs -2^63 (overflow)', () => {
    const r = run({ code: `48 39 d8 ${SET_ALL}`, regs: { rax: 1n, rbx: 1n << 63n, rdi: DATA } })
    expect([...r.data.subarray(0, 16)]).toEqual([1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1])
  })
  test('after cmp rax, rbx with equal operands', () => {
    const r = run({ code: `48 39 d8 ${SET_ALL}`, regs: { rax: 1n << 40n, rbx: 1n << 40n, rdi: DATA } })
    expect([...r.data.subarray(0, 16)]).toEqual([0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0])
  })
  table([
    { name: 'setb ah', code: '0f 92 c4', in: { rax: 0x1234n }, flagsIn: CF, regs: { rax: 0x0134n } },
    {
      name: 'setne sil (REX)',
      code: '40 0f 95 c6',
      in: { rsi: 0xffffffffffffff00n },
      regs: { rsi: 0xffffffffffffff01n },
    },
    {
      name: 'sete al keeps bits 8-63',
      code: '0f 94 c0',
      in: { rax: M(-1n) },
      regs: { rax: 0xffffffffffffff00n },
    },
  ])
})

describe('cmovcc', () => {
  table([
    {
      name: 'cmove eax, ecx not taken still zero-extends rax',
      code: '0f 44 c1',
      in: { rax: 0xffffffff12345678n, rcx: 5n },
      regs: { rax: 0x12345678n, rcx: 5n },
    },
    {
      name: 'cmove eax, ecx taken',
      code: '0f 44 c1',
      in: { rax: M(-1n), rcx: 0xaaaaaaaa87654321n },
      flagsIn: ZF,
      regs: { rax: 0x87654321n },
    },
    {
      name: 'cmovne rax, rcx not taken',
      code: '48 0f 45 c1',
      in: { rax: M(-2n), rcx: 5n },
      flagsIn: ZF,
      regs: { rax: M(-2n) },
    },
    {
      name: 'cmovne rax, rcx taken',
      code: '48 0f 45 c1',
      in: { rax: M(-2n), rcx: 1n << 50n },
      regs: { rax: 1n << 50n },
    },
    {
      name: 'cmovne ax, cx taken keeps bits 16-63',
      code: '66 0f 45 c1',
      in: { rax: 0x1111111111111111n, rcx: 0x2222n },
      regs: { rax: 0x1111111111112222n },
    },
    {
      name: 'cmove ax, cx not taken',
      code: '66 0f 44 c1',
      in: { rax: 0x1111111111111111n, rcx: 0x2222n },
      regs: { rax: 0x1111111111111111n },
    },
    {
      name: 'cmove eax, [rdi] reads (and faults) even when not taken',
      code: '0f 44 07',
      in: { rax: M(-1n), rdi: DATA + 4096n },
      regs: { rax: M(-1n) },
      fault: 14,
    },
    {
      name: 'cmovl rax, [rdi] taken (SF != OF)',
      code: '48 0f 4c 07',
      in: { rdi: DATA },
      flagsIn: SF,
      data: [1, 2, 3, 4, 5, 6, 7, 8],
      regs: { rax: 0x0807060504030201n },
    },
  ])
})
