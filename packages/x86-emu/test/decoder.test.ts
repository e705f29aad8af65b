// Golden decodes: every Instruction field checked for hand-picked (mostly
// kernel-style) instructions, plus the error contract (decode speed is a benchmark: bench/index.ts).

import { describe, expect, it } from 'vitest'
import { linearFromBigInt } from '../src/address.js'
import {
  DecodeError,
  decode,
  InstructionFlag as F,
  type Instruction,
  type Operand,
  tryDecode,
} from '../src/decoder/index.js'

/** 0xffffffff81000000, where kernel text starts: the linear number -0x7f000000. */
const KTEXT = linearFromBigInt(0xffffffff81000000n)
const USER = 0x40_1000

const hex = (s: string) =>
  new Uint8Array(
    s
      .trim()
      .split(/\s+/)
      .map((b) => Number.parseInt(b, 16)),
  )

/** A complete expected Instruction: defaults for a prefix-less legacy instruction without ModRM, then overrides. */
function expected(bytes: string, address: number, fields: Partial<Instruction>): Instruction {
  const b = hex(bytes)
  return {
    address,
    length: b.length,
    bytes: b,
    encoding: 'legacy',
    map: 0,
    opcode: 0,
    mnemonic: '',
    lock: false,
    rep: 0,
    segment: null,
    operandSizePrefix: false,
    addressSizePrefix: false,
    mandatoryPrefix: 0,
    rex: 0,
    rexW: false,
    rexR: false,
    rexX: false,
    rexB: false,
    vex: null,
    modrm: -1,
    mod: 0,
    reg: 0,
    rm: 0,
    sib: -1,
    displacement: 0,
    displacementOffset: -1,
    displacementSize: 0,
    immediate: 0,
    immediateBig: 0n,
    immediateOffset: -1,
    immediateSize: 0,
    immediate2: 0,
    immediate2Size: 0,
    operandSize: 4,
    addressSize: 8,
    operands: [],
    ripRelative: false,
    branchTarget: null,
    flags: 0,
    ...fields,
  }
}

const gpr = (name: string, index: number, size: number, high8 = false): Operand =>
  high8
    ? { kind: 'reg', name, class: 'gpr', index, size, high8 }
    : { kind: 'reg', name, class: 'gpr', index, size }
const reg = (
  name: string,
  cls: Extract<Operand, { kind: 'reg' }>['class'],
  index: number,
  size: number,
): Operand => ({
  kind: 'reg',
  name,
  class: cls,
  index,
  size,
})
const mem = (size: number, m: Partial<Extract<Operand, { kind: 'mem' }>> = {}): Operand => ({
  kind: 'mem',
  size,
  segment: null,
  base: -1,
  index: -1,
  scale: 1,
  displacement: 0,
  ripRelative: false,
  ...m,
})
const imm = (size: number, value: number): Operand => ({ kind: 'imm', size, value, bigValue: BigInt(value) })
const rel = (target: number): Operand => ({ kind: 'rel', target })

function check(bytes: string, address: number, fields: Partial<Instruction>): void {
  expect(decode(hex(bytes), address)).toEqual(expected(bytes, address, fields))
}

describe('golden decodes (every field)', () => {
  it('mov rax, [rip + disp32]: rip-relative load at a kernel address', () => {
    check('48 8b 05 d1 c3 b2 01', KTEXT, {
      opcode: 0x8b,
      mnemonic: 'mov',
      rex: 0x48,
      rexW: true,
      modrm: 0x05,
      mod: 0,
      reg: 0,
      rm: 5,
      displacement: 0x01b2c3d1,
      displacementOffset: 3,
      displacementSize: 4,
      operandSize: 8,
      operands: [gpr('rax', 0, 8), mem(8, { displacement: 0x01b2c3d1, ripRelative: true })],
      ripRelative: true,
      flags: F.ReadsMemory | F.MayFault,
    })
  })

  it('call rel32 backwards from kernel text', () => {
    // e8 00 f0 ff ff: call KTEXT + 5 - 0x1000
    check('e8 00 f0 ff ff', KTEXT, {
      opcode: 0xe8,
      mnemonic: 'call',
      immediate: -0x1000,
      immediateBig: -0x1000n,
      immediateOffset: 1,
      immediateSize: 4,
      operandSize: 8,
      operands: [rel(KTEXT + 5 - 0x1000)],
      branchTarget: KTEXT + 5 - 0x1000,
      flags: F.Call | F.Relative | F.WritesMemory | F.MayFault,
    })
    expect(decode(hex('e8 00 f0 ff ff'), KTEXT).branchTarget).toBe(linearFromBigInt(0xffffffff80fff005n))
  })

  it('jne rel32 keeps the CPU arithmetic as a signed linear number', () => {
    check('0f 85 00 00 00 80', KTEXT, {
      map: 1,
      opcode: 0x85,
      mnemonic: 'jne',
      immediate: -0x8000_0000,
      immediateBig: -0x8000_0000n,
      immediateOffset: 2,
      immediateSize: 4,
      operandSize: 8,
      operands: [rel(KTEXT + 6 - 0x8000_0000)],
      branchTarget: KTEXT + 6 - 0x8000_0000,
      flags: F.Conditional | F.Relative,
    })
  })

  it('jmp [rax*8 + disp32]: indirect jump through a table', () => {
    check('ff 24 c5 e0 20 c0 81', KTEXT, {
      opcode: 0xff,
      mnemonic: 'jmp',
      modrm: 0x24,
      mod: 0,
      reg: 4,
      rm: 4,
      sib: 0xc5,
      displacement: linearFromBigInt(0xffffffff81c020e0n),
      displacementOffset: 3,
      displacementSize: 4,
      operandSize: 8,
      operands: [mem(8, { index: 0, scale: 8, displacement: -0x7e3fdf20 })],
      flags: F.Jump | F.Indirect | F.ReadsMemory | F.MayFault,
    })
  })

  it('call [rip + disp32] (retpoline-less indirect call through a pointer)', () => {
    check('ff 15 10 00 00 00', USER, {
      opcode: 0xff,
      mnemonic: 'call',
      modrm: 0x15,
      reg: 2,
      rm: 5,
      displacement: 0x10,
      displacementOffset: 2,
      displacementSize: 4,
      operandSize: 8,
      operands: [mem(8, { displacement: 0x10, ripRelative: true })],
      ripRelative: true,
      flags: F.Call | F.Indirect | F.ReadsMemory | F.WritesMemory | F.MayFault,
    })
  })

  it('syscall, int3, int1, ud2, iretq', () => {
    check('0f 05', USER, { map: 1, opcode: 0x05, mnemonic: 'syscall', flags: F.Syscall })
    check('cc', KTEXT, { opcode: 0xcc, mnemonic: 'int3', flags: F.Int3 | F.MayFault })
    check('f1', KTEXT, { opcode: 0xf1, mnemonic: 'int1', flags: F.Int | F.MayFault })
    check('0f 0b', KTEXT, { map: 1, opcode: 0x0b, mnemonic: 'ud2', flags: F.Undefined | F.MayFault })
    check('48 cf', KTEXT, {
      opcode: 0xcf,
      mnemonic: 'iretq',
      rex: 0x48,
      rexW: true,
      operandSize: 8,
      flags: F.Iret | F.ReadsMemory | F.MayFault,
    })
  })

  it('int 0x80: the immediate is sign-extended like every immediate', () => {
    check('cd 80', USER, {
      opcode: 0xcd,
      mnemonic: 'int',
      immediate: -128,
      immediateBig: -128n,
      immediateOffset: 1,
      immediateSize: 1,
      operands: [imm(1, -128)],
      flags: F.Int | F.MayFault,
    })
  })

  it('mov r64, imm64 (B8+r with REX.W: an 8-byte immediate)', () => {
    check('49 bb 88 77 66 55 44 33 22 f1', USER, {
      opcode: 0xbb,
      mnemonic: 'movabs',
      rex: 0x49,
      rexW: true,
      rexB: true,
      immediate: linearFromBigInt(0xf122334455667788n),
      immediateBig: BigInt.asIntN(64, 0xf122334455667788n),
      immediateOffset: 2,
      immediateSize: 8,
      operandSize: 8,
      operands: [
        gpr('r11', 11, 8),
        {
          kind: 'imm',
          size: 8,
          value: linearFromBigInt(0xf122334455667788n),
          bigValue: BigInt.asIntN(64, 0xf122334455667788n),
        },
      ],
    })
  })

  it('mov r32, imm32 and mov rax, -1 (C7 /0 with a sign-extended imm32)', () => {
    check('b9 ff ff ff ff', USER, {
      opcode: 0xb9,
      mnemonic: 'mov',
      immediate: -1,
      immediateBig: -1n,
      immediateOffset: 1,
      immediateSize: 4,
      operands: [gpr('ecx', 1, 4), imm(4, -1)],
    })
    check('48 c7 c0 ff ff ff ff', USER, {
      opcode: 0xc7,
      mnemonic: 'mov',
      rex: 0x48,
      rexW: true,
      modrm: 0xc0,
      mod: 3,
      immediate: -1,
      immediateBig: -1n,
      immediateOffset: 3,
      immediateSize: 4,
      operandSize: 8,
      operands: [gpr('rax', 0, 8), imm(4, -1)],
    })
  })

  it('moffs forms: 8-byte absolute address, or 4 bytes with 67', () => {
    const abs = linearFromBigInt(0xffffffff82001000n)
    check('48 a1 00 10 00 82 ff ff ff ff', KTEXT, {
      opcode: 0xa1,
      mnemonic: 'movabs',
      rex: 0x48,
      rexW: true,
      displacement: abs,
      displacementOffset: 2,
      displacementSize: 8,
      operandSize: 8,
      operands: [gpr('rax', 0, 8), mem(8, { displacement: abs })],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('67 a2 44 33 22 11', USER, {
      opcode: 0xa2,
      mnemonic: 'mov',
      addressSizePrefix: true,
      addressSize: 4,
      displacement: 0x11223344,
      displacementOffset: 2,
      displacementSize: 4,
      operandSize: 1,
      operands: [mem(1, { displacement: 0x11223344 }), gpr('al', 0, 1)],
      flags: F.WritesMemory | F.MayFault,
    })
  })

  it('enter imm16, imm8 and leave (default 64-bit operand size)', () => {
    check('c8 10 00 01', USER, {
      opcode: 0xc8,
      mnemonic: 'enter',
      immediate: 16,
      immediateBig: 16n,
      immediateOffset: 1,
      immediateSize: 2,
      immediate2: 1,
      immediate2Size: 1,
      operandSize: 8,
      operands: [imm(2, 16), imm(1, 1)],
      flags: F.WritesMemory | F.MayFault,
    })
    check('c9', USER, { opcode: 0xc9, mnemonic: 'leave', operandSize: 8, flags: F.ReadsMemory | F.MayFault })
    check('66 c9', USER, {
      opcode: 0xc9,
      mnemonic: 'leave',
      operandSizePrefix: true,
      operandSize: 2,
      flags: F.ReadsMemory | F.MayFault,
    })
  })

  it('66 on near branches: ignored in 64-bit mode (rel32, 64-bit operand size)', () => {
    check('66 e8 00 00 00 00', USER, {
      opcode: 0xe8,
      mnemonic: 'call',
      operandSizePrefix: true,
      immediateOffset: 2,
      immediateSize: 4,
      operandSize: 8,
      operands: [rel(USER + 6)],
      branchTarget: USER + 6,
      flags: F.Call | F.Relative | F.WritesMemory | F.MayFault,
    })
    expect(decode(hex('66 e9 00 00 00 00'), USER).length).toBe(6)
    expect(decode(hex('66 0f 84 00 00 00 00'), USER).length).toBe(7)
    expect(decode(hex('66 eb fe'), USER).branchTarget).toBe(USER + 1)
  })

  it('push/pop: default 64-bit, 16-bit with 66, r8-r15 with REX.B', () => {
    check('41 54', USER, {
      opcode: 0x54,
      mnemonic: 'push',
      rex: 0x41,
      rexB: true,
      operandSize: 8,
      operands: [gpr('r12', 12, 8)],
      flags: F.WritesMemory | F.MayFault,
    })
    check('66 5d', USER, {
      opcode: 0x5d,
      mnemonic: 'pop',
      operandSizePrefix: true,
      operandSize: 2,
      operands: [gpr('bp', 5, 2)],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('6a ff', USER, {
      opcode: 0x6a,
      mnemonic: 'push',
      immediate: -1,
      immediateBig: -1n,
      immediateOffset: 1,
      immediateSize: 1,
      operandSize: 8,
      operands: [imm(1, -1)],
      flags: F.WritesMemory | F.MayFault,
    })
  })

  it('ret, ret imm16, retfq', () => {
    check('c3', USER, {
      opcode: 0xc3,
      mnemonic: 'ret',
      operandSize: 8,
      flags: F.Ret | F.ReadsMemory | F.MayFault,
    })
    check('c2 08 00', USER, {
      opcode: 0xc2,
      mnemonic: 'ret',
      immediate: 8,
      immediateBig: 8n,
      immediateOffset: 1,
      immediateSize: 2,
      operandSize: 8,
      operands: [imm(2, 8)],
      flags: F.Ret | F.ReadsMemory | F.MayFault,
    })
    check('48 cb', USER, {
      opcode: 0xcb,
      mnemonic: 'retfq',
      rex: 0x48,
      rexW: true,
      operandSize: 8,
      flags: F.Ret | F.FarBranch | F.ReadsMemory | F.MayFault,
    })
  })

  it('nop forms, pause, endbr64 and xchg r8, rax', () => {
    check('90', USER, { opcode: 0x90, mnemonic: 'nop' })
    check('66 90', USER, { opcode: 0x90, mnemonic: 'nop', operandSizePrefix: true, operandSize: 2 })
    check('f3 90', USER, { opcode: 0x90, mnemonic: 'pause', rep: 0xf3 })
    check('0f 1f 44 00 00', USER, {
      map: 1,
      opcode: 0x1f,
      mnemonic: 'nop',
      modrm: 0x44,
      mod: 1,
      reg: 0,
      rm: 4,
      sib: 0x00,
      displacement: 0,
      displacementOffset: 4,
      displacementSize: 1,
      operands: [mem(0, { base: 0, index: 0 })],
    })
    check('f3 0f 1e fa', USER, {
      map: 1,
      opcode: 0x1e,
      mnemonic: 'endbr64',
      rep: 0xf3,
      mandatoryPrefix: 0xf3,
      modrm: 0xfa,
      mod: 3,
      reg: 7,
      rm: 2,
    })
    check('49 90', USER, {
      opcode: 0x90,
      mnemonic: 'xchg',
      rex: 0x49,
      rexW: true,
      rexB: true,
      operandSize: 8,
      operands: [gpr('r8', 8, 8), gpr('rax', 0, 8)],
    })
    // A REX followed by another prefix is ignored: this is 66 90 (nop), not xchg.
    expect(decode(hex('41 66 90'), USER)).toMatchObject({ mnemonic: 'nop', rex: 0, rexB: false, length: 3 })
  })

  it('lea: an address, not a memory access', () => {
    check('48 8d 74 24 08', USER, {
      opcode: 0x8d,
      mnemonic: 'lea',
      rex: 0x48,
      rexW: true,
      modrm: 0x74,
      mod: 1,
      reg: 6,
      rm: 4,
      sib: 0x24,
      displacement: 8,
      displacementOffset: 4,
      displacementSize: 1,
      operandSize: 8,
      operands: [gpr('rsi', 6, 8), mem(0, { base: 4, displacement: 8 })],
    })
  })

  it('8F: pop r/m unless the next byte selects an XOP map', () => {
    check('8f c0', USER, {
      opcode: 0x8f,
      mnemonic: 'pop',
      modrm: 0xc0,
      mod: 3,
      operandSize: 8,
      operands: [gpr('rax', 0, 8)],
      flags: F.ReadsMemory | F.MayFault,
    })
    expect(decode(hex('8f e9 78 c1 c0'), USER).encoding).toBe('xop')
    expect(tryDecode(hex('8f 08'), USER)).toMatchObject({ reason: 'truncated' }) // XOP map 8 header cut short
  })

  it('byte registers: AH..BH without REX, SPL..DIL with any REX', () => {
    check('88 e0', USER, {
      opcode: 0x88,
      mnemonic: 'mov',
      modrm: 0xe0,
      mod: 3,
      reg: 4,
      rm: 0,
      operandSize: 1,
      operands: [gpr('al', 0, 1), gpr('ah', 0, 1, true)],
    })
    check('40 88 e0', USER, {
      opcode: 0x88,
      mnemonic: 'mov',
      rex: 0x40,
      modrm: 0xe0,
      mod: 3,
      reg: 4,
      rm: 0,
      operandSize: 1,
      operands: [gpr('al', 0, 1), gpr('spl', 4, 1)],
    })
  })

  it('gs-relative load with SIB and no base (per-cpu access)', () => {
    check('65 48 8b 04 25 28 00 00 00', KTEXT, {
      opcode: 0x8b,
      mnemonic: 'mov',
      segment: 'gs',
      rex: 0x48,
      rexW: true,
      modrm: 0x04,
      rm: 4,
      sib: 0x25,
      displacement: 0x28,
      displacementOffset: 5,
      displacementSize: 4,
      operandSize: 8,
      operands: [gpr('rax', 0, 8), mem(8, { segment: 'gs', displacement: 0x28 })],
      flags: F.ReadsMemory | F.MayFault,
    })
  })

  it('lock xadd, lock cmpxchg16b, rep stosq', () => {
    check('f0 0f c1 07', KTEXT, {
      map: 1,
      opcode: 0xc1,
      mnemonic: 'xadd',
      lock: true,
      modrm: 0x07,
      rm: 7,
      operands: [mem(4, { base: 7 }), gpr('eax', 0, 4)],
      flags: F.Lockable | F.ReadsMemory | F.WritesMemory | F.MayFault,
    })
    check('f0 48 0f c7 0e', KTEXT, {
      map: 1,
      opcode: 0xc7,
      mnemonic: 'cmpxchg16b',
      lock: true,
      rex: 0x48,
      rexW: true,
      modrm: 0x0e,
      reg: 1,
      rm: 6,
      operandSize: 8,
      operands: [mem(16, { base: 6 })],
      flags: F.Lockable | F.ReadsMemory | F.WritesMemory | F.MayFault,
    })
    check('f3 48 ab', KTEXT, {
      opcode: 0xab,
      mnemonic: 'stosq',
      rep: 0xf3,
      rex: 0x48,
      rexW: true,
      operandSize: 8,
      operands: [mem(8, { segment: 'es', base: 7 }), gpr('rax', 0, 8)],
      flags: F.StringOp | F.WritesMemory | F.MayFault,
    })
  })

  it('jrcxz / jecxz / loop and xbegin', () => {
    check('e3 fe', USER, {
      opcode: 0xe3,
      mnemonic: 'jrcxz',
      immediate: -2,
      immediateBig: -2n,
      immediateOffset: 1,
      immediateSize: 1,
      operandSize: 8,
      operands: [rel(USER)],
      branchTarget: USER,
      flags: F.Conditional | F.Relative,
    })
    expect(decode(hex('67 e3 00'), USER)).toMatchObject({
      mnemonic: 'jecxz',
      addressSize: 4,
      branchTarget: USER + 3,
    })
    expect(decode(hex('e2 10'), USER)).toMatchObject({ mnemonic: 'loop', branchTarget: USER + 0x12 })
    check('c7 f8 00 01 00 00', USER, {
      opcode: 0xc7,
      mnemonic: 'xbegin',
      modrm: 0xf8,
      mod: 3,
      reg: 7,
      rm: 0,
      immediate: 0x100,
      immediateBig: 0x100n,
      immediateOffset: 2,
      immediateSize: 4,
      operands: [rel(USER + 6 + 0x100)],
      branchTarget: USER + 6 + 0x100,
      flags: F.Conditional | F.Relative,
    })
  })

  it('far call / far jmp through memory (FF /3, FF /5)', () => {
    check('ff 1c 25 00 10 00 00', USER, {
      opcode: 0xff,
      mnemonic: 'lcall',
      modrm: 0x1c,
      reg: 3,
      rm: 4,
      sib: 0x25,
      displacement: 0x1000,
      displacementOffset: 3,
      displacementSize: 4,
      operands: [mem(6, { displacement: 0x1000 })],
      flags: F.Call | F.Indirect | F.FarBranch | F.ReadsMemory | F.WritesMemory | F.MayFault,
    })
    expect(decode(hex('48 ff 2c 24'), USER)).toMatchObject({
      mnemonic: 'ljmp',
      operandSize: 8,
      operands: [mem(10, { base: 4 })],
      flags: F.Jump | F.Indirect | F.FarBranch | F.ReadsMemory | F.MayFault,
    })
    expect(tryDecode(hex('ff d8'), USER)).toMatchObject({ reason: 'invalid' })
  })

  it('system instructions: mov cr (mod ignored), swapgs, vmcall, segment registers', () => {
    check('0f 20 18', KTEXT, {
      map: 1,
      opcode: 0x20,
      mnemonic: 'mov',
      modrm: 0x18,
      mod: 0,
      reg: 3,
      rm: 0,
      operandSize: 8,
      operands: [gpr('rax', 0, 8), reg('cr3', 'cr', 3, 8)],
      flags: F.Privileged | F.MayFault,
    })
    check('44 0f 22 c7', KTEXT, {
      map: 1,
      opcode: 0x22,
      mnemonic: 'mov',
      rex: 0x44,
      rexR: true,
      modrm: 0xc7,
      mod: 3,
      reg: 8,
      rm: 7,
      operandSize: 8,
      operands: [reg('cr8', 'cr', 8, 8), gpr('rdi', 7, 8)],
      flags: F.Privileged | F.MayFault,
    })
    check('0f 01 f8', KTEXT, {
      map: 1,
      opcode: 0x01,
      mnemonic: 'swapgs',
      modrm: 0xf8,
      mod: 3,
      reg: 7,
      rm: 0,
      flags: F.Privileged | F.MayFault,
    })
    check('0f 01 c1', KTEXT, {
      map: 1,
      opcode: 0x01,
      mnemonic: 'vmcall',
      modrm: 0xc1,
      mod: 3,
      reg: 0,
      rm: 1,
      flags: F.Hypercall,
    })
    check('0f a9', KTEXT, {
      map: 1,
      opcode: 0xa9,
      mnemonic: 'pop',
      operandSize: 8,
      operands: [reg('gs', 'seg', 5, 2)],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('8e d8', KTEXT, {
      opcode: 0x8e,
      mnemonic: 'mov',
      modrm: 0xd8,
      mod: 3,
      reg: 3,
      rm: 0,
      operands: [reg('ds', 'seg', 3, 2), gpr('eax', 0, 4)],
    })
    check('f4', KTEXT, { opcode: 0xf4, mnemonic: 'hlt', flags: F.Halt | F.Privileged | F.MayFault })
    check('0f 01 3f', KTEXT, {
      map: 1,
      opcode: 0x01,
      mnemonic: 'invlpg',
      modrm: 0x3f,
      reg: 7,
      rm: 7,
      operands: [mem(0, { base: 7 })],
      flags: F.Privileged | F.MayFault,
    })
  })

  it('VEX, EVEX (disp8*N), XOP, 3DNow! and x87 forms', () => {
    check('c5 f8 77', USER, {
      encoding: 'vex',
      map: 1,
      opcode: 0x77,
      mnemonic: 'vzeroupper',
      vex: { l: 0, w: false, vvvv: 0 },
    })
    check('c4 e2 79 18 06', USER, {
      encoding: 'vex',
      map: 2,
      opcode: 0x18,
      mnemonic: 'vbroadcastss',
      mandatoryPrefix: 0x66,
      vex: { l: 0, w: false, vvvv: 0 },
      modrm: 0x06,
      rm: 6,
      operands: [reg('xmm0', 'xmm', 0, 16), mem(4, { base: 6 })],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('62 f1 7c 48 10 46 01', USER, {
      encoding: 'evex',
      map: 1,
      opcode: 0x10,
      mnemonic: 'vmovups',
      vex: { l: 2, w: false, vvvv: 0 },
      evex: { z: false, b: false, aaa: 0, ll: 2 },
      modrm: 0x46,
      mod: 1,
      rm: 6,
      displacement: 64,
      displacementOffset: 6,
      displacementSize: 1,
      operands: [reg('zmm0', 'zmm', 0, 64), mem(64, { base: 6, displacement: 64 })],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('8f e9 78 c1 c0', USER, {
      encoding: 'xop',
      map: 9,
      opcode: 0xc1,
      mnemonic: 'vphaddbw',
      vex: { l: 0, w: false, vvvv: 0 },
      modrm: 0xc0,
      mod: 3,
      operands: [reg('xmm0', 'xmm', 0, 16), reg('xmm0', 'xmm', 0, 16)],
    })
    check('0f 0f c1 9e', USER, {
      encoding: '3dnow',
      map: 0x0f0f,
      opcode: 0x9e,
      mnemonic: 'pfadd',
      modrm: 0xc1,
      mod: 3,
      rm: 1,
      operands: [reg('mm0', 'mmx', 0, 8), reg('mm1', 'mmx', 1, 8)],
    })
    check('dd 04 24', USER, {
      opcode: 0xdd,
      mnemonic: 'fld',
      modrm: 0x04,
      rm: 4,
      sib: 0x24,
      operands: [mem(8, { base: 4 })],
      flags: F.ReadsMemory | F.MayFault,
    })
    check('d9 c9', USER, {
      opcode: 0xd9,
      mnemonic: 'fxch',
      modrm: 0xc9,
      mod: 3,
      reg: 1,
      rm: 1,
      operands: [reg('st(1)', 'x87', 1, 10)],
    })
  })

  it('SSE with a mandatory prefix (66 not an operand-size prefix there)', () => {
    check('66 48 0f 6e c7', USER, {
      map: 1,
      opcode: 0x6e,
      mnemonic: 'movq',
      operandSizePrefix: true,
      mandatoryPrefix: 0x66,
      rex: 0x48,
      rexW: true,
      modrm: 0xc7,
      mod: 3,
      reg: 0,
      rm: 7,
      operandSize: 8,
      operands: [reg('xmm0', 'xmm', 0, 16), gpr('rdi', 7, 8)],
    })
    // With F3 selecting popcnt, 66 stays the operand-size prefix.
    expect(decode(hex('66 f3 0f b8 c1'), USER)).toMatchObject({
      mnemonic: 'popcnt',
      mandatoryPrefix: 0xf3,
      operandSize: 2,
    })
  })

  it('decodes at an offset and copies the bytes', () => {
    const buf = hex('90 90 48 8b 05 00 00 00 00 cc')
    const i = decode(buf, KTEXT + 2, 2)
    expect(i).toMatchObject({ mnemonic: 'mov', length: 7, address: KTEXT + 2, displacementOffset: 3 })
    expect(i.bytes).toEqual(hex('48 8b 05 00 00 00 00'))
    buf[2] = 0
    expect(i.bytes[0]).toBe(0x48)
  })
})

describe('decode errors', () => {
  const reason = (bytes: string) => {
    const r = tryDecode(hex(bytes), USER)
    return r instanceof DecodeError ? r.reason : `decoded ${r.mnemonic}`
  }

  it('truncated when the bytes end inside the instruction', () => {
    for (const b of [
      '',
      '48',
      '48 8b',
      '48 8b 05 00 00 00',
      'e8 00 00',
      '0f',
      '0f 38',
      'c4 e2',
      '62 f1 7c',
      'f0 66',
      '48 b8 00 00 00 00 00 00 00',
    ])
      expect(reason(b), b).toBe('truncated')
    const e = tryDecode(hex('48 8b 05 10'), USER)
    expect(e).toBeInstanceOf(DecodeError)
    expect((e as DecodeError).bytes).toEqual(hex('48 8b 05 10'))
    expect(() => decode(hex('e8 00'), USER)).toThrow(DecodeError)
  })

  it('too-long beyond 15 bytes', () => {
    expect(reason(`${'66 '.repeat(14)}90`)).toBe('decoded nop')
    expect(reason(`${'66 '.repeat(15)}90`)).toBe('too-long')
    expect(reason(`${'2e '.repeat(11)}48 8b 05 00 00 00 00`)).toBe('too-long')
  })

  it('invalid for encodings that #UD in 64-bit mode', () => {
    const invalid = [
      '06',
      '07',
      '0e',
      '16',
      '17',
      '1e',
      '1f',
      '27',
      '2f',
      '37',
      '3f',
      '60',
      '61',
      '82 c0 01',
      '9a 00 00 00 00 00 00',
      'ce',
      'd4 0a',
      'd5 0a',
      'd6',
      'ea 00 00 00 00 00 00',
      'f0 90',
      'f0 01 c0',
      'f0 8b 00', // lock: not lockable / register destination
      '8d c0', // lea with a register source
      'ff d8',
      'ff e8',
      'fe 10',
      'ff 38',
      'c6 08 00', // group holes, far forms without memory
      '8e c8',
      '8c f0', // mov to CS, sreg 6
      '0f 20 c8',
      '0f 21 c0 44',
      '44 0f 21 c0', // cr1, dr8
      '66 c5 f8 77',
      'f3 c5 f8 77',
      '48 c5 f8 77',
      'f0 c5 f8 77', // prefixes before VEX
      'c4 e0 78 10 c0', // VEX map 0
      '62 f1 7c 68 58 c0', // EVEX L'L = 11
      '0f 0f c0 00', // unknown 3DNow! suffix
    ]
    for (const b of invalid) expect(reason(b), b).toMatch(/invalid|decoded/)
    for (const b of invalid.filter((x) => x !== '0f 21 c0 44')) expect(reason(b), b).toBe('invalid')
  })

  it('DecodeError carries reason, address and bytes', () => {
    const e = tryDecode(hex('06'), KTEXT) as DecodeError
    expect(e).toBeInstanceOf(Error)
    expect(e).toMatchObject({ name: 'DecodeError', reason: 'invalid', address: KTEXT })
    expect(e.bytes).toEqual(hex('06'))
  })
})
