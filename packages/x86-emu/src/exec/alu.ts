// Pure ALU primitives with lazy flags, per operand size.
//
// 8/16-bit values are masked non-negative numbers, 32-bit values int32, and
// 64-bit values an int32 pair (lo returned, hi left in Cpu.th).

import type { Cpu } from '../cpu/cpu.js'
import {
  FK_ADC,
  FK_ADD,
  FK_DEC,
  FK_INC,
  FK_LOGIC,
  FK_SBB,
  FK_SUB,
  getCF,
  lazy,
  lazy64,
  S8,
  S16,
  S32,
  S64,
} from '../cpu/flags.js'

export type Alu = (c: Cpu, a: number, b: number) => number
export type Alu64 = (c: Cpu, alo: number, ahi: number, blo: number, bhi: number) => number

/** ModRM.reg / opcode-row order: add or adc sbb and sub xor cmp. */
export const ALU_ADD = 0
export const ALU_OR = 1
export const ALU_ADC = 2
export const ALU_SBB = 3
export const ALU_AND = 4
export const ALU_SUB = 5
export const ALU_XOR = 6
export const ALU_CMP = 7

function sized(mask: number, s: number): Alu[] {
  const add: Alu = (c, a, b) => {
    const r = (a + b) & mask
    lazy(c, FK_ADD | s, a, b, r)
    return r
  }
  const or: Alu = (c, a, b) => {
    const r = (a | b) & mask
    lazy(c, FK_LOGIC | s, a, b, r)
    return r
  }
  const adc: Alu = (c, a, b) => {
    const cin = getCF(c)
    const r = (a + b + (cin ? 1 : 0)) & mask
    lazy(c, (cin ? FK_ADC : FK_ADD) | s, a, b, r)
    return r
  }
  const sbb: Alu = (c, a, b) => {
    const cin = getCF(c)
    const r = (a - b - (cin ? 1 : 0)) & mask
    lazy(c, (cin ? FK_SBB : FK_SUB) | s, a, b, r)
    return r
  }
  const and: Alu = (c, a, b) => {
    const r = a & b & mask
    lazy(c, FK_LOGIC | s, a, b, r)
    return r
  }
  const sub: Alu = (c, a, b) => {
    const r = (a - b) & mask
    lazy(c, FK_SUB | s, a, b, r)
    return r
  }
  const xor: Alu = (c, a, b) => {
    const r = (a ^ b) & mask
    lazy(c, FK_LOGIC | s, a, b, r)
    return r
  }
  return [add, or, adc, sbb, and, sub, xor, sub]
}

export const ALU8 = sized(0xff, S8)
export const ALU16 = sized(0xffff, S16)
export const ALU32 = sized(-1, S32)
export const ALU_BY_SIZE: Record<number, Alu[]> = { 1: ALU8, 2: ALU16, 4: ALU32 }

function add64With(
  c: Cpu,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
  cin: number,
  fk: number,
): number {
  const lo = (alo + blo + cin) | 0
  const carry = (alo >>> 0) + (blo >>> 0) + cin > 0xffff_ffff ? 1 : 0
  const hi = (ahi + bhi + carry) | 0
  lazy64(c, fk | S64, alo, ahi, blo, bhi, lo, hi)
  c.th = hi
  return lo
}

function sub64With(
  c: Cpu,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
  bin: number,
  fk: number,
): number {
  const lo = (alo - blo - bin) | 0
  const borrow = (alo >>> 0) - (blo >>> 0) - bin < 0 ? 1 : 0
  const hi = (ahi - bhi - borrow) | 0
  lazy64(c, fk | S64, alo, ahi, blo, bhi, lo, hi)
  c.th = hi
  return lo
}

function logic64(c: Cpu, alo: number, ahi: number, blo: number, bhi: number, lo: number, hi: number): number {
  lazy64(c, FK_LOGIC | S64, alo, ahi, blo, bhi, lo, hi)
  c.th = hi
  return lo
}

export const ALU64: Alu64[] = [
  (c, al, ah, bl, bh) => add64With(c, al, ah, bl, bh, 0, FK_ADD),
  (c, al, ah, bl, bh) => logic64(c, al, ah, bl, bh, al | bl, ah | bh),
  (c, al, ah, bl, bh) => {
    const cin = getCF(c) ? 1 : 0
    return add64With(c, al, ah, bl, bh, cin, cin ? FK_ADC : FK_ADD)
  },
  (c, al, ah, bl, bh) => {
    const bin = getCF(c) ? 1 : 0
    return sub64With(c, al, ah, bl, bh, bin, bin ? FK_SBB : FK_SUB)
  },
  (c, al, ah, bl, bh) => logic64(c, al, ah, bl, bh, al & bl, ah & bh),
  (c, al, ah, bl, bh) => sub64With(c, al, ah, bl, bh, 0, FK_SUB),
  (c, al, ah, bl, bh) => logic64(c, al, ah, bl, bh, al ^ bl, ah ^ bh),
  (c, al, ah, bl, bh) => sub64With(c, al, ah, bl, bh, 0, FK_SUB),
]

/** inc/dec keep CF: remember it before the lazy state is replaced. */
export function incDec(c: Cpu, a: number, dec: boolean, size: number): number {
  c.fcf = getCF(c) ? 1 : 0
  const s = size === 1 ? S8 : size === 2 ? S16 : S32
  const mask = size === 1 ? 0xff : size === 2 ? 0xffff : -1
  const r = (dec ? a - 1 : a + 1) & mask
  lazy(c, (dec ? FK_DEC : FK_INC) | s, a, 1, r)
  return r
}

export function incDec64(c: Cpu, lo: number, hi: number, dec: boolean): number {
  c.fcf = getCF(c) ? 1 : 0
  let rlo: number
  let rhi: number
  if (dec) {
    rlo = (lo - 1) | 0
    rhi = lo === 0 ? (hi - 1) | 0 : hi
  } else {
    rlo = (lo + 1) | 0
    rhi = lo === -1 ? (hi + 1) | 0 : hi
  }
  lazy64(c, (dec ? FK_DEC : FK_INC) | S64, lo, hi, 1, 0, rlo, rhi)
  c.th = rhi
  return rlo
}
