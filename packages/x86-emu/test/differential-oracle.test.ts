/// <reference types="node" />
// The reference side of the differential test, checked on its own:
//  - the native oracle (native/regs-oracle) on hand-checked cases;
//  - the instruction-form generator: unique names, an encoder that capstone
//    decodes to the named instruction, and cases that fault natively exactly
//    when the generator expects them to.

import { beforeAll, describe, expect, it } from 'vitest'
import { loadDisassembler } from './support/diff-capstone.js'
import {
  CF,
  CODE_BASE,
  DATA_BASE,
  DF,
  duplicateFormNames,
  type GeneratedCase,
  generateCases,
  INSTRUCTION_FORMS,
  OF,
  PF,
  SF,
  ZF,
} from './support/instruction-forms.js'
import {
  type NativeCase,
  type NativeOutcome,
  nativeOracleAvailable,
  nativeUnavailableReason,
  runNativeBatch,
} from './support/native.js'

const RAX = 0
const RCX = 1
const RBX = 3
const RSP = 4
const RSI = 6
const RDI = 7

function blank(code: number[], setup: (c: NativeCase) => void = () => {}): NativeCase {
  const gpr = Array.from({ length: 16 }, (_, i) => BigInt.asUintN(64, 0x1111111111111111n * BigInt(i + 1)))
  gpr[RSP] = DATA_BASE + 0x800n
  const c: NativeCase = { code: Uint8Array.from(code), gpr, rflags: 2n, data: new Uint8Array(4096) }
  setup(c)
  return c
}

describe.skipIf(!nativeOracleAvailable())('native register oracle (hand-checked cases)', () => {
  const cases = {
    empty: blank([], (c) => {
      c.rflags = BigInt(2 | CF | ZF | DF | OF)
    }),
    add: blank([0x01, 0xd8], (c) => {
      // add eax, ebx
      c.gpr[RAX] = 0xffffffff7fffffffn
      c.gpr[RBX] = 0x1234567800000001n
      c.rflags = BigInt(2 | CF | ZF)
    }),
    divZero: blank([0x31, 0xc9, 0x48, 0xf7, 0xf1]), // xor ecx, ecx; div rcx
    pushPop: blank([0x50, 0x5b], (c) => {
      // push rax; pop rbx
      c.gpr[RAX] = 0x0123456789abcdefn
    }),
    int3: blank([0xcc, 0x90]),
    std: blank([0xfd]),
    unmappedWrite: blank([0x48, 0x89, 0x18], (c) => {
      // mov [rax], rbx
      c.gpr[RAX] = 0x30000000n
    }),
    ignoredInputFlags: blank([0x90], (c) => {
      // TF, IF, AC and ID in the input are not loaded
      c.rflags = BigInt(2 | CF | 0x100 | 0x200 | 0x40000 | 0x200000)
    }),
    repMovsb: blank([0xf3, 0xa4], (c) => {
      c.gpr[RSI] = DATA_BASE + 0x100n
      c.gpr[RDI] = DATA_BASE + 0x200n
      c.gpr[RCX] = 16n
      for (let i = 0; i < 16; i++) c.data[0x100 + i] = i + 1
    }),
  }
  let out: Record<keyof typeof cases, NativeOutcome>

  beforeAll(() => {
    const names = Object.keys(cases) as Array<keyof typeof cases>
    const results = runNativeBatch(names.map((n) => cases[n]))
    out = Object.fromEntries(names.map((n, i) => [n, results[i]])) as Record<
      keyof typeof cases,
      NativeOutcome
    >
  })

  it('an empty sequence returns every register unchanged, and the loaded flags', () => {
    const o = out.empty
    expect(o.fault).toBeNull()
    expect(o.gpr).toEqual(cases.empty.gpr)
    expect(o.rflags).toBe(BigInt(2 | CF | ZF | DF | OF))
    expect(o.rip).toBe(CODE_BASE)
    expect(o.data).toEqual(cases.empty.data)
  })

  it('add eax, ebx: 0x7fffffff + 1 = 0x80000000, zero-extended, with OF SF AF PF', () => {
    const o = out.add
    expect(o.fault).toBeNull()
    expect(o.gpr[RAX]).toBe(0x80000000n)
    expect(o.gpr[RBX]).toBe(0x1234567800000001n)
    expect(o.rflags).toBe(BigInt(2 | OF | SF | 0x10 | PF))
    expect(o.rip).toBe(CODE_BASE + 2n)
  })

  it('div by zero raises #DE (vector 0) at the div, after the xor ran', () => {
    const o = out.divZero
    expect(o.fault).toEqual({ vector: 0, errorCode: 0 })
    expect(o.signal).toBe(8)
    expect(o.rip).toBe(CODE_BASE + 2n)
    expect(o.gpr[RCX]).toBe(0n)
    expect(o.rflags & BigInt(ZF | PF | CF | OF | SF)).toBe(BigInt(ZF | PF))
  })

  it('push rax; pop rbx moves the value through the data page', () => {
    const o = out.pushPop
    expect(o.fault).toBeNull()
    expect(o.gpr[RBX]).toBe(0x0123456789abcdefn)
    expect(o.gpr[RSP]).toBe(DATA_BASE + 0x800n)
    expect(Buffer.from(o.data.subarray(0x7f8, 0x800)).readBigUInt64LE(0)).toBe(0x0123456789abcdefn)
  })

  it('int3 is a trap: vector 3, rip after the int3', () => {
    expect(out.int3.fault).toEqual({ vector: 3, errorCode: 0 })
    expect(out.int3.rip).toBe(CODE_BASE + 1n)
  })

  it('std sets DF in the reported flags', () => {
    expect(out.std.rflags & BigInt(DF)).toBe(BigInt(DF))
  })

  it('a write to an unmapped page is #PF with error code 6 (write, user) and CR2', () => {
    const o = out.unmappedWrite
    expect(o.fault).toEqual({ vector: 14, errorCode: 6 })
    expect(o.cr2).toBe(0x30000000n)
    expect(o.rip).toBe(CODE_BASE)
  })

  it('TF, IF, AC and ID in a case are not loaded, and not reported', () => {
    expect(out.ignoredInputFlags.fault).toBeNull()
    expect(out.ignoredInputFlags.rflags).toBe(BigInt(2 | CF))
  })

  it('rep movsb copies and advances rsi, rdi, rcx', () => {
    const o = out.repMovsb
    expect(o.fault).toBeNull()
    expect(Array.from(o.data.subarray(0x200, 0x210))).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    expect(o.gpr[RCX]).toBe(0n)
    expect(o.gpr[RSI]).toBe(DATA_BASE + 0x110n)
    expect(o.gpr[RDI]).toBe(DATA_BASE + 0x210n)
  })
})

describe('instruction forms', () => {
  it('have unique names and cover every group', () => {
    expect(duplicateFormNames()).toEqual([])
    const groups = new Set(INSTRUCTION_FORMS.map((f) => f.group))
    for (const g of [
      'alu',
      'unary',
      'muldiv',
      'shift',
      'bit',
      'cond',
      'branch',
      'stack',
      'mov',
      'lea',
      'string',
    ])
      expect(groups).toContain(g)
    expect(INSTRUCTION_FORMS.length).toBeGreaterThan(900)
  })

  it('are deterministic', () => {
    const f = INSTRUCTION_FORMS[17]
    const a = generateCases(f, 3)
    const b = generateCases(f, 3)
    expect(a).toEqual(b)
  })

  it('encode to what capstone decodes as the named instruction', async () => {
    const cs = await loadDisassembler()
    const problems: string[] = []
    try {
      for (const form of INSTRUCTION_FORMS) {
        if (form.group === 'fault') continue
        const want = expectedMnemonic(form.name)
        for (const c of generateCases(form, 3)) {
          const insns = cs.disasm(c.code, CODE_BASE)
          const length = insns.reduce((n, i) => n + i.size, 0)
          const mnemonics = insns.map((i) => i.mnemonic)
          if (length !== c.code.length || !want.some((m) => mnemonics.includes(m)))
            problems.push(
              `${form.name}: ${hexBytes(c.code)} -> ${insns.map((i) => `${i.mnemonic} ${i.opStr}`).join('; ')}`,
            )
        }
      }
    } finally {
      cs.close()
    }
    expect(problems.slice(0, 20)).toEqual([])
  })

  it.skipIf(!nativeOracleAvailable())('fault natively exactly where the generator expects', () => {
    const cases: GeneratedCase[] = INSTRUCTION_FORMS.flatMap((f) => generateCases(f, 4))
    const results = runNativeBatch(cases)
    const problems: string[] = []
    cases.forEach((c, i) => {
      const o = results[i]
      const vector = o.fault ? o.fault.vector : null
      if (o.timedOut) problems.push(`${c.form} #${c.index}: timed out`)
      else if (c.expectVector !== undefined && vector !== c.expectVector)
        problems.push(
          `${c.form} #${c.index}: expected ${c.expectVector}, got ${vector} (${hexBytes(c.code)})`,
        )
      else if (vector === null && o.rip !== CODE_BASE + BigInt(c.code.length))
        problems.push(`${c.form} #${c.index}: ended at ${o.rip.toString(16)}`)
    })
    expect(problems.slice(0, 20)).toEqual([])
  })

  if (!nativeOracleAvailable()) it.skip(`native checks skipped: ${nativeUnavailableReason()}`, () => {})
})

function hexBytes(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' ')
}

/** Capstone mnemonics that a form's name stands for. */
function expectedMnemonic(name: string): string[] {
  const words = name.split(/[\s;]+/)
  const first = words[0]
  const prefixed = ['lock', 'rep', 'repe', 'repne'].includes(first)
  const mn = prefixed ? `${first} ${words[1]}` : first
  if (name.startsWith('rep bsf (tzcnt')) return ['tzcnt']
  if (/moffs64|imm64/.test(name)) return ['movabs']
  if (name.startsWith('xchg r8, rax')) return ['xchg', 'nop']
  return [mn]
}
