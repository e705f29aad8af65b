// mul/imul (one, two and three operands) and div/idiv at every size. Only
// CF and OF are defined after a multiply; nothing after a divide. #DE must
// leave every register as it was.

import { describe, expect, test } from 'vitest'
import { CF, DATA, type Expect, expectResult, OF, type Reg, run } from './support/asm.js'

interface Row extends Expect {
  name: string
  code: string
  in?: Partial<Record<Reg, bigint>>
  data?: number[]
}

const CO = CF | OF
const M = (v: bigint) => BigInt.asUintN(64, v)

function table(rows: Row[]): void {
  for (const t of rows) {
    test(t.name, () => {
      const r = run({ code: t.code, regs: t.in, data: t.data })
      expectResult(r, { mask: CO, ...t })
    })
  }
}

/** A #DE case: vector 0 and the inputs untouched. */
function de(name: string, code: string, regs: Partial<Record<Reg, bigint>>): Row {
  return { name: `${name}: #DE, registers unchanged`, code, in: regs, fault: 0, regs }
}

describe('mul', () => {
  table([
    {
      name: 'mul bl: 0x80 * 2 into AX, rest of rax kept',
      code: 'f6 e3',
      in: { rax: 0xaaaaaaaaaaaa0080n, rbx: 2n },
      regs: { rax: 0xaaaaaaaaaaaa0100n },
      flags: CO,
    },
    {
      name: 'mul bl: product fits AL',
      code: 'f6 e3',
      in: { rax: 0x10n, rbx: 0x0fn },
      regs: { rax: 0xf0n },
      flags: 0n,
    },
    {
      name: 'mul cx: DX:AX, upper bits of both kept',
      code: '66 f7 e1',
      in: { rax: 0x111111111111ffffn, rcx: 0xffffn, rdx: 0x2222222222222222n },
      regs: { rax: 0x1111111111110001n, rdx: 0x222222222222fffen },
      flags: CO,
    },
    {
      name: 'mul ecx: 0xffffffff squared',
      code: 'f7 e1',
      in: { rax: 0xffffffffn, rcx: 0xffffffffn, rdx: 0x123456789n },
      regs: { rax: 1n, rdx: 0xfffffffen },
      flags: CO,
    },
    {
      name: 'mul ecx: 2^16 * 2^16',
      code: 'f7 e1',
      in: { rax: 0x10000n, rcx: 0x10000n },
      regs: { rax: 0n, rdx: 1n },
      flags: CO,
    },
    {
      name: 'mul ecx: small product zero-extends rax and rdx',
      code: 'f7 e1',
      in: { rax: 0xffffffff00000007n, rcx: 6n, rdx: M(-1n) },
      regs: { rax: 42n, rdx: 0n },
      flags: 0n,
    },
    {
      name: 'mul rcx: (2^64-1)^2',
      code: '48 f7 e1',
      in: { rax: M(-1n), rcx: M(-1n) },
      regs: { rax: 1n, rdx: 0xfffffffffffffffen },
      flags: CO,
    },
    {
      name: 'mul rcx: 2^32 * 2^32',
      code: '48 f7 e1',
      in: { rax: 1n << 32n, rcx: 1n << 32n },
      regs: { rax: 0n, rdx: 1n },
      flags: CO,
    },
    {
      name: 'mul rcx: by 16',
      code: '48 f7 e1',
      in: { rax: 0x123456789abcdef0n, rcx: 0x10n },
      regs: { rax: 0x23456789abcdef00n, rdx: 1n },
      flags: CO,
    },
    {
      name: 'mul rcx: 3 * 5',
      code: '48 f7 e1',
      in: { rax: 3n, rcx: 5n, rdx: 9n },
      regs: { rax: 15n, rdx: 0n },
      flags: 0n,
    },
    {
      name: 'mul qword [rdi]: (2^64-1) * (2^32+1)',
      code: '48 f7 27',
      in: { rax: M(-1n), rdi: DATA },
      data: [1, 0, 0, 0, 1, 0, 0, 0],
      regs: { rax: 0xfffffffeffffffffn, rdx: 0x100000000n },
      flags: CO,
    },
  ])
})

describe('imul (one operand)', () => {
  table([
    {
      name: 'imul bl: -1 * 2 fits AL',
      code: 'f6 eb',
      in: { rax: 0xffn, rbx: 2n },
      regs: { rax: 0xfffen },
      flags: 0n,
    },
    {
      name: 'imul bl: -128 * -1 does not',
      code: 'f6 eb',
      in: { rax: 0x80n, rbx: 0xffn },
      regs: { rax: 0x80n },
      flags: CO,
    },
    {
      name: 'imul cx: -16 * 256 fits AX',
      code: '66 f7 e9',
      in: { rax: 0xfff0n, rcx: 0x100n },
      regs: { rax: 0xf000n, rdx: 0xffffn },
      flags: 0n,
    },
    {
      name: 'imul ecx: -1 * -1',
      code: 'f7 e9',
      in: { rax: 0xffffffffn, rcx: 0xffffffffn },
      regs: { rax: 1n, rdx: 0n },
      flags: 0n,
    },
    {
      name: 'imul ecx: -2^31 * 2',
      code: 'f7 e9',
      in: { rax: 0x80000000n, rcx: 2n },
      regs: { rax: 0n, rdx: 0xffffffffn },
      flags: CO,
    },
    {
      name: 'imul rcx: -1 * 1',
      code: '48 f7 e9',
      in: { rax: M(-1n), rcx: 1n },
      regs: { rax: M(-1n), rdx: M(-1n) },
      flags: 0n,
    },
    {
      name: 'imul rcx: (-2^63)^2',
      code: '48 f7 e9',
      in: { rax: 1n << 63n, rcx: 1n << 63n },
      regs: { rax: 0n, rdx: 0x4000000000000000n },
      flags: CO,
    },
    {
      name: 'imul rcx: -2^63 * -1',
      code: '48 f7 e9',
      in: { rax: 1n << 63n, rcx: M(-1n) },
      regs: { rax: 1n << 63n, rdx: 0n },
      flags: CO,
    },
    {
      name: 'imul rcx: -3 * (2^63-1)',
      code: '48 f7 e9',
      in: { rax: M(-3n), rcx: 0x7fffffffffffffffn },
      regs: { rax: 0x8000000000000003n, rdx: 0xfffffffffffffffen },
      flags: CO,
    },
  ])
})

describe('imul (two and three operands)', () => {
  table([
    {
      name: 'imul eax, ecx: 2^16 * 2^16 truncated, zero-extended',
      code: '0f af c1',
      in: { rax: 0xffffffff00010000n, rcx: 0x10000n },
      regs: { rax: 0n },
      flags: CO,
    },
    {
      name: 'imul ax, cx, 3: 0x4000 * 3 overflows 16 bits',
      code: '66 6b c1 03',
      in: { rax: 0x5555555555555555n, rcx: 0x4000n },
      regs: { rax: 0x555555555555c000n },
      flags: CO,
    },
    {
      name: 'imul rax, rcx, -2: exactly -2^63 fits',
      code: '48 6b c1 fe',
      in: { rcx: 0x4000000000000000n },
      regs: { rax: 1n << 63n },
      flags: 0n,
    },
    {
      name: 'imul rax, rcx, imm32',
      code: '48 69 c1 78 56 34 12',
      in: { rcx: 0x10n },
      regs: { rax: 0x123456780n },
      flags: 0n,
    },
    {
      name: 'imul rax, [rdi]',
      code: '48 0f af 07',
      in: { rax: 5n, rdi: DATA },
      data: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
      regs: { rax: M(-5n) },
      flags: 0n,
    },
    {
      name: 'imul ecx, [rdi], 7',
      code: '6b 0f 07',
      in: { rcx: 0xffffffff00000000n, rdi: DATA },
      data: [6, 0, 0, 0],
      regs: { rcx: 42n },
      flags: 0n,
    },
    {
      name: 'imul rdx, rbx: 2^64 overflows',
      code: '48 0f af d3',
      in: { rdx: 1n << 32n, rbx: 1n << 32n },
      regs: { rdx: 0n },
      flags: CO,
    },
    {
      name: 'imul rax, rcx: -(2^32) * (2^31-1) fits',
      code: '48 0f af c1',
      in: { rax: M(-(1n << 32n)), rcx: 0x7fffffffn },
      regs: { rax: 0x8000000100000000n },
      flags: 0n,
    },
  ])
})

describe('div', () => {
  table([
    {
      name: 'div bl: 256 / 3',
      code: 'f6 f3',
      in: { rax: 0xffffffffffff0100n, rbx: 3n },
      regs: { rax: 0xffffffffffff0155n },
    },
    de('div bl: quotient 256', 'f6 f3', { rax: 0x300n, rbx: 3n }),
    de('div bl by zero', 'f6 f3', { rax: 0x300n, rbx: 0x100n }),
    {
      name: 'div cx: 65536 / 2, upper bits kept',
      code: '66 f7 f1',
      in: { rax: 0x7777777777770000n, rdx: 0x8888888888880001n, rcx: 2n },
      regs: { rax: 0x7777777777778000n, rdx: 0x8888888888880000n },
    },
    {
      name: 'div ecx: 2^32 / 3, zero-extends',
      code: 'f7 f1',
      in: { rax: 0xffffffff00000000n, rdx: 0xffffffff00000001n, rcx: 3n },
      regs: { rax: 0x55555555n, rdx: 1n },
    },
    {
      name: 'div ecx: largest quotient',
      code: 'f7 f1',
      in: { rax: 0xffffffffn, rdx: 0xfffffffen, rcx: 0xffffffffn },
      regs: { rax: 0xffffffffn, rdx: 0xfffffffen },
    },
    de('div ecx: quotient >= 2^32', 'f7 f1', { rax: 0n, rdx: 3n, rcx: 3n }),
    { name: 'div rcx: 100 / 7', code: '48 f7 f1', in: { rax: 100n, rcx: 7n }, regs: { rax: 14n, rdx: 2n } },
    {
      name: 'div rcx: 2^64 / 2',
      code: '48 f7 f1',
      in: { rax: 0n, rdx: 1n, rcx: 2n },
      regs: { rax: 1n << 63n, rdx: 0n },
    },
    {
      name: 'div rcx: largest 128/64 quotient',
      code: '48 f7 f1',
      in: { rax: M(-1n), rdx: 0xfffffffffffffffen, rcx: M(-1n) },
      regs: { rax: M(-1n), rdx: 0xfffffffffffffffen },
    },
    de('div rcx: quotient >= 2^64', '48 f7 f1', { rax: 1n, rdx: 5n, rcx: 5n }),
    de('div rcx by zero', '48 f7 f1', { rax: 1n, rdx: 0n, rcx: 0n }),
    {
      name: 'div dword [rdi]',
      code: 'f7 37',
      in: { rax: 100n, rdx: 0n, rdi: DATA },
      data: [10, 0, 0, 0],
      regs: { rax: 10n, rdx: 0n },
    },
    {
      name: 'div dword [rdi] on an unmapped page: #PF, not #DE',
      code: 'f7 37',
      in: { rax: 100n, rdx: 0n, rdi: DATA + 4096n },
      regs: { rax: 100n, rdx: 0n },
      fault: 14,
    },
  ])
})

describe('idiv', () => {
  table([
    {
      name: 'idiv bl: -7 / 2 truncates toward zero',
      code: 'f6 fb',
      in: { rax: 0xfff9n, rbx: 2n },
      regs: { rax: 0xfffdn },
    },
    de('idiv bl: -128 / -1', 'f6 fb', { rax: 0xff80n, rbx: 0xffn }),
    {
      name: 'idiv bl: 128 / -1 = -128 fits',
      code: 'f6 fb',
      in: { rax: 0x80n, rbx: 0xffn },
      regs: { rax: 0x80n },
    },
    {
      name: 'idiv ecx: -7 / 2',
      code: 'f7 f9',
      in: { rax: 0xabcdef00fffffff9n, rdx: 0xffffffffffffffffn, rcx: 2n },
      regs: { rax: 0xfffffffdn, rdx: 0xffffffffn },
    },
    de('idiv ecx: -2^31 / -1', 'f7 f9', { rax: 0x80000000n, rdx: 0xffffffffn, rcx: 0xffffffffn }),
    {
      name: 'idiv ecx: 2^31 / -1 = -2^31 fits',
      code: 'f7 f9',
      in: { rax: 0x80000000n, rdx: 0n, rcx: 0xffffffffn },
      regs: { rax: 0x80000000n, rdx: 0n },
    },
    de('idiv ecx by zero', 'f7 f9', { rax: 5n, rdx: 0n, rcx: 0xffffffff00000000n }),
    de('idiv rcx: -2^63 / -1', '48 f7 f9', { rax: 1n << 63n, rdx: M(-1n), rcx: M(-1n) }),
    {
      name: 'idiv rcx: -100 / 7',
      code: '48 f7 f9',
      in: { rax: M(-100n), rdx: M(-1n), rcx: 7n },
      regs: { rax: M(-14n), rdx: M(-2n) },
    },
    {
      name: 'idiv rcx: 2^64 / -2 = -2^63 fits',
      code: '48 f7 f9',
      in: { rax: 0n, rdx: 1n, rcx: M(-2n) },
      regs: { rax: 1n << 63n, rdx: 0n },
    },
    {
      name: 'idiv rcx: 7 / -2',
      code: '48 f7 f9',
      in: { rax: 7n, rdx: 0n, rcx: M(-2n) },
      regs: { rax: M(-3n), rdx: 1n },
    },
  ])
})

test('#DE is a fault at the divide itself', () => {
  // mov eax, 1 ; div ecx (ecx = 0): RIP stays on the div.
  const r = run({ code: 'b8 01 00 00 00 f7 f1', regs: { rcx: 0n, rdx: 0n } })
  expectResult(r, { fault: 0, regs: { rax: 1n } })
  expect(r.offset).toBe(5)
})
