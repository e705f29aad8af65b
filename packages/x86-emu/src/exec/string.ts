// String instructions: movs, cmps, stos, lods, scas (A4-AF) in every size,
// with rep / repe / repne, DF, and 64- or 32-bit (67h) addressing.
//
// Each iteration does its memory accesses before it advances rsi/rdi and
// decrements rcx, so a fault leaves the registers describing exactly the
// iterations that completed, as on hardware. A rep op runs at most
// REP_CHUNK iterations per invocation; when more remain it sets
// Cpu.repeatCurrent so the runner leaves RIP on the instruction and runs it
// again, so interrupts, the quantum and the budget can act in between.
//
// Between single iterations (which prime the TLB and take every fault
// precisely), rep movs/stos/cmps/scas process the rest of the current page
// directly in physical memory when the TLB already grants the access; pages
// holding code or watched by data breakpoints never get such TLB entries, so
// they keep the per-access path. Overlapping moves keep the result of
// element-by-element execution.
//
// F2 and F3 both mean "rep" for movs/stos/lods (as on Intel); for cmps/scas
// F3 is repe and F2 repne. Only the [rsi] source takes a segment override
// (fs/gs add their base); [rdi] is always ES (base 0 in 64-bit mode).

import type { Cpu } from '../cpu/cpu.js'
import { DF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { TLB_MASK } from '../memory/tlb.js'
import { ALU_BY_SIZE, ALU_SUB, ALU64 } from './alu.js'
import type { Op } from './op.js'
import { memReadAt, memWriteAt, readReg, wrap64, writeReg } from './operands.js'

/** Iterations a rep string op runs before yielding to the runner. */
export const REP_CHUNK = 4096

const TWO_32 = 0x1_0000_0000
const RSI = 12 // index of rsi's low half in Cpu.r
const RDI = 14

type Addr = (c: Cpu) => number
/** One iteration: returns whether the compared values were equal (cmps/scas; true otherwise). */
type Body = (c: Cpu, delta: number) => boolean

function pointer(i: number, a32: boolean): Addr {
  if (a32) return (c) => c.r[i] >>> 0
  return (c) => c.r[i + 1] * TWO_32 + (c.r[i] >>> 0)
}

function sourcePointer(a32: boolean, seg: string | null): Addr {
  const p = pointer(RSI, a32)
  if (seg === 'fs') return (c) => wrap64(p(c) + c.fsBase)
  if (seg === 'gs') return (c) => wrap64(p(c) + c.gsBase)
  return p
}

/** Add delta (±1..8) to rsi/rdi: 64-bit with carry, or 32-bit zero-extended. */
function advance(c: Cpu, i: number, delta: number, a32: boolean): void {
  const r = c.r
  const lo = r[i]
  const n = (lo + delta) | 0
  r[i] = n
  if (a32) r[i + 1] = 0
  else if (delta > 0 ? n >>> 0 < lo >>> 0 : n >>> 0 > lo >>> 0)
    r[i + 1] = (r[i + 1] + (delta > 0 ? 1 : -1)) | 0
}

function makeBody(kind: number, size: number, a32: boolean, seg: string | null): Body {
  const src = sourcePointer(a32, seg)
  const dst = pointer(RDI, a32)
  const rd = memReadAt(size, false)
  const wr = memWriteAt(size)
  const acc = readReg(0, size)
  const setAcc = writeReg(0, size)
  switch (kind) {
    case 0xa4: // movs
      return (c, delta) => {
        const lo = rd(c, src(c))
        wr(c, dst(c), lo, c.th)
        advance(c, RSI, delta, a32)
        advance(c, RDI, delta, a32)
        return true
      }
    case 0xaa: // stos
      return (c, delta) => {
        const lo = acc(c)
        wr(c, dst(c), lo, c.th)
        advance(c, RDI, delta, a32)
        return true
      }
    case 0xac: // lods
      return (c, delta) => {
        const lo = rd(c, src(c))
        setAcc(c, lo, c.th)
        advance(c, RSI, delta, a32)
        return true
      }
    case 0xa6: // cmps: flags of [rsi] - [rdi]
      if (size === 8) {
        const sub = ALU64[ALU_SUB]
        return (c, delta) => {
          const alo = rd(c, src(c))
          const ahi = c.th
          const blo = rd(c, dst(c))
          const bhi = c.th
          sub(c, alo, ahi, blo, bhi)
          advance(c, RSI, delta, a32)
          advance(c, RDI, delta, a32)
          return alo === blo && ahi === bhi
        }
      }
      {
        const sub = ALU_BY_SIZE[size][ALU_SUB]
        return (c, delta) => {
          const a = rd(c, src(c))
          const b = rd(c, dst(c))
          sub(c, a, b)
          advance(c, RSI, delta, a32)
          advance(c, RDI, delta, a32)
          return a === b
        }
      }
    default: // scas: flags of acc - [rdi]
      if (size === 8) {
        const sub = ALU64[ALU_SUB]
        return (c, delta) => {
          const blo = rd(c, dst(c))
          const bhi = c.th
          const alo = acc(c)
          const ahi = c.th
          sub(c, alo, ahi, blo, bhi)
          advance(c, RDI, delta, a32)
          return alo === blo && ahi === bhi
        }
      }
      {
        const sub = ALU_BY_SIZE[size][ALU_SUB]
        return (c, delta) => {
          const b = rd(c, dst(c))
          const a = acc(c)
          sub(c, a, b)
          advance(c, RDI, delta, a32)
          return a === b
        }
      }
  }
}

// ---------------------------------------------------------------- in-page runs

/** Continues a rep op inside the current page(s): does up to `max` iterations without faulting, returns how many. */
type Run = (c: Cpu, delta: number, max: number) => number

/** Physical address of addr when the TLB already allows the access (`bit` is Cpu.rBit or wBit), else -1. */
function physFor(c: Cpu, addr: number, bit: number): number {
  const vpn = Math.floor(addr / 4096)
  const i = (vpn ^ (vpn >> 10)) & TLB_MASK
  const t = c.tlb
  return t.vpn[i] === vpn && (t.bits[i] & bit) !== 0 ? t.phys[i] + (addr & 0xfff) : -1
}

/** How many elements from addr onwards (stepping by delta) lie wholly inside addr's page. */
function inPage(addr: number, size: number, delta: number): number {
  const off = addr & 0xfff
  if (delta > 0) return Math.floor((4096 - off) / size)
  return off + size <= 4096 ? Math.floor(off / size) + 1 : 0
}

/** Reads an element from physical memory (8-byte: low half, high half in Cpu.th). */
function physReader(size: number): (c: Cpu, p: number) => number {
  switch (size) {
    case 1:
      return (c, p) => c.mem[p]
    case 2:
      return (c, p) => c.view.getUint16(p, true)
    case 4:
      return (c, p) => c.view.getInt32(p, true)
    default:
      return (c, p) => {
        c.th = c.view.getInt32(p + 4, true)
        return c.view.getInt32(p, true)
      }
  }
}

function makeRun(
  kind: number,
  size: number,
  a32: boolean,
  seg: string | null,
  whileEqual: boolean,
): Run | null {
  const src = sourcePointer(a32, seg)
  const dst = pointer(RDI, a32)
  switch (kind) {
    case 0xaa: // stos
      return (c, delta, max) => {
        const a = dst(c)
        const k = Math.min(inPage(a, size, delta), max)
        if (k <= 0) return 0
        const p = physFor(c, a, c.wBit)
        if (p < 0) return 0
        const start = delta > 0 ? p : p - (k - 1) * size
        const r = c.r
        if (size === 1) c.mem.fill(r[0] & 0xff, start, start + k)
        else {
          const v = c.view
          const lo = r[0]
          const hi = r[1]
          for (let j = 0, q = start; j < k; j++, q += size) {
            if (size === 2) v.setUint16(q, lo, true)
            else {
              v.setInt32(q, lo, true)
              if (size === 8) v.setInt32(q + 4, hi, true)
            }
          }
        }
        advance(c, RDI, delta * k, a32)
        return k
      }
    case 0xa4: // movs
      return (c, delta, max) => {
        const s = src(c)
        const d = dst(c)
        const k = Math.min(inPage(s, size, delta), inPage(d, size, delta), max)
        if (k <= 0) return 0
        const ps = physFor(c, s, c.rBit)
        const pd = physFor(c, d, c.wBit)
        if (ps < 0 || pd < 0) return 0
        const n = k * size
        const s0 = delta > 0 ? ps : ps - (k - 1) * size
        const d0 = delta > 0 ? pd : pd - (k - 1) * size
        const mem = c.mem
        if (s0 >= d0 + n || d0 >= s0 + n || (delta > 0 ? d0 <= s0 : d0 >= s0)) {
          // Disjoint, or overlapping the way element order makes equal to memmove.
          mem.copyWithin(d0, s0, s0 + n)
        } else {
          // Overlap against the direction (the "replicate a pattern" idiom): bytewise in
          // iteration order equals elementwise when the distance is at least one element.
          if (Math.abs(d0 - s0) < size) return 0
          if (delta > 0) for (let j = 0; j < n; j++) mem[d0 + j] = mem[s0 + j]
          else for (let j = n - 1; j >= 0; j--) mem[d0 + j] = mem[s0 + j]
        }
        advance(c, RSI, delta * k, a32)
        advance(c, RDI, delta * k, a32)
        return k
      }
    case 0xae: {
      // scas: stops before an element that ends the repetition (the single-step path takes it).
      const rd = physReader(size)
      const mask = size === 1 ? 0xff : size === 2 ? 0xffff : -1
      const sub = size === 8 ? null : ALU_BY_SIZE[size][ALU_SUB]
      const sub64 = ALU64[ALU_SUB]
      return (c, delta, max) => {
        const a = dst(c)
        const k = Math.min(inPage(a, size, delta), max)
        if (k <= 0) return 0
        const p = physFor(c, a, c.rBit)
        if (p < 0) return 0
        const r = c.r
        const alo = r[0] & mask
        const ahi = r[1]
        let n = 0
        let vlo = 0
        let vhi = 0
        if (size === 1) {
          // strlen-style byte loop, the common case.
          const mem = c.mem
          for (let q = p; n < k; n++, q += delta) {
            const v = mem[q]
            if ((v === alo) !== whileEqual) break
            vlo = v
          }
        } else
          for (let q = p; n < k; n++, q += delta) {
            const lo = rd(c, q)
            const eq = size === 8 ? lo === alo && c.th === ahi : lo === alo
            if (eq !== whileEqual) break
            vlo = lo
            vhi = c.th
          }
        if (n === 0) return 0
        if (sub) sub(c, alo, vlo)
        else sub64(c, alo, ahi, vlo, vhi)
        advance(c, RDI, delta * n, a32)
        return n
      }
    }
    case 0xa6: {
      // cmps: likewise.
      const rd = physReader(size)
      const sub = size === 8 ? null : ALU_BY_SIZE[size][ALU_SUB]
      const sub64 = ALU64[ALU_SUB]
      return (c, delta, max) => {
        const s = src(c)
        const d = dst(c)
        const k = Math.min(inPage(s, size, delta), inPage(d, size, delta), max)
        if (k <= 0) return 0
        const ps = physFor(c, s, c.rBit)
        const pd = physFor(c, d, c.rBit)
        if (ps < 0 || pd < 0) return 0
        let n = 0
        let alo = 0
        let ahi = 0
        let blo = 0
        let bhi = 0
        if (size === 1) {
          // memcmp-style byte loop, the common case.
          const mem = c.mem
          for (let off = 0; n < k; n++, off += delta) {
            const x = mem[ps + off]
            const y = mem[pd + off]
            if ((x === y) !== whileEqual) break
            alo = x
            blo = y
          }
        } else
          for (let off = 0; n < k; n++, off += delta) {
            const xlo = rd(c, ps + off)
            const xhi = c.th
            const ylo = rd(c, pd + off)
            const yhi = c.th
            const eq = xlo === ylo && (size !== 8 || xhi === yhi)
            if (eq !== whileEqual) break
            alo = xlo
            ahi = xhi
            blo = ylo
            bhi = yhi
          }
        if (n === 0) return 0
        if (sub) sub(c, alo, blo)
        else sub64(c, alo, ahi, blo, bhi)
        advance(c, RSI, delta * n, a32)
        advance(c, RDI, delta * n, a32)
        return n
      }
    }
    default:
      return null
  }
}

/** A4-A7, AA-AF. */
export function compileString(insn: Instruction): Op {
  const op = insn.opcode
  const size = (op & 1) === 0 ? 1 : insn.operandSize
  const kind = op & 0xfe
  const a32 = insn.addressSize === 4
  const body = makeBody(kind, size, a32, insn.segment)
  if (insn.rep === 0) {
    return (c) => {
      body(c, (c.eflags & DF) !== 0 ? -size : size)
    }
  }
  const compares = kind === 0xa6 || kind === 0xae
  // repe continues while equal, repne while different.
  const whileEqual = insn.rep === 0xf3
  const run = makeRun(kind, size, a32, insn.segment, whileEqual)
  return (c) => {
    const r = c.r
    if (a32 ? r[2] === 0 : (r[2] | r[3]) === 0) return
    const delta = (c.eflags & DF) !== 0 ? -size : size
    let left = REP_CHUNK
    for (;;) {
      const equal = body(c, delta)
      left--
      // rcx counts the completed iteration.
      if (countDown(c, 1, a32)) return
      if (compares && equal !== whileEqual) return
      if (run !== null && left > 0) {
        const remaining = a32 ? r[2] >>> 0 : r[3] !== 0 ? left : r[2] >>> 0
        const n = run(c, delta, Math.min(left, remaining))
        if (n > 0) {
          left -= n
          if (countDown(c, n, a32)) return
        }
      }
      if (left <= 0) break
    }
    // More to do: run this instruction again after the runner had its say.
    c.repeatCurrent = true
    c.blockExit = true
  }
}

/** Subtract n from rcx (ecx with 67h); true when it reached 0. */
function countDown(c: Cpu, n: number, a32: boolean): boolean {
  const r = c.r
  const lo = r[2]
  r[2] = (lo - n) | 0
  if (a32) {
    r[3] = 0
    return r[2] === 0
  }
  if (lo >>> 0 < n) r[3] = (r[3] - 1) | 0
  return (r[2] | r[3]) === 0
}

/** D7 xlat: AL = [rbx + AL] (ebx with 67h; fs/gs overrides apply). */
export function compileXlat(insn: Instruction): Op {
  const a32 = insn.addressSize === 4
  const seg = insn.segment
  return (c) => {
    const r = c.r
    let a = a32 ? (r[6] + (r[0] & 0xff)) >>> 0 : r[7] * TWO_32 + (r[6] >>> 0) + (r[0] & 0xff)
    if (seg === 'fs') a += c.fsBase
    else if (seg === 'gs') a += c.gsBase
    const v = c.read8(wrap64(a))
    r[0] = (r[0] & ~0xff) | v
  }
}
