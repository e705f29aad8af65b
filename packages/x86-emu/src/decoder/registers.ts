// Register names as capstone prints them (Intel syntax).

import { GPR_NAMES } from '../cpu/registers.js'

export const GPR64: readonly string[] = GPR_NAMES
export const GPR32 = [
  'eax',
  'ecx',
  'edx',
  'ebx',
  'esp',
  'ebp',
  'esi',
  'edi',
  'r8d',
  'r9d',
  'r10d',
  'r11d',
  'r12d',
  'r13d',
  'r14d',
  'r15d',
]
export const GPR16 = [
  'ax',
  'cx',
  'dx',
  'bx',
  'sp',
  'bp',
  'si',
  'di',
  'r8w',
  'r9w',
  'r10w',
  'r11w',
  'r12w',
  'r13w',
  'r14w',
  'r15w',
]
/** Byte registers with a REX prefix present. */
export const GPR8 = [
  'al',
  'cl',
  'dl',
  'bl',
  'spl',
  'bpl',
  'sil',
  'dil',
  'r8b',
  'r9b',
  'r10b',
  'r11b',
  'r12b',
  'r13b',
  'r14b',
  'r15b',
]
/** Byte registers 4..7 without REX: the legacy high halves. */
export const GPR8_HIGH = ['ah', 'ch', 'dh', 'bh']
export const SEGMENTS = ['es', 'cs', 'ss', 'ds', 'fs', 'gs'] as const

const range = (prefix: string, n: number, suffix = '') =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}${suffix}`)
export const XMM = range('xmm', 32)
export const YMM = range('ymm', 32)
export const ZMM = range('zmm', 32)
export const MMX = range('mm', 8)
export const CR = range('cr', 16)
export const DR = range('dr', 16)
export const ST = range('st(', 8, ')')
export const MASK = range('k', 8)
export const BND = range('bnd', 4)
