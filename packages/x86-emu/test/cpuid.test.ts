// CPUID reports exactly what is implemented: every feature bit it sets has a
// representative instruction (or mode) that really executes here, and the
// instructions of features it does not report raise #UD, as on a CPU
// without them. A new bit in cpuid.ts without an entry below fails the test.

import { describe, expect, test } from 'vitest'
import { type Cpu, cpuid, Machine } from '../src/index.js'
import { FLAT_DATA_ADDRESS, runFlat } from './support/flat.js'

interface Probe {
  /** Code run in the flat harness (rbx = 16-byte aligned data, rcx = 0x277 for rdmsr). */
  code: number[]
  kernel?: boolean
  /** The expected outcome: completes, or this fault (the instruction executed as far as its checks). */
  fault?: { vector: number; errorCode?: number }
}

// rbx = data page; the code runs in 64-bit mode with 4-level paging.
const FEATURES: Record<string, Probe> = {
  'leaf1.edx.0 FPU': { code: [0xd9, 0xe8, 0xdd, 0xd8] }, // fld1; fstp st0
  'leaf1.edx.4 TSC': { code: [0x0f, 0x31] }, // rdtsc
  'leaf1.edx.5 MSR': { code: [0x0f, 0x32], kernel: true }, // rdmsr (PAT)
  'leaf1.edx.6 PAE': { code: [0x48, 0x8b, 0x03] }, // mov rax, [rbx] through PAE page tables
  'leaf1.edx.8 CX8': { code: [0xf0, 0x0f, 0xc7, 0x0b] }, // lock cmpxchg8b [rbx]
  'leaf1.edx.13 PGE': { code: [0x0f, 0x20, 0xe0, 0x48, 0x0d, 0x80, 0, 0, 0, 0x0f, 0x22, 0xe0], kernel: true }, // cr4 |= PGE
  'leaf1.edx.15 CMOV': { code: [0x0f, 0x44, 0xc1] }, // cmovz eax, ecx
  'leaf1.edx.16 PAT': { code: [0x0f, 0x32, 0x0f, 0x30], kernel: true }, // rdmsr/wrmsr IA32_PAT
  'leaf1.edx.19 CLFSH': { code: [0x0f, 0xae, 0x3b] }, // clflush [rbx]
  'leaf1.edx.23 MMX': { code: [0x0f, 0xfc, 0xc1, 0x0f, 0x77] }, // paddb mm0, mm1; emms
  'leaf1.edx.24 FXSR': { code: [0x0f, 0xae, 0x03, 0x0f, 0xae, 0x0b] }, // fxsave [rbx]; fxrstor [rbx]
  'leaf1.edx.25 SSE': { code: [0x0f, 0x58, 0xc1, 0x0f, 0xae, 0x5b, 0x10] }, // addps; stmxcsr
  'leaf1.edx.26 SSE2': { code: [0x66, 0x0f, 0x58, 0xc1, 0x66, 0x0f, 0xd4, 0xc1] }, // addpd; paddq
  'leaf1.ecx.13 CX16': { code: [0xf0, 0x48, 0x0f, 0xc7, 0x0b] }, // lock cmpxchg16b [rbx]
  'ext1.edx.11 SYSCALL': { code: [0x0f, 0x05], fault: { vector: 14 } }, // syscall: to LSTAR (0, unmapped)
  'ext1.edx.20 NX': { code: [0xff, 0xe3], fault: { vector: 14, errorCode: 0x15 } }, // jmp rbx: fetch from an NX page
  'ext1.edx.27 RDTSCP': { code: [0x0f, 0x01, 0xf9] },
  'ext1.edx.29 LM': { code: [0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff] }, // mov rax, -1 (64-bit mode)
  'ext1.ecx.0 LAHF': { code: [0x9f, 0x9e] }, // lahf; sahf
}

// Features not reported: a representative instruction of each is #UD.
const UNREPORTED: Record<string, number[]> = {
  'SSE3 haddps': [0xf2, 0x0f, 0x7c, 0xc1],
  'SSE3 movddup': [0xf2, 0x0f, 0x12, 0xc1],
  'SSSE3 pshufb': [0x66, 0x0f, 0x38, 0x00, 0xc1],
  'SSE4.1 pminsd': [0x66, 0x0f, 0x38, 0x39, 0xc1],
  'SSE4.2 pcmpgtq': [0x66, 0x0f, 0x38, 0x37, 0xc1],
  POPCNT: [0xf3, 0x0f, 0xb8, 0xc1],
  MOVBE: [0x0f, 0x38, 0xf0, 0x03],
  AVX: [0xc5, 0xf0, 0x58, 0xc2],
  AES: [0x66, 0x0f, 0x38, 0xdc, 0xc1],
  PCLMULQDQ: [0x66, 0x0f, 0x3a, 0x44, 0xc1, 0x00],
  XSAVE: [0x0f, 0xae, 0x23],
  RDRAND: [0x0f, 0xc7, 0xf0],
}

function run(code: number[], kernel = false) {
  const gpr = Array.from({ length: 16 }, () => 0n)
  gpr[1] = 0x277n
  gpr[3] = FLAT_DATA_ADDRESS
  gpr[4] = FLAT_DATA_ADDRESS + 0xf00n
  const data = new Uint8Array(4096)
  return [Number.POSITIVE_INFINITY, 0].map((jit) =>
    runFlat({ code: Uint8Array.from(code), gpr, rflags: 2n, data, kernel }, 100, jit),
  )
}

function reportedBits(): string[] {
  const c = new Machine({ memorySize: 1 << 20 }).cpus[0] as Cpu
  const bits: string[] = []
  const collect = (name: string, v: number) => {
    for (let b = 0; b < 32; b++) if ((v >>> b) & 1) bits.push(`${name}.${b}`)
  }
  const [, , ecx1, edx1] = cpuid(c, 1, 0)
  const [, , ecxE, edxE] = cpuid(c, 0x80000001, 0)
  collect('leaf1.edx', edx1)
  collect('leaf1.ecx', ecx1)
  collect('ext1.edx', edxE)
  collect('ext1.ecx', ecxE)
  for (const leaf of [7, 0xd]) for (const v of cpuid(c, leaf, 0)) collect(`leaf${leaf}`, v)
  return bits
}

describe('cpuid reports exactly what is implemented', () => {
  const bits = reportedBits()
  test('every reported bit has a representative here', () => {
    const known = Object.keys(FEATURES).map((k) => k.split(' ')[0])
    expect(bits.filter((b) => !known.includes(b))).toEqual([])
    expect(known.filter((k) => !bits.includes(k))).toEqual([])
  })
  for (const [name, p] of Object.entries(FEATURES))
    test(`${name}: executes`, () => {
      for (const o of run(p.code, p.kernel)) {
        if (p.fault) {
          expect(o.fault?.vector).toBe(p.fault.vector)
          if (p.fault.errorCode !== undefined) expect(o.fault?.errorCode).toBe(p.fault.errorCode)
        } else expect(o.fault).toBe(null)
      }
    })
  for (const [name, code] of Object.entries(UNREPORTED))
    test(`${name} (not reported): #UD`, () => {
      for (const o of run(code)) expect(o.fault).toEqual({ vector: 6, errorCode: 0 })
    })
})
