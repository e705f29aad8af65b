// Test-only helpers for hand-encoded instruction tests: hex byte strings,
// named registers, and a runFlat wrapper that takes/returns them by name.

import { FLAT_DATA_ADDRESS, type FlatOutcome, runFlat } from './flat.js'

export const DATA = FLAT_DATA_ADDRESS

export const REGS = [
  'rax',
  'rcx',
  'rdx',
  'rbx',
  'rsp',
  'rbp',
  'rsi',
  'rdi',
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
] as const
export type Reg = (typeof REGS)[number]

// RFLAGS bits.
export const CF = 0x1n
export const PF = 0x4n
export const AF = 0x10n
export const ZF = 0x40n
export const SF = 0x80n
export const DF = 0x400n
export const OF = 0x800n
export const ARITH = CF | PF | AF | ZF | SF | OF
/** Bit 1 (always set) and IF (runFlat sets it). */
export const FIXED = 0x202n

/** '48 0f af c1' -> bytes (spaces and '|' separators ignored). */
export function hex(s: string): Uint8Array {
  const t = s.replace(/[\s|]/g, '')
  if (t.length % 2 !== 0) throw new Error(`odd hex string '${s}'`)
  const out = new Uint8Array(t.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(t.slice(2 * i, 2 * i + 2), 16)
  return out
}

export interface Case {
  /** Code as hex text or bytes. */
  code: string | Uint8Array
  regs?: Partial<Record<Reg, bigint>>
  /** Initial arithmetic flags/DF (bit 1 and IF are added). */
  flags?: bigint
  /** Bytes placed at the start of the data page, or a callback filling the page. */
  data?: ArrayLike<number> | ((page: Uint8Array) => void)
}

export interface Result {
  regs: Record<Reg, bigint>
  /** RFLAGS without bit 1 and IF. */
  flags: bigint
  data: Uint8Array
  rip: bigint
  fault: FlatOutcome['fault']
  /** RIP relative to the start of the code. */
  offset: number
}

export function run(c: Case): Result {
  const code = typeof c.code === 'string' ? hex(c.code) : c.code
  const gpr = REGS.map((r) => BigInt.asUintN(64, c.regs?.[r] ?? 0n))
  const data = new Uint8Array(4096)
  if (typeof c.data === 'function') c.data(data)
  else if (c.data) data.set(c.data)
  const out = runFlat({ code, gpr, rflags: (c.flags ?? 0n) | 2n, data })
  const regs = {} as Record<Reg, bigint>
  REGS.forEach((r, i) => {
    regs[r] = out.gpr[i]
  })
  return {
    regs,
    flags: out.rflags & ~FIXED,
    data: out.data,
    rip: out.rip,
    fault: out.fault,
    offset: Number(out.rip - 0x10000000n),
  }
}

/** Little-endian bytes of a value. */
export function le(v: bigint, size: number): number[] {
  const out: number[] = []
  let x = BigInt.asUintN(size * 8, v)
  for (let i = 0; i < size; i++) {
    out.push(Number(x & 0xffn))
    x >>= 8n
  }
  return out
}

/** Read a little-endian value from a data page. */
export function rd(data: Uint8Array, off: number, size: number): bigint {
  let v = 0n
  for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(data[off + i])
  return v
}

/** Flags among `mask` that are set in `flags`. */
export function pick(flags: bigint, mask: bigint): bigint {
  return flags & mask
}
