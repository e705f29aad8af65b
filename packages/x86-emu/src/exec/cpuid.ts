// CPUID: reports exactly the baseline x86-64 feature set the emulator
// implements, so libc picks matching code paths.

import type { Cpu } from '../cpu/cpu.js'

function str4(s: string): number {
  return s.charCodeAt(0) | (s.charCodeAt(1) << 8) | (s.charCodeAt(2) << 16) | (s.charCodeAt(3) << 24) | 0
}

const VENDOR = 'GenuineIntel'
const BRAND = 'probekit x86-64 emulator'.padEnd(48, '\0')

// Leaf 1 EDX: FPU TSC MSR PAE CX8 PGE CMOV PAT CLFSH MMX FXSR SSE SSE2. No
// APIC: the machine has no local APIC (its timer is a per-vCPU host device).
// PAT is the MSR alone (memory types have no effect without caches).
// test/cpuid.test.ts executes a representative instruction for every bit.
const LEAF1_EDX =
  (1 << 0) |
  (1 << 4) |
  (1 << 5) |
  (1 << 6) |
  (1 << 8) |
  (1 << 13) |
  (1 << 15) |
  (1 << 16) |
  (1 << 19) |
  (1 << 23) |
  (1 << 24) |
  (1 << 25) |
  (1 << 26)
// Leaf 1 ECX: CX16.
const LEAF1_ECX = 1 << 13
// 0x80000001 EDX: SYSCALL NX RDTSCP LM; ECX: LAHF/SAHF.
const EXT1_EDX = (1 << 11) | (1 << 20) | (1 << 27) | (1 << 29)
const EXT1_ECX = 1 << 0

export function cpuid(c: Cpu, leaf: number, _sub: number): [number, number, number, number] {
  switch (leaf) {
    case 0:
      return [7, str4(VENDOR.slice(0, 4)), str4(VENDOR.slice(8, 12)), str4(VENDOR.slice(4, 8))]
    case 1:
      // Family 6, model 0x3a; CLFLUSH line 8 qwords; APIC id = CPU number.
      return [0x000306a0, (c.id << 24) | (1 << 16) | (8 << 8), LEAF1_ECX, LEAF1_EDX]
    case 0x80000000:
      return [0x80000008 | 0, 0, 0, 0]
    case 0x80000001:
      return [0, 0, EXT1_ECX, EXT1_EDX]
    case 0x80000002:
    case 0x80000003:
    case 0x80000004: {
      const o = (leaf - 0x80000002) * 16
      return [
        str4(BRAND.slice(o, o + 4)),
        str4(BRAND.slice(o + 4, o + 8)),
        str4(BRAND.slice(o + 8, o + 12)),
        str4(BRAND.slice(o + 12, o + 16)),
      ]
    }
    case 0x80000008:
      return [0x3028, 0, 0, 0] // 40-bit physical, 48-bit linear addresses
    default:
      return [0, 0, 0, 0]
  }
}
