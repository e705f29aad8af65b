import { DecodeError, InstructionFlag as Flag } from '@probekit/x86-emu'
import pc from 'picocolors'
import { describe, expect, it } from 'vitest'
import { disassemble } from '../src/disassembly/disassemble.js'
import { formatInstruction, instructionLabels } from '../src/disassembly/format-instruction.js'
import { renderListing } from '../src/disassembly/render-listing.js'
import { fakeInstruction, imm, mem, reg } from './fake-instruction.js'

const KERNEL = -0x7f000000 // 0xffffffff81000000

describe('formatInstruction', () => {
  it('spells operands the way capstone does', () => {
    expect(formatInstruction(fakeInstruction(0, '4889e5', 'mov', [reg('rbp'), reg('rsp')]))).toBe(
      'mov rbp, rsp',
    )
    expect(formatInstruction(fakeInstruction(0, '4883ec10', 'sub', [reg('rsp'), imm(0x10)]))).toBe(
      'sub rsp, 0x10',
    )
    expect(formatInstruction(fakeInstruction(0, '6a08', 'push', [imm(8)]))).toBe('push 8')
    expect(formatInstruction(fakeInstruction(0, '6aff', 'push', [imm(-1)]))).toBe('push -1')
    expect(
      formatInstruction(
        fakeInstruction(0, '488945f8', 'mov', [mem({ base: 5, displacement: -8 }), reg('rax')]),
      ),
    ).toBe('mov qword ptr [rbp - 8], rax')
    expect(
      formatInstruction(
        fakeInstruction(0, '8b4c9810', 'mov', [
          reg('ecx'),
          mem({ size: 4, base: 0, index: 3, scale: 4, displacement: 0x10 }),
        ]),
      ),
    ).toBe('mov ecx, dword ptr [rax + rbx*4 + 0x10]')
    expect(
      formatInstruction(
        fakeInstruction(0, '488b0534120000', 'mov', [
          reg('rax'),
          mem({ ripRelative: true, displacement: 0x1234 }),
        ]),
      ),
    ).toBe('mov rax, qword ptr [rip + 0x1234]')
    expect(
      formatInstruction(
        fakeInstruction(0, '65488b0425c0d40100', 'mov', [
          reg('rax'),
          mem({ segment: 'gs', displacement: 0x1d4c0 }),
        ]),
      ),
    ).toBe('mov rax, qword ptr gs:[0x1d4c0]')
    expect(
      formatInstruction(
        fakeInstruction(0, '488d4708', 'lea', [reg('rax'), mem({ size: 0, base: 7, displacement: 8 })]),
      ),
    ).toBe('lea rax, [rdi + 8]')
    expect(
      formatInstruction(
        fakeInstruction(KERNEL, 'e8fb0f0000', 'call', [{ kind: 'rel', target: KERNEL + 0x1000 }]),
      ),
    ).toBe('call 0xffffffff81001000')
  })

  it('prints lock and rep prefixes', () => {
    const cmpxchg = fakeInstruction(0, 'f0480fb10f', 'cmpxchg', [mem({ base: 7 }), reg('rcx')], {
      lock: true,
    })
    expect(formatInstruction(cmpxchg)).toBe('lock cmpxchg qword ptr [rdi], rcx')
    const stos = fakeInstruction(0, 'f348ab', 'stosq', [], { rep: 0xf3, flags: Flag.StringOp })
    expect(formatInstruction(stos)).toBe('rep stosq')
    const scas = fakeInstruction(0, 'f2ae', 'scasb', [], { rep: 0xf2, flags: Flag.StringOp })
    expect(formatInstruction(scas)).toBe('repne scasb')
  })

  it('labels what matters to a prober', () => {
    const ripLoad = fakeInstruction(KERNEL + 0x23, '488b0534120000', 'mov', [
      reg('rax'),
      mem({ ripRelative: true, displacement: 0x1234 }),
    ])
    expect(instructionLabels(ripLoad)).toEqual(['rip -> 0xffffffff8100125e'])
    expect(instructionLabels(fakeInstruction(0, 'cc', 'int3', [], { flags: Flag.Int3 }))).toEqual([
      'breakpoint',
    ])
    expect(
      instructionLabels(
        fakeInstruction(0, 'ffd0', 'call', [reg('rax')], { flags: Flag.Call | Flag.Indirect }),
      ),
    ).toEqual(['call', 'indirect'])
  })
})

describe('disassemble', () => {
  // A decoder over a fixed table of instructions, by offset.
  const program = [
    fakeInstruction(KERNEL, '55', 'push', [reg('rbp')]),
    fakeInstruction(KERNEL + 1, '4889e5', 'mov', [reg('rbp'), reg('rsp')]),
    fakeInstruction(KERNEL + 4, 'cc', 'int3', [], { flags: Flag.Int3 }),
  ]
  const bytes = Uint8Array.from([0x55, 0x48, 0x89, 0xe5, 0xcc, 0x0f, 0xff])
  const decode = (at: Uint8Array, address: number) => {
    const insn = program.find((i) => i.address === address)
    if (!insn) throw new DecodeError('invalid', address, at.subarray(0, 1))
    return insn
  }

  it('walks instruction by instruction and reports where decoding stopped', () => {
    const { instructions, failure } = disassemble(decode, bytes, KERNEL)
    expect(instructions.map((i) => i.mnemonic)).toEqual(['push', 'mov', 'int3'])
    expect(failure).toEqual({ address: KERNEL + 5, reason: 'invalid' })
  })

  it('passes decoder bugs through instead of blaming the input', () => {
    const broken = () => {
      throw new TypeError('oops')
    }
    expect(() => disassemble(broken, bytes, 0)).toThrow(TypeError)
  })

  it('renders an aligned listing with full kernel addresses', () => {
    const listing = renderListing(
      disassemble(decode, bytes.subarray(0, 5), KERNEL).instructions,
      pc.createColors(false),
    )
    expect(listing.split('\n')).toEqual([
      'address           bytes     instruction   notes',
      'ffffffff81000000  55        push rbp',
      'ffffffff81000001  48 89 e5  mov rbp, rsp',
      'ffffffff81000004  cc        int3          breakpoint',
    ])
  })
})
