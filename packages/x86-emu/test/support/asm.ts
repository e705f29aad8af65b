// Test-only helpers for hand-encoded instruction tests: hex byte strings,
// named registers, and a runFlat wrapper that takes/returns them by name.

import { expect } from 'vitest'
import {
  AddressSpace,
  EFER_LMA,
  EFER_NXE,
  EFER_SCE,
  GPR_NAMES,
  IF,
  Machine,
  USER_CS,
  USER_SS,
} from '../../src/index.js'
import { FLAT_CODE_ADDRESS, FLAT_DATA_ADDRESS, type FlatOutcome, runFlat } from './flat.js'

export const DATA = FLAT_DATA_ADDRESS

export const REGS = GPR_NAMES
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

export interface BigCase extends Case {
  /** Data pages mapped at DATA (default 16). */
  pages?: number
  /** Stop after this many retired instructions (a rep chunk counts as one). */
  maxInstructions?: number
}

export interface BigResult {
  regs: Record<Reg, bigint>
  flags: bigint
  data: Uint8Array
  /** RIP relative to the start of the code. */
  offset: number
  fault: null | { vector: number; errorCode: number }
  instructions: number
}

/**
 * Like run() with a larger data area (the flat runner maps one page) and an
 * instruction budget, to watch a rep instruction part-way. Code at the flat
 * code address, padded with int3; data at DATA.
 */
export function runBig(c: BigCase): BigResult {
  const pages = c.pages ?? 16
  const m = new Machine({ memorySize: 8 * 1024 * 1024 })
  const space = new AddressSpace(m.memory, m.frames)
  const codeAddr = Number(FLAT_CODE_ADDRESS)
  const dataAddr = Number(FLAT_DATA_ADDRESS)
  const codeBytes = typeof c.code === 'string' ? hex(c.code) : c.code
  const code = new Uint8Array(4096).fill(0xcc)
  code.set(codeBytes)
  const cf = m.frames.alloc()
  m.memory.writeBytes(cf * 4096, code)
  space.map(codeAddr, cf, { user: true, writable: false })
  const data = new Uint8Array(pages * 4096)
  if (typeof c.data === 'function') c.data(data)
  else if (c.data) data.set(c.data)
  const frames: number[] = []
  for (let p = 0; p < pages; p++) {
    const f = m.frames.alloc()
    frames.push(f)
    m.memory.writeBytes(f * 4096, data.subarray(p * 4096, (p + 1) * 4096))
    space.map(dataAddr + p * 4096, f, { user: true, writable: true, nx: true })
  }
  const cpu = m.cpus[0]
  cpu.efer = EFER_LMA | EFER_NXE | EFER_SCE
  cpu.setCr3(space.root)
  cpu.setCpl(3)
  cpu.cs = USER_CS
  cpu.ss = USER_SS
  REGS.forEach((r, i) => {
    cpu.setReg(i, c.regs?.[r] ?? 0n)
  })
  cpu.rflags = Number((c.flags ?? 0n) | 2n) | IF
  cpu.rip = codeAddr
  let fault: BigResult['fault'] = null
  m.trapHandler = (_cpu, ev) => {
    if (!(ev.vector === 3 && ev.kind === 'trap')) fault = { vector: ev.vector, errorCode: ev.errorCode }
    return 'stop'
  }
  const result = m.run({ maxInstructions: c.maxInstructions ?? 10_000_000 })
  const regs = {} as Record<Reg, bigint>
  REGS.forEach((r, i) => {
    regs[r] = cpu.getReg(i)
  })
  const out = new Uint8Array(pages * 4096)
  frames.forEach((f, p) => {
    out.set(m.memory.readBytes(f * 4096, 4096), p * 4096)
  })
  return {
    regs,
    flags: BigInt(cpu.rflags >>> 0) & ~FIXED,
    data: out,
    offset: cpu.rip - codeAddr,
    fault,
    instructions: result.instructions,
  }
}

export interface Expect {
  /** Full 64-bit register values expected after the run. */
  regs?: Partial<Record<Reg, bigint>>
  /** Expected arithmetic flags (compared under `mask`, default all six). */
  flags?: bigint
  mask?: bigint
  /** [offset in the data page, size, value] */
  mem?: Array<[number, number, bigint]>
  /** Expected fault vector (default: none). */
  fault?: number | null
}

/** Assert a run's outcome (registers in hex so failures read well). */
export function expectResult(r: Result | BigResult, e: Expect): void {
  const h = (v: bigint) => `0x${v.toString(16)}`
  expect(r.fault?.vector ?? null, 'fault').toBe(e.fault ?? null)
  for (const [k, v] of Object.entries(e.regs ?? {}))
    expect(h(r.regs[k as Reg]), k).toBe(h(BigInt.asUintN(64, v as bigint)))
  if (e.flags !== undefined) {
    const mask = e.mask ?? ARITH
    expect(h(r.flags & mask), 'flags').toBe(h(e.flags & mask))
  }
  for (const [off, size, v] of e.mem ?? [])
    expect(h(rd(r.data, off, size)), `mem+${off}`).toBe(h(BigInt.asUintN(size * 8, v)))
}
