/// <reference types="node" />
// Differential test for SSE/SSE2: every implemented instruction form, random
// operands biased to the IEEE edge cases (signed zeros, denormals, NaNs with
// payloads, infinities, conversion limits, ties) and random MXCSR controls
// (rounding mode, DAZ, FTZ), run on the host CPU (native/sse-oracle) and in
// the emulator (runFlat, interpreter and block compiler). XMM0-15, MXCSR,
// GPRs, RFLAGS, the data page, the exception and rip must agree.
//
// Host-specific things not compared: the MXCSR_MASK field of an fxsave image
// (the emulator reports 0xffff, AMD hosts 0x2ffff), and the exact bits of
// rcpps/rcpss/rsqrtps/rsqrtss results (implementation-specific
// approximations: checked against the architectural error bound instead).
//
// Knobs (environment):
//   X86EMU_SSE_CASES=n     cases per form (default 32)
//   X86EMU_SSE_SEED=n      another deterministic set of cases (default 1)
//   X86EMU_SSE_FILTER=re   only forms whose name matches
//   X86EMU_SSE_SHOW=n      mismatches printed per group (default 6)

import { GPR_NAMES } from '../src/index.js'
import { FLAT_CODE_ADDRESS } from './support/flat.js'
import { DATA_BASE, encode, type Insn, type Operand, Rng, reg } from './support/instruction-forms.js'
import { COMPARED_RFLAGS_MASK } from './support/native.js'
import { INT_OPS } from './support/packed-int-ops.js'
import { differentialSuite, type OracleCase, type OracleOutcome as SseOutcome } from './support/sse-oracle.js'

const CASES = Number(process.env.X86EMU_SSE_CASES ?? 32)
const SEED = Number(process.env.X86EMU_SSE_SEED ?? 1)
const SHOW = Number(process.env.X86EMU_SSE_SHOW ?? 6)
const FILTER = process.env.X86EMU_SSE_FILTER ? new RegExp(process.env.X86EMU_SSE_FILTER) : null

const PAGE = 4096

interface SseCase extends OracleCase {
  form: string
  /** Data-page byte ranges not compared (host-specific fields). */
  ignoreData: Array<[number, number]>
  /** XMM registers whose lanes hold rcp/rsqrt approximations (compared with a tolerance). */
  approx: null | { reg: number; lanes: number }
  /** Offset of the memory operand in the data page, or -1. */
  addr: number
}

// ---------------------------------------------------------------- operand values

const f32 = new Float32Array(1)
const f32i = new Uint32Array(f32.buffer)
const f64 = new Float64Array(1)
const f64i = new Uint32Array(f64.buffer)

const F32_SPECIAL = [
  0, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000, 0xc0200000, 0x7f800000,
  0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0xffd00001, 0x7f800001, 0xff812345, 0x7fbfffff, 0x00000001,
  0x007fffff, 0x80400000, 0x00000003, 0x00800000, 0x80800000, 0x00800001, 0x7f7fffff, 0xff7fffff, 0x7f000000,
  0x4f000000, 0xcf000000, 0x4effffff, 0xcf000001, 0x5f000000, 0xdf000000, 0x5effffff, 0xdf000001, 0x4b800000,
  0x4b7fffff, 0x4b000001, 0x3effffff, 0x1f800000, 0x20000000, 0x5f800000,
]
const F64_SPECIAL: Array<[number, number]> = [
  [0, 0],
  [0x80000000, 0],
  [0x3ff00000, 0],
  [0xbff00000, 0],
  [0x3fe00000, 0],
  [0x3ff80000, 0],
  [0x40040000, 0],
  [0xc0040000, 0],
  [0x7ff00000, 0],
  [0xfff00000, 0],
  [0x7ff80000, 0],
  [0xfff80000, 0],
  [0x7ff81234, 0x56789abc],
  [0xfff00000, 1],
  [0x7ff7ffff, 0xffffffff],
  [0x7ff40000, 0x00000001],
  [0, 1],
  [0x000fffff, 0xffffffff],
  [0x80080000, 0],
  [0x00100000, 0],
  [0x80100000, 0],
  [0x00100000, 1],
  [0x7fefffff, 0xffffffff],
  [0xffefffff, 0xffffffff],
  [0x41e00000, 0], // 2^31
  [0xc1e00000, 0], // -2^31
  [0x41dfffff, 0xffc00000], // 2^31 - 1
  [0x41dfffff, 0xffe00000], // 2^31 - 0.5
  [0xc1e00000, 0x00100000], // -2^31 - 0.5
  [0xc1e00000, 0x00200000], // -2^31 - 1
  [0x43e00000, 0], // 2^63
  [0xc3e00000, 0], // -2^63
  [0x43dfffff, 0xffffffff],
  [0xc3e00000, 1],
  [0x47efffff, 0xe0000000], // FLT_MAX
  [0x47efffff, 0xf0000000], // FLT_MAX + half ulp
  [0x47efffff, 0xefffffff],
  [0x38100000, 0], // 2^-126
  [0x36a00000, 0], // 2^-149
  [0x36900000, 0], // 2^-150
  [0x36980000, 0], // 1.5 * 2^-150
  [0x380fffff, 0xf0000000],
  [0x43300000, 1], // 2^52 + 1
  [0x3fdfffff, 0xffffffff],
]

function randomF32(r: Rng): number {
  const k = r.int(100)
  if (k < 35) return r.pick(F32_SPECIAL) >>> 0
  if (k < 45) return r.u32()
  const sign = r.bool() ? 0x80000000 : 0
  // Exponents around the interesting ranges: tiny, near 1, near the integer limits, huge.
  const e = r.pick([r.range(0, 255), r.range(100, 154), r.range(0, 30), r.range(150, 190), r.range(230, 254)])
  let m = r.u32() & 0x7fffff
  if (r.bool(0.3)) m &= 0x7ff000 // short mantissas: exact products
  return (sign | (e << 23) | m) >>> 0
}

function randomF64(r: Rng): [number, number] {
  const k = r.int(100)
  if (k < 35) {
    const [hi, lo] = r.pick(F64_SPECIAL)
    return [hi >>> 0, lo >>> 0]
  }
  if (k < 45) return [r.u32(), r.u32()]
  if (k < 55) {
    // A single converted to double (conversions and FLT-range edges).
    f32i[0] = randomF32(r)
    if ((f32i[0] & 0x7f800000) === 0x7f800000 && (f32i[0] & 0x7fffff) !== 0) return [r.u32(), r.u32()]
    f64[0] = f32[0]
    return [f64i[1], f64i[0]]
  }
  const sign = r.bool() ? 0x80000000 : 0
  const e = r.pick([
    r.range(0, 2047),
    r.range(980, 1070),
    r.range(0, 60),
    r.range(1990, 2046),
    r.range(1023 - 160, 1023 - 100),
    r.range(1023 + 100, 1023 + 140),
  ])
  let hi = r.u32() & 0xfffff
  let lo = r.u32()
  if (r.bool(0.3)) {
    lo &= 0xfc000000
  }
  if (r.bool(0.1)) {
    hi &= 0xff000
    lo = 0
  }
  return [(sign | (e << 20) | hi) >>> 0, lo >>> 0]
}

type Kind = 'i' | 'f32' | 'f64'

/** 16 bytes of operand data of a kind; `pair` (the other operand) makes equal/near/negated lanes likely. */
function randomVector(r: Rng, kind: Kind, pair?: Uint8Array): Uint8Array {
  const v = new Uint8Array(16)
  const dv = new DataView(v.buffer)
  const pv = pair ? new DataView(pair.buffer, pair.byteOffset, 16) : null
  if (kind === 'i') {
    for (let i = 0; i < 4; i++) {
      let x = r.u32()
      const k = r.int(10)
      if (k === 0) x = 0
      else if (k === 1) x = 0xffffffff
      else if (k === 2)
        x = r.pick([0x80808080, 0x7f7f7f7f, 0x80008000, 0x7fff7fff, 0x80000000, 0x7fffffff, 0x00ff00ff])
      else if (k === 3 && pv) x = pv.getUint32(4 * i, true)
      else if (k === 4) x &= r.pick([0xff, 0xffff, 0x00ff00ff, 0x0f0f0f0f])
      dv.setUint32(4 * i, x >>> 0, true)
    }
    if (pv && r.bool(0.2)) for (let i = 0; i < 16; i++) if (r.bool(0.5)) v[i] = pair![i]
    return v
  }
  if (kind === 'f32') {
    for (let i = 0; i < 4; i++) {
      let b = randomF32(r)
      if (pv && r.bool(0.25)) {
        const p = pv.getUint32(4 * i, true)
        const k = r.int(4)
        b = k === 0 ? p : k === 1 ? (p ^ 0x80000000) >>> 0 : k === 2 ? (p + 1) >>> 0 : (p - 1) >>> 0
      }
      dv.setUint32(4 * i, b, true)
    }
    return v
  }
  for (let i = 0; i < 2; i++) {
    let [hi, lo] = randomF64(r)
    if (pv && r.bool(0.25)) {
      hi = pv.getUint32(8 * i + 4, true)
      lo = pv.getUint32(8 * i, true)
      const k = r.int(4)
      if (k === 1) hi = (hi ^ 0x80000000) >>> 0
      else if (k === 2) lo = (lo + 1) >>> 0
      else if (k === 3) lo = (lo - 1) >>> 0
    }
    dv.setUint32(8 * i, lo, true)
    dv.setUint32(8 * i + 4, hi, true)
  }
  return v
}

function randomGpr(r: Rng): bigint {
  const k = r.int(10)
  if (k < 3) return r.edge(64)
  if (k < 5) return BigInt.asUintN(64, BigInt.asIntN(32, r.edge(32)))
  if (k < 6) {
    // A value of a random bit length (int64 -> float ties and rounding).
    const n = r.range(1, 64)
    let v = r.bits(n) | (1n << BigInt(n - 1))
    if (r.bool(0.4)) v &= ~((1n << BigInt(Math.max(0, n - 26))) - 1n) | (1n << BigInt(Math.max(0, n - 26)))
    return r.bool() ? BigInt.asUintN(64, -v) : v
  }
  return r.bits(64)
}

function randomMxcsr(r: Rng): number {
  let m = 0x1f80
  if (r.bool(0.6)) m |= r.int(4) << 13
  if (r.bool(0.2)) m |= 0x40 // DAZ
  if (r.bool(0.2)) m |= 0x8000 // FTZ
  if (r.bool(0.15)) m |= r.int(64) // sticky flags already set
  if (r.bool(0.3)) m |= 0x20 // PE alone already set: arithmetic's fast path (sse-ieee.ts finishD)
  return m
}

// ---------------------------------------------------------------- forms

/** How the r/m and reg fields are used. */
interface Form {
  name: string
  group: string
  pfx: 0 | 0x66 | 0xf2 | 0xf3
  op: number
  /** ModRM.reg: an XMM register, a GPR, or a fixed /digit. */
  reg: 'x' | 'g' | number
  /** ModRM.rm: an XMM register, a GPR, or memory of `mem` bytes. */
  rm: 'x' | 'g' | 'm'
  mem?: number
  aligned?: boolean
  w?: boolean
  imm?: (r: Rng) => number
  kind: Kind
  /** Source operand kind when it differs from the destination's. */
  srcKind?: Kind
  /** Custom setup (maskmovdqu, ldmxcsr, fxrstor images...). */
  setup?: (r: Rng, c: SseCase, addr: number) => void
  /** Code after the instruction (e.g. fxsave after fxrstor to observe the state). */
  tail?: (addr: number) => number[]
  approx?: boolean
  ignoreData?: (addr: number) => Array<[number, number]>
  /** Place the memory operand here (offset in the data page) instead of at random. */
  fixedAddr?: number
  /** Builds the whole case instead (the operation sequences). */
  build?: (r: Rng) => Pick<SseCase, 'code' | 'data'>
}

const forms: Form[] = []

function add(f: Omit<Form, 'group'>, group: string): void {
  forms.push({ ...f, group })
}

/** Register and memory forms of an xmm, xmm/mN instruction. */
function xmmForms(
  group: string,
  name: string,
  pfx: Form['pfx'],
  op: number,
  kind: Kind,
  mem: number,
  aligned: boolean,
  extra: Partial<Form> = {},
): void {
  add({ name: `${name} xmm, xmm`, pfx, op, reg: 'x', rm: 'x', kind, ...extra }, group)
  add({ name: `${name} xmm, m${mem * 8}`, pfx, op, reg: 'x', rm: 'm', mem, aligned, kind, ...extra }, group)
}

const anyImm = (r: Rng) => r.int(256)

// Float arithmetic.
for (const [m, op] of [
  ['add', 0x58],
  ['mul', 0x59],
  ['sub', 0x5c],
  ['min', 0x5d],
  ['div', 0x5e],
  ['max', 0x5f],
  ['sqrt', 0x51],
] as const) {
  xmmForms('float arithmetic', `${m}ps`, 0, op, 'f32', 16, true)
  xmmForms('float arithmetic', `${m}pd`, 0x66, op, 'f64', 16, true)
  xmmForms('float arithmetic', `${m}ss`, 0xf3, op, 'f32', 4, false)
  xmmForms('float arithmetic', `${m}sd`, 0xf2, op, 'f64', 8, false)
}
xmmForms('float arithmetic', 'rcpps', 0, 0x53, 'f32', 16, true, { approx: true })
xmmForms('float arithmetic', 'rcpss', 0xf3, 0x53, 'f32', 4, false, { approx: true })
xmmForms('float arithmetic', 'rsqrtps', 0, 0x52, 'f32', 16, true, { approx: true })
xmmForms('float arithmetic', 'rsqrtss', 0xf3, 0x52, 'f32', 4, false, { approx: true })

// Float compares and bitwise ops.
const predImm = (r: Rng) => (r.bool(0.9) ? r.int(8) : r.int(256))
xmmForms('float compare', 'cmpps', 0, 0xc2, 'f32', 16, true, { imm: predImm })
xmmForms('float compare', 'cmppd', 0x66, 0xc2, 'f64', 16, true, { imm: predImm })
xmmForms('float compare', 'cmpss', 0xf3, 0xc2, 'f32', 4, false, { imm: predImm })
xmmForms('float compare', 'cmpsd', 0xf2, 0xc2, 'f64', 8, false, { imm: predImm })
xmmForms('float compare', 'ucomiss', 0, 0x2e, 'f32', 4, false)
xmmForms('float compare', 'comiss', 0, 0x2f, 'f32', 4, false)
xmmForms('float compare', 'ucomisd', 0x66, 0x2e, 'f64', 8, false)
xmmForms('float compare', 'comisd', 0x66, 0x2f, 'f64', 8, false)
for (const [m, op] of [
  ['and', 0x54],
  ['andn', 0x55],
  ['or', 0x56],
  ['xor', 0x57],
] as const) {
  xmmForms('float compare', `${m}ps`, 0, op, 'f32', 16, true)
  xmmForms('float compare', `${m}pd`, 0x66, op, 'f64', 16, true)
}
add({ name: 'movmskps r32, xmm', pfx: 0, op: 0x50, reg: 'g', rm: 'x', kind: 'f32' }, 'float compare')
add(
  { name: 'movmskpd r64, xmm', pfx: 0x66, op: 0x50, reg: 'g', rm: 'x', kind: 'f64', w: true },
  'float compare',
)

// Shuffles.
xmmForms('shuffles', 'shufps', 0, 0xc6, 'f32', 16, true, { imm: anyImm })
xmmForms('shuffles', 'shufpd', 0x66, 0xc6, 'f64', 16, true, { imm: anyImm })
xmmForms('shuffles', 'unpcklps', 0, 0x14, 'f32', 16, true)
xmmForms('shuffles', 'unpckhps', 0, 0x15, 'f32', 16, true)
xmmForms('shuffles', 'unpcklpd', 0x66, 0x14, 'f64', 16, true)
xmmForms('shuffles', 'unpckhpd', 0x66, 0x15, 'f64', 16, true)
for (const [m, op] of [
  ['punpcklbw', 0x60],
  ['punpcklwd', 0x61],
  ['punpckldq', 0x62],
  ['packsswb', 0x63],
  ['packuswb', 0x67],
  ['punpckhbw', 0x68],
  ['punpckhwd', 0x69],
  ['punpckhdq', 0x6a],
  ['packssdw', 0x6b],
  ['punpcklqdq', 0x6c],
  ['punpckhqdq', 0x6d],
] as const)
  xmmForms('shuffles', m, 0x66, op, 'i', 16, true)
xmmForms('shuffles', 'pshufd', 0x66, 0x70, 'i', 16, true, { imm: anyImm })
xmmForms('shuffles', 'pshufhw', 0xf3, 0x70, 'i', 16, true, { imm: anyImm })
xmmForms('shuffles', 'pshuflw', 0xf2, 0x70, 'i', 16, true, { imm: anyImm })

// Packed integer.
const shiftCount = (r: Rng, c: Uint8Array) => {
  // Shift counts by register: mostly small, sometimes beyond the lane width or with high bits.
  const dv = new DataView(c.buffer, c.byteOffset, 16)
  const k = r.int(10)
  const n = k < 6 ? r.int(17) : k < 8 ? r.int(70) : r.u32()
  dv.setUint32(0, n >>> 0, true)
  dv.setUint32(4, k === 9 ? r.u32() : 0, true)
}
for (const [m, op] of INT_OPS) {
  const isShift = /^ps[lr]/.test(m)
  xmmForms(
    'packed integer',
    m,
    0x66,
    op,
    'i',
    16,
    true,
    isShift ? { setup: (r, c, addr) => shiftSetup(r, c, addr) } : {},
  )
}
function shiftSetup(r: Rng, c: SseCase, addr: number): void {
  // Give the count operand (xmm rm register or memory) a plausible count.
  const rm = (c as SseCase & { rmReg?: number }).rmReg
  if (rm !== undefined && rm >= 0) shiftCount(r, c.xmm.subarray(16 * rm, 16 * rm + 16))
  else if (addr >= 0 && addr + 16 <= PAGE) shiftCount(r, c.data.subarray(addr, addr + 16))
}
const shiftImm = (r: Rng) => (r.bool(0.8) ? r.int(20) : r.int(256))
for (const [m, op, digit] of [
  ['psrlw', 0x71, 2],
  ['psraw', 0x71, 4],
  ['psllw', 0x71, 6],
  ['psrld', 0x72, 2],
  ['psrad', 0x72, 4],
  ['pslld', 0x72, 6],
  ['psrlq', 0x73, 2],
  ['psrldq', 0x73, 3],
  ['psllq', 0x73, 6],
  ['pslldq', 0x73, 7],
] as const)
  add(
    { name: `${m} xmm, imm8`, pfx: 0x66, op, reg: digit, rm: 'x', kind: 'i', imm: shiftImm },
    'packed integer',
  )

// Moves.
const MOVES = 'moves'
for (const [m, pfx, kind] of [
  ['movups', 0, 'f32'],
  ['movupd', 0x66, 'f64'],
] as const) {
  xmmForms(MOVES, `${m} load`, pfx, 0x10, kind, 16, false)
  add({ name: `${m} store xmm, xmm`, pfx, op: 0x11, reg: 'x', rm: 'x', kind }, MOVES)
  add({ name: `${m} store m128`, pfx, op: 0x11, reg: 'x', rm: 'm', mem: 16, aligned: false, kind }, MOVES)
}
for (const [m, pfx, kind, size] of [
  ['movss', 0xf3, 'f32', 4],
  ['movsd', 0xf2, 'f64', 8],
] as const) {
  xmmForms(MOVES, `${m} load`, pfx, 0x10, kind, size, false)
  add({ name: `${m} store xmm, xmm`, pfx, op: 0x11, reg: 'x', rm: 'x', kind }, MOVES)
  add({ name: `${m} store m`, pfx, op: 0x11, reg: 'x', rm: 'm', mem: size, kind }, MOVES)
}
for (const [m, pfx, kind] of [
  ['movaps', 0, 'f32'],
  ['movapd', 0x66, 'f64'],
] as const) {
  xmmForms(MOVES, `${m} load`, pfx, 0x28, kind, 16, true)
  add({ name: `${m} store xmm, xmm`, pfx, op: 0x29, reg: 'x', rm: 'x', kind }, MOVES)
  add({ name: `${m} store m128`, pfx, op: 0x29, reg: 'x', rm: 'm', mem: 16, aligned: true, kind }, MOVES)
}
add(
  { name: 'movntps m128, xmm', pfx: 0, op: 0x2b, reg: 'x', rm: 'm', mem: 16, aligned: true, kind: 'f32' },
  MOVES,
)
add(
  { name: 'movntpd m128, xmm', pfx: 0x66, op: 0x2b, reg: 'x', rm: 'm', mem: 16, aligned: true, kind: 'f64' },
  MOVES,
)
add(
  { name: 'movntdq m128, xmm', pfx: 0x66, op: 0xe7, reg: 'x', rm: 'm', mem: 16, aligned: true, kind: 'i' },
  MOVES,
)
add({ name: 'movlps xmm, m64', pfx: 0, op: 0x12, reg: 'x', rm: 'm', mem: 8, kind: 'f32' }, MOVES)
add({ name: 'movhlps xmm, xmm', pfx: 0, op: 0x12, reg: 'x', rm: 'x', kind: 'f32' }, MOVES)
add({ name: 'movlpd xmm, m64', pfx: 0x66, op: 0x12, reg: 'x', rm: 'm', mem: 8, kind: 'f64' }, MOVES)
add({ name: 'movlps m64, xmm', pfx: 0, op: 0x13, reg: 'x', rm: 'm', mem: 8, kind: 'f32' }, MOVES)
add({ name: 'movlpd m64, xmm', pfx: 0x66, op: 0x13, reg: 'x', rm: 'm', mem: 8, kind: 'f64' }, MOVES)
add({ name: 'movhps xmm, m64', pfx: 0, op: 0x16, reg: 'x', rm: 'm', mem: 8, kind: 'f32' }, MOVES)
add({ name: 'movlhps xmm, xmm', pfx: 0, op: 0x16, reg: 'x', rm: 'x', kind: 'f32' }, MOVES)
add({ name: 'movhpd xmm, m64', pfx: 0x66, op: 0x16, reg: 'x', rm: 'm', mem: 8, kind: 'f64' }, MOVES)
add({ name: 'movhps m64, xmm', pfx: 0, op: 0x17, reg: 'x', rm: 'm', mem: 8, kind: 'f32' }, MOVES)
add({ name: 'movhpd m64, xmm', pfx: 0x66, op: 0x17, reg: 'x', rm: 'm', mem: 8, kind: 'f64' }, MOVES)
xmmForms(MOVES, 'movdqa load', 0x66, 0x6f, 'i', 16, true)
xmmForms(MOVES, 'movdqu load', 0xf3, 0x6f, 'i', 16, false)
add({ name: 'movdqa store xmm, xmm', pfx: 0x66, op: 0x7f, reg: 'x', rm: 'x', kind: 'i' }, MOVES)
add(
  { name: 'movdqa store m128', pfx: 0x66, op: 0x7f, reg: 'x', rm: 'm', mem: 16, aligned: true, kind: 'i' },
  MOVES,
)
add({ name: 'movdqu store xmm, xmm', pfx: 0xf3, op: 0x7f, reg: 'x', rm: 'x', kind: 'i' }, MOVES)
add({ name: 'movdqu store m128', pfx: 0xf3, op: 0x7f, reg: 'x', rm: 'm', mem: 16, kind: 'i' }, MOVES)
for (const w of [false, true]) {
  const n = w ? 'movq' : 'movd'
  add({ name: `${n} xmm, r`, pfx: 0x66, op: 0x6e, reg: 'x', rm: 'g', w, kind: 'i' }, MOVES)
  add({ name: `${n} xmm, m`, pfx: 0x66, op: 0x6e, reg: 'x', rm: 'm', mem: w ? 8 : 4, w, kind: 'i' }, MOVES)
  add({ name: `${n} r, xmm`, pfx: 0x66, op: 0x7e, reg: 'x', rm: 'g', w, kind: 'i' }, MOVES)
  add({ name: `${n} m, xmm`, pfx: 0x66, op: 0x7e, reg: 'x', rm: 'm', mem: w ? 8 : 4, w, kind: 'i' }, MOVES)
}
xmmForms(MOVES, 'movq (F3 0F 7E)', 0xf3, 0x7e, 'i', 8, false)
add({ name: 'movq xmm, xmm (66 0F D6)', pfx: 0x66, op: 0xd6, reg: 'x', rm: 'x', kind: 'i' }, MOVES)
add({ name: 'movq m64, xmm (66 0F D6)', pfx: 0x66, op: 0xd6, reg: 'x', rm: 'm', mem: 8, kind: 'i' }, MOVES)
add({ name: 'pmovmskb r32, xmm', pfx: 0x66, op: 0xd7, reg: 'g', rm: 'x', kind: 'i' }, MOVES)
add({ name: 'pmovmskb r64, xmm', pfx: 0x66, op: 0xd7, reg: 'g', rm: 'x', w: true, kind: 'i' }, MOVES)
add({ name: 'pinsrw xmm, r32, imm8', pfx: 0x66, op: 0xc4, reg: 'x', rm: 'g', imm: anyImm, kind: 'i' }, MOVES)
add(
  { name: 'pinsrw xmm, m16, imm8', pfx: 0x66, op: 0xc4, reg: 'x', rm: 'm', mem: 2, imm: anyImm, kind: 'i' },
  MOVES,
)
add({ name: 'pextrw r32, xmm, imm8', pfx: 0x66, op: 0xc5, reg: 'g', rm: 'x', imm: anyImm, kind: 'i' }, MOVES)
add(
  {
    name: 'maskmovdqu xmm, xmm',
    pfx: 0x66,
    op: 0xf7,
    reg: 'x',
    rm: 'x',
    kind: 'i',
    setup: (r, c) => {
      // rdi points into the data page (sometimes so that selected bytes cross its end).
      c.gpr[7] = DATA_BASE + BigInt(r.bool(0.1) ? PAGE - r.range(1, 15) : r.int(PAGE - 16))
    },
  },
  MOVES,
)

// Conversions.
const CVT = 'conversions'
for (const w of [false, true]) {
  const s = w ? '64' : '32'
  add({ name: `cvtsi2ss xmm, r${s}`, pfx: 0xf3, op: 0x2a, reg: 'x', rm: 'g', w, kind: 'f32' }, CVT)
  add(
    {
      name: `cvtsi2ss xmm, m${s}`,
      pfx: 0xf3,
      op: 0x2a,
      reg: 'x',
      rm: 'm',
      mem: w ? 8 : 4,
      w,
      kind: 'f32',
      srcKind: 'i',
    },
    CVT,
  )
  add({ name: `cvtsi2sd xmm, r${s}`, pfx: 0xf2, op: 0x2a, reg: 'x', rm: 'g', w, kind: 'f64' }, CVT)
  add(
    {
      name: `cvtsi2sd xmm, m${s}`,
      pfx: 0xf2,
      op: 0x2a,
      reg: 'x',
      rm: 'm',
      mem: w ? 8 : 4,
      w,
      kind: 'f64',
      srcKind: 'i',
    },
    CVT,
  )
  for (const [m, pfx, op, kind, size] of [
    ['cvttss2si', 0xf3, 0x2c, 'f32', 4],
    ['cvtss2si', 0xf3, 0x2d, 'f32', 4],
    ['cvttsd2si', 0xf2, 0x2c, 'f64', 8],
    ['cvtsd2si', 0xf2, 0x2d, 'f64', 8],
  ] as const) {
    add({ name: `${m} r${s}, xmm`, pfx, op, reg: 'g', rm: 'x', w, kind }, CVT)
    add({ name: `${m} r${s}, m`, pfx, op, reg: 'g', rm: 'm', mem: size, w, kind }, CVT)
  }
}
xmmForms(CVT, 'cvtps2pd', 0, 0x5a, 'f32', 8, false)
xmmForms(CVT, 'cvtpd2ps', 0x66, 0x5a, 'f64', 16, true)
xmmForms(CVT, 'cvtss2sd', 0xf3, 0x5a, 'f32', 4, false)
xmmForms(CVT, 'cvtsd2ss', 0xf2, 0x5a, 'f64', 8, false)
xmmForms(CVT, 'cvtdq2ps', 0, 0x5b, 'i', 16, true)
xmmForms(CVT, 'cvtps2dq', 0x66, 0x5b, 'f32', 16, true)
xmmForms(CVT, 'cvttps2dq', 0xf3, 0x5b, 'f32', 16, true)
xmmForms(CVT, 'cvttpd2dq', 0x66, 0xe6, 'f64', 16, true)
xmmForms(CVT, 'cvtdq2pd', 0xf3, 0xe6, 'i', 8, false)
xmmForms(CVT, 'cvtpd2dq', 0xf2, 0xe6, 'f64', 16, true)

// State.
const STATE = 'mxcsr and fxsave'
add(
  {
    name: 'ldmxcsr m32',
    pfx: 0,
    op: 0xae,
    reg: 2,
    rm: 'm',
    mem: 4,
    kind: 'f32',
    setup: (r, c, addr) => {
      if (addr < 0 || addr + 4 > PAGE) return
      // Valid values (any rounding, DAZ, FTZ, flags, masks), sometimes a reserved bit (not 17: AMD's MM).
      // Exceptions stay masked: the emulator does not raise #XM.
      let v = r.int(0x10000) | 0x1f80
      if (r.bool(0.15)) v |= 1 << r.pick([16, 18, 20, 31])
      new DataView(c.data.buffer).setUint32(addr, v >>> 0, true)
    },
    // Observe the new MXCSR's effect on arithmetic too.
    tail: () => [0xf3, 0x0f, 0x58, 0xc1, 0x0f, 0x59, 0xd3, 0xf2, 0x0f, 0x5a, 0xe5],
  },
  STATE,
)
add({ name: 'stmxcsr m32', pfx: 0, op: 0xae, reg: 3, rm: 'm', mem: 4, kind: 'f32' }, STATE)
for (const w of [false, true]) {
  const n = w ? 'fxsave64' : 'fxsave'
  add(
    {
      name: `${n} m512`,
      pfx: 0,
      op: 0xae,
      reg: 0,
      rm: 'm',
      mem: 512,
      aligned: true,
      w,
      kind: 'f64',
      ignoreData: (a) => [[a + 28, a + 32]],
    },
    STATE,
  )
  add(
    {
      name: `${w ? 'fxrstor64' : 'fxrstor'} m512 (+ fxsave64 to observe)`,
      pfx: 0,
      op: 0xae,
      reg: 1,
      rm: 'm',
      mem: 512,
      aligned: true,
      w,
      kind: 'f64',
      setup: (r, c, addr) => {
        if (addr < 0 || addr + 512 > PAGE) return
        const dv = new DataView(c.data.buffer)
        // The x87 part as fninit leaves it (the x87 fields are the x87 executor's business).
        for (let i = 0; i < 32; i++) c.data[addr + i] = 0
        c.data.fill(0, addr + 32, addr + 160)
        dv.setUint16(addr, 0x037f, true)
        let m = randomMxcsr(r)
        if (r.bool(0.1)) m |= 1 << r.pick([16, 19, 30])
        dv.setUint32(addr + 24, m >>> 0, true)
      },
      // fxsave64 [rbx + 0x...]: written below, after the area (see caseFor).
      tail: (addr) => fxsaveAt(addr),
      ignoreData: (a) => [
        [a + 28, a + 32],
        [fxsaveSlot(a) + 28, fxsaveSlot(a) + 32],
      ],
    },
    STATE,
  )
}

// Only bytes 0-415 of the area are accessed: an area whose last 96 bytes are unmapped works.
add(
  {
    name: 'fxsave m512 (bytes 416-511 unmapped)',
    pfx: 0,
    op: 0xae,
    reg: 0,
    rm: 'm',
    mem: 512,
    kind: 'f64',
    fixedAddr: PAGE - 416,
    ignoreData: (a) => [[a + 28, a + 32]],
  },
  STATE,
)
add(
  {
    name: 'fxrstor m512 (bytes 416-511 unmapped)',
    pfx: 0,
    op: 0xae,
    reg: 1,
    rm: 'm',
    mem: 512,
    kind: 'f64',
    fixedAddr: PAGE - 416,
    setup: (_r, c, a) => {
      new DataView(c.data.buffer).setUint32(a + 24, 0x1f80, true)
      new DataView(c.data.buffer).setUint16(a, 0x037f, true)
      c.data.fill(0, a + 2, a + 24)
      c.data.fill(0, a + 28, a + 160)
    },
  },
  STATE,
)

/** fxsave64 [r15]: r15 is set (by caseFor) to the 512-byte slot next to the operand at `addr`. */
function fxsaveAt(_addr: number): number[] {
  return [0x49, 0x0f, 0xae, 0x07]
}
function fxsaveSlot(addr: number): number {
  return (addr + 1024 <= PAGE ? addr + 512 : Math.max(0, addr - 512)) & ~15
}

// Unmasked exceptions: the same operations with some exception masks clear.
// The host (Linux: CR4.OSXMMEXCPT) raises #XM, leaves the destination alone and
// sets only the flags the SDM's pre-/post-computation rule says.
const UNMASKED = 'unmasked exceptions (#XM)'
// Only IM, DM, ZM and PM are cleared: the flags reported with an unmasked OE or UE
// are approximated (see fpu-exceptions.ts).
const unmask = (r: Rng, c: SseCase) => {
  const bits = r.pick([0x80, 0x100, 0x200, 0x1000]) | (r.bool(0.4) ? r.pick([0x80, 0x100, 0x200, 0x1000]) : 0)
  c.mxcsr &= ~bits & 0xffff
}
for (const [m, op] of [
  ['add', 0x58],
  ['mul', 0x59],
  ['div', 0x5e],
  ['sqrt', 0x51],
  ['min', 0x5d],
] as const) {
  xmmForms(UNMASKED, `${m}ps`, 0, op, 'f32', 16, true, { setup: unmask })
  xmmForms(UNMASKED, `${m}sd`, 0xf2, op, 'f64', 8, false, { setup: unmask })
}
xmmForms(UNMASKED, 'cmpps', 0, 0xc2, 'f32', 16, true, { imm: predImm, setup: unmask })
xmmForms(UNMASKED, 'comisd', 0x66, 0x2f, 'f64', 8, false, { setup: unmask })
xmmForms(UNMASKED, 'cvtpd2ps', 0x66, 0x5a, 'f64', 16, true, { setup: unmask })
xmmForms(UNMASKED, 'cvtps2dq', 0x66, 0x5b, 'f32', 16, true, { setup: unmask })
add(
  {
    name: 'cvtsd2si r64, xmm (unmasked)',
    pfx: 0xf2,
    op: 0x2d,
    reg: 'g',
    rm: 'x',
    w: true,
    kind: 'f64',
    setup: unmask,
  },
  UNMASKED,
)
add(
  {
    name: 'cvtsi2ss xmm, r64 (unmasked)',
    pfx: 0xf3,
    op: 0x2a,
    reg: 'x',
    rm: 'g',
    w: true,
    kind: 'f32',
    setup: unmask,
  },
  UNMASKED,
)

// IEEE boundaries: one operation, 48 times in a row on operand pairs aimed at
// the edges (results next to the smallest normal and the largest finite
// value, exact cancellation, ties), each result and MXCSR stored to the data
// page and MXCSR reset in between. Many more operations per case than the
// forms above, where the rare paths (directed overflow, tininess after
// rounding, BigInt error signs) need them.
const SEQ = 'IEEE boundaries (sequences)'
const SLOTS = 48
const RES_AT = 1536
const MX_AT = 2304
const MX_BASE = 4000

const disp32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff]
/** modrm [rbx + disp32] with reg field n. */
const atRbx = (n: number, d: number) => [0x80 | (n << 3) | 3, ...disp32(d)]

interface SeqOp {
  name: string
  /** Operation bytes before the ModRM (prefixes, REX, 0F, opcode). */
  op: number[]
  kind: 'f32' | 'f64'
  /** Lanes used: 1 (scalar) or 4/2 (packed). */
  packed: boolean
  /** Arithmetic operation for the operand generator. */
  arith: 'add' | 'sub' | 'mul' | 'div' | 'sqrt' | 'cvt' | 'cmp'
  imm?: boolean
  /** Result in rax (stored with mov [rbx+d], rax) / in the flags (lahf). */
  out?: 'gpr' | 'flags'
  srcKind?: 'i64'
}

const SEQ_OPS: SeqOp[] = []
for (const [m, o, arith] of [
  ['add', 0x58, 'add'],
  ['sub', 0x5c, 'sub'],
  ['mul', 0x59, 'mul'],
  ['div', 0x5e, 'div'],
  ['sqrt', 0x51, 'sqrt'],
  ['min', 0x5d, 'cmp'],
  ['max', 0x5f, 'cmp'],
] as const) {
  SEQ_OPS.push({ name: `${m}ss`, op: [0xf3, 0x0f, o], kind: 'f32', packed: false, arith })
  SEQ_OPS.push({ name: `${m}sd`, op: [0xf2, 0x0f, o], kind: 'f64', packed: false, arith })
  SEQ_OPS.push({ name: `${m}ps`, op: [0x0f, o], kind: 'f32', packed: true, arith })
  SEQ_OPS.push({ name: `${m}pd`, op: [0x66, 0x0f, o], kind: 'f64', packed: true, arith })
}
SEQ_OPS.push(
  { name: 'cmpsd', op: [0xf2, 0x0f, 0xc2], kind: 'f64', packed: false, arith: 'cmp', imm: true },
  { name: 'cmpps', op: [0x0f, 0xc2], kind: 'f32', packed: true, arith: 'cmp', imm: true },
  { name: 'comisd', op: [0x66, 0x0f, 0x2f], kind: 'f64', packed: false, arith: 'cmp', out: 'flags' },
  { name: 'ucomiss', op: [0x0f, 0x2e], kind: 'f32', packed: false, arith: 'cmp', out: 'flags' },
  { name: 'cvtsd2ss', op: [0xf2, 0x0f, 0x5a], kind: 'f64', packed: false, arith: 'cvt' },
  { name: 'cvtpd2ps', op: [0x66, 0x0f, 0x5a], kind: 'f64', packed: true, arith: 'cvt' },
  { name: 'cvtss2sd', op: [0xf3, 0x0f, 0x5a], kind: 'f32', packed: false, arith: 'cvt' },
  {
    name: 'cvtsd2si r64',
    op: [0xf2, 0x48, 0x0f, 0x2d],
    kind: 'f64',
    packed: false,
    arith: 'cvt',
    out: 'gpr',
  },
  {
    name: 'cvttss2si r64',
    op: [0xf3, 0x48, 0x0f, 0x2c],
    kind: 'f32',
    packed: false,
    arith: 'cvt',
    out: 'gpr',
  },
  { name: 'cvtss2si r32', op: [0xf3, 0x0f, 0x2d], kind: 'f32', packed: false, arith: 'cvt', out: 'gpr' },
  { name: 'cvtps2dq', op: [0x66, 0x0f, 0x5b], kind: 'f32', packed: true, arith: 'cvt' },
  { name: 'cvtpd2dq', op: [0xf2, 0x0f, 0xe6], kind: 'f64', packed: true, arith: 'cvt' },
  {
    name: 'cvtsi2ss r/m64',
    op: [0xf3, 0x48, 0x0f, 0x2a],
    kind: 'f32',
    packed: false,
    arith: 'cvt',
    srcKind: 'i64',
  },
  {
    name: 'cvtsi2sd r/m64',
    op: [0xf2, 0x48, 0x0f, 0x2a],
    kind: 'f64',
    packed: false,
    arith: 'cvt',
    srcKind: 'i64',
  },
)

const MAX_D = Number.MAX_VALUE
const MIN_D = 2 ** -1022
const MAX_F = 3.4028234663852886e38
const MIN_F = 2 ** -126

/** A target value next to an edge of the format: around the smallest normal, the largest finite, tiny, or plain. */
function target(r: Rng, single: boolean): number {
  const p = single ? 24 : 53
  const min = single ? MIN_F : MIN_D
  const max = single ? MAX_F : MAX_D
  const k = (r.int(9) - 4) / 4 // -1 .. 1 in quarter steps
  const sgn = r.bool() ? -1 : 1
  switch (r.int(5)) {
    case 0:
      return sgn * min * (1 + k * 2 ** -p)
    case 1:
      return sgn * max * (1 + k * 2 ** -p)
    case 2:
      return sgn * min * 2 ** -r.int(p + 2) * (1 + r.int(8) / 16)
    case 3:
      return sgn * max * (1 - r.int(8) * 2 ** -p)
    default:
      return sgn * 2 ** r.range(-60, 60) * (1 + r.int(1 << 12) / 2 ** 12)
  }
}

/** A random finite value of moderate exponent (the other factor). */
function factor(r: Rng, single: boolean): number {
  const m = 1 + r.u32() / 2 ** 32
  const e = single ? r.range(-40, 40) : r.range(-300, 300)
  const v = (r.bool() ? -1 : 1) * m * 2 ** e
  return single ? Math.fround(v) : v
}

/** An operand pair (destination, source) aimed at an edge for the operation. */
function edgePair(r: Rng, op: SeqOp): [number, number] {
  const single = op.kind === 'f32'
  const rnd = (v: number) => (single ? Math.fround(v) : v)
  const t = target(r, single)
  const a = factor(r, single)
  switch (op.arith) {
    case 'mul':
      return [a, rnd(t / a)]
    case 'div':
      return [rnd(t * a), a]
    case 'add':
    case 'sub': {
      const k = r.int(4)
      if (k === 0) return [t, op.arith === 'add' ? -t : t] // exact zero
      if (k === 1) return [rnd(t / 2), rnd((op.arith === 'add' ? 1 : -1) * (t - rnd(t / 2)))]
      return [t, rnd((op.arith === 'add' ? 1 : -1) * t * 2 ** -r.range(1, 60))]
    }
    case 'sqrt':
      return [a, rnd(Math.abs(t))]
    case 'cvt': {
      const k = r.int(3)
      if (k === 0) return [a, t]
      // Integer boundaries and ties.
      const b = r.pick([2 ** 31, 2 ** 63, 2 ** 24, 2 ** 53]) * (r.bool() ? -1 : 1)
      return [
        a,
        rnd(k === 1 ? b * (1 - r.int(4) * 2 ** -p53(single)) : Math.round(r.range(-1000, 1000)) + 0.5),
      ]
    }
    default:
      return r.bool() ? [t, t] : [t, rnd(t * (1 + r.int(3) * 2 ** -20))]
  }
}
function p53(single: boolean): number {
  return single ? 24 : 53
}

function seqCase(op: SeqOp, r: Rng): Pick<SseCase, 'code' | 'data'> {
  const data = new Uint8Array(PAGE)
  const dv = new DataView(data.buffer)
  const lanes = op.kind === 'f32' ? 4 : 2
  for (let i = 0; i < SLOTS; i++) {
    for (let j = 0; j < lanes; j++) {
      const dst = 32 * i
      const src = dst + 16
      if (op.srcKind === 'i64') {
        // Integers of random length, many next to float/double ties.
        const n = r.range(20, 64)
        let v = r.bits(n) | (1n << BigInt(n - 1))
        if (r.bool(0.5)) {
          const keep = BigInt(Math.max(0, n - r.pick([24, 25, 53, 54])))
          v = (v >> keep) << keep
          if (r.bool(0.5) && keep > 0n) v |= 1n << (keep - 1n)
        }
        dv.setBigUint64(src, BigInt.asUintN(64, r.bool() ? -v : v), true)
        dv.setBigUint64(dst, r.bits(64), true)
        continue
      }
      let a: number
      let b: number
      if (r.bool(0.75)) [a, b] = edgePair(r, op)
      else {
        const v = randomVector(r, op.kind)
        data.set(v, dst)
        data.set(randomVector(r, op.kind, v), src)
        continue
      }
      if (op.kind === 'f32') {
        dv.setFloat32(dst + 4 * j, a, true)
        dv.setFloat32(src + 4 * j, b, true)
      } else {
        dv.setFloat64(dst + 8 * j, a, true)
        dv.setFloat64(src + 8 * j, b, true)
      }
    }
  }
  const code: number[] = []
  for (let i = 0; i < SLOTS; i++) {
    code.push(0x0f, 0x10, ...atRbx(0, 32 * i)) // movups xmm0, [rbx+dst]
    code.push(...op.op, ...atRbx(0, 32 * i + 16)) // op xmm0/rax, [rbx+src]
    if (op.imm) code.push(r.int(8))
    if (op.out === 'gpr')
      code.push(0x48, 0x89, ...atRbx(0, RES_AT + 16 * i)) // mov [rbx+res], rax
    else if (op.out === 'flags')
      code.push(0x9f, 0x89, ...atRbx(0, RES_AT + 16 * i)) // lahf; mov [rbx+res], eax
    else code.push(0x0f, 0x11, ...atRbx(0, RES_AT + 16 * i)) // movups [rbx+res], xmm0
    code.push(0x0f, 0xae, ...atRbx(3, MX_AT + 4 * i)) // stmxcsr [rbx+mx]
    code.push(0x0f, 0xae, ...atRbx(2, MX_BASE)) // ldmxcsr [rbx+base]
  }
  dv.setUint32(MX_BASE, randomMxcsr(r) & ~0x3f, true)
  return { code: Uint8Array.from(code), data }
}

for (const op of SEQ_OPS)
  add(
    {
      name: `${op.name} x${SLOTS} at the edges`,
      pfx: 0,
      op: 0,
      reg: 'x',
      rm: 'x',
      kind: op.kind,
      build: (r) => seqCase(op, r),
    },
    SEQ,
  )

const selected = forms.filter((f) => !FILTER || FILTER.test(f.name))

// ---------------------------------------------------------------- case generation

const XMM_REGS = 16
/** GPRs usable as a memory base (not rsp: the oracle's stack pointer stays valid; not r15: reserved). */
const BASES = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]

function caseFor(f: Form, index: number): SseCase {
  const r = new Rng(Rng.seed(f.name, index * 7919 + SEED))
  const gpr: bigint[] = []
  for (let i = 0; i < 16; i++) gpr.push(randomGpr(r))
  gpr[4] = DATA_BASE + 0x800n
  if (f.build) {
    gpr[3] = DATA_BASE
    const { code, data } = f.build(r)
    const xmm = new Uint8Array(256)
    for (let i = 0; i < XMM_REGS; i++) xmm.set(randomVector(r, f.kind), 16 * i)
    return {
      form: f.name,
      code,
      gpr,
      rflags: 2n,
      mxcsr: 0x1f80,
      xmm,
      data,
      ignoreData: [],
      approx: null,
      addr: -2,
    }
  }
  const xmm = new Uint8Array(256)
  for (let i = 0; i < XMM_REGS; i++) xmm.set(randomVector(r, f.kind), 16 * i)
  const data = new Uint8Array(PAGE)
  for (let i = 0; i < PAGE; i += 16) data.set(randomVector(r, f.srcKind ?? f.kind), i)

  const regN = typeof f.reg === 'number' ? -1 : r.int(16)
  let rmOperand: Operand
  let addr = -1
  let rmReg = -1
  if (f.rm === 'm') {
    const size = f.mem ?? 16
    const k = r.int(100)
    if (size >= 512) addr = 16 * r.int((PAGE - 1024) / 16)
    else if (k < 4)
      addr = PAGE - r.range(1, size) // crosses into the unmapped page
    else addr = size >= 16 ? 16 * r.int((PAGE - 16) / 16) : size * r.int(PAGE / size)
    if (f.aligned && r.bool(0.12)) addr += r.range(1, 15)
    if (size >= 512 && r.bool(0.08)) addr = PAGE - 256 // fxsave/fxrstor area running off the page
    if (f.fixedAddr !== undefined) addr = f.fixedAddr
    let base = r.pick(BASES)
    if (f.op === 0xf7) base = 3
    const disp = r.pick([0, 8, -16, 0x40, -0x80, 0x1234])
    gpr[base] = DATA_BASE + BigInt(addr - disp)
    rmOperand = { kind: 'mem', base, index: null, scale: 1, disp, dispSize: 4 }
  } else {
    rmReg = r.int(16)
    if (f.rm === 'g') {
      if (rmReg === 4) rmReg = 3
      rmOperand = reg(rmReg)
    } else rmOperand = reg(rmReg)
  }
  // The source register of a binary xmm op sometimes equals the destination.
  if (f.rm === 'x' && f.reg === 'x' && r.bool(0.1)) rmReg = regN
  if (f.rm !== 'm') rmOperand = reg(rmReg)
  if (f.rm === 'x' && f.reg === 'x' && rmReg !== regN) {
    // Make the two operands related (equal, negated, adjacent lanes).
    xmm.set(randomVector(r, f.kind, xmm.subarray(16 * regN, 16 * regN + 16)), 16 * rmReg)
  }
  if (f.rm === 'm' && f.reg === 'x' && addr >= 0 && addr + 16 <= PAGE && r.bool(0.3))
    data.set(randomVector(r, f.srcKind ?? f.kind, xmm.subarray(16 * regN, 16 * regN + 16)), addr)
  const regOperand = regN >= 0 ? reg(f.reg === 'g' && regN === 4 ? 0 : regN) : undefined
  const insn: Insn = {
    opcode: [0x0f, f.op],
    rm: rmOperand,
    w: f.w,
    ...(f.pfx === 0x66 ? { opsize16: true } : f.pfx ? { rep: f.pfx } : {}),
    ...(typeof f.reg === 'number' ? { digit: f.reg } : { reg: regOperand }),
  }
  if (f.imm) insn.imm = [{ size: 1, value: BigInt(f.imm(r)) }]
  const code = encode(insn, FLAT_CODE_ADDRESS)
  const c: SseCase & { rmReg?: number } = {
    form: f.name,
    code: Uint8Array.from(code),
    gpr,
    rflags: BigInt(2 | (r.u32() & 0xcd5)),
    mxcsr: randomMxcsr(r),
    xmm,
    data,
    ignoreData: f.ignoreData && addr >= 0 ? f.ignoreData(addr) : [],
    approx: null,
    addr,
    rmReg,
  }
  if (f.setup) f.setup(r, c, addr)
  if (f.tail) {
    gpr[15] = DATA_BASE + BigInt(fxsaveSlot(Math.max(0, addr)))
    c.code = Uint8Array.from([...code, ...f.tail(addr)])
  }
  if (f.approx) c.approx = { reg: regN, lanes: f.pfx === 0xf3 ? 1 : 4 }
  return c
}

// ---------------------------------------------------------------- comparison

const hex = (v: bigint | number, d = 16) => `0x${BigInt.asUintN(64, BigInt(v)).toString(16).padStart(d, '0')}`
const GPR = GPR_NAMES

function xmmHex(x: Uint8Array, n: number): string {
  const dv = new DataView(x.buffer, x.byteOffset + 16 * n, 16)
  return [3, 2, 1, 0]
    .map((i) =>
      dv
        .getUint32(4 * i, true)
        .toString(16)
        .padStart(8, '0'),
    )
    .join('_')
}

/** rcp/rsqrt lanes: both results must be within 1.5*2^-12 relative of the exact value (or the same special). */
function approxOk(c: SseCase, native: SseOutcome, emu: SseOutcome, lane: number): boolean {
  const n = c.approx!.reg
  const a = new DataView(native.xmm.buffer, native.xmm.byteOffset + 16 * n, 16).getFloat32(4 * lane, true)
  const b = new DataView(emu.xmm.buffer, emu.xmm.byteOffset + 16 * n, 16).getFloat32(4 * lane, true)
  if (Number.isNaN(a) || Number.isNaN(b) || !Number.isFinite(a) || !Number.isFinite(b) || a === 0 || b === 0)
    return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) < 2 ** -120
  return Math.abs(a - b) <= 2 * 1.5 * 2 ** -12 * Math.abs(a)
}

function compare(c: SseCase, native: SseOutcome, emu: SseOutcome): string[] {
  const d: string[] = []
  const nf = native.fault
  const ef = emu.fault
  if (!nf !== !ef || (nf && ef && (nf.vector !== ef.vector || nf.errorCode !== ef.errorCode)))
    d.push(`fault: host ${JSON.stringify(nf)}, emulator ${JSON.stringify(ef)}`)
  if (native.rip !== emu.rip) d.push(`rip: host ${hex(native.rip, 8)}, emulator ${hex(emu.rip, 8)}`)
  for (let i = 0; i < 16; i++)
    if (BigInt.asUintN(64, native.gpr[i]) !== BigInt.asUintN(64, emu.gpr[i]))
      d.push(`${GPR[i]}: host ${hex(native.gpr[i])}, emulator ${hex(emu.gpr[i])}`)
  const fm = COMPARED_RFLAGS_MASK
  if ((native.rflags & fm) !== (emu.rflags & fm))
    d.push(`rflags: host ${hex(native.rflags & fm, 4)}, emulator ${hex(emu.rflags & fm, 4)}`)
  if (native.mxcsr !== emu.mxcsr)
    d.push(`mxcsr: in ${hex(c.mxcsr, 4)} host ${hex(native.mxcsr, 4)}, emulator ${hex(emu.mxcsr, 4)}`)
  for (let n = 0; n < 16; n++) {
    let same = true
    for (let i = 0; i < 16; i++) if (native.xmm[16 * n + i] !== emu.xmm[16 * n + i]) same = false
    if (same) continue
    if (c.approx && c.approx.reg === n && !nf) {
      let ok = true
      for (let l = 0; l < 4; l++) {
        if (l < c.approx.lanes) ok &&= approxOk(c, native, emu, l)
        else
          for (let i = 0; i < 4; i++)
            if (native.xmm[16 * n + 4 * l + i] !== emu.xmm[16 * n + 4 * l + i]) ok = false
      }
      if (ok) continue
    }
    d.push(`xmm${n}: in ${xmmHex(c.xmm, n)} host ${xmmHex(native.xmm, n)}, emulator ${xmmHex(emu.xmm, n)}`)
  }
  const bad: number[] = []
  for (let i = 0; i < PAGE; i++)
    if (native.data[i] !== emu.data[i] && !c.ignoreData.some(([a, b]) => i >= a && i < b)) bad.push(i)
  if (bad.length && c.addr === -2) {
    // A sequence case: show the operands and results of the first slot that differs.
    const at = bad[0]
    const slot = at >= MX_AT ? (at - MX_AT) >> 2 : at >= RES_AT ? (at - RES_AT) >> 4 : -1
    if (slot >= 0 && slot < SLOTS) {
      const v = (x: Uint8Array, o: number) => {
        const m = new Uint8Array(256)
        m.set(x.subarray(o, o + 16))
        return xmmHex(m, 0)
      }
      d.push(
        `slot ${slot}: dst ${v(c.data, 32 * slot)} src ${v(c.data, 32 * slot + 16)} mxcsr ${hex(new DataView(c.data.buffer).getUint32(MX_BASE, true), 4)}` +
          ` -> host ${v(native.data, RES_AT + 16 * slot)} mx ${hex(new DataView(native.data.buffer).getUint32(MX_AT + 4 * slot, true), 4)}` +
          `, emulator ${v(emu.data, RES_AT + 16 * slot)} mx ${hex(new DataView(emu.data.buffer).getUint32(MX_AT + 4 * slot, true), 4)}`,
      )
    }
  }
  if (bad.length)
    d.push(
      `data: ${bad.length} byte(s) differ: ${bad
        .slice(0, 12)
        .map((i) => `+0x${i.toString(16)} ${native.data[i].toString(16)}/${emu.data[i].toString(16)}`)
        .join(' ')}`,
    )
  return d
}

function describeCase(c: SseCase): string {
  const code = Array.from(c.code, (b) => b.toString(16).padStart(2, '0')).join(' ')
  const rm = (c as SseCase & { rmReg?: number }).rmReg ?? -1
  let src = ''
  if (c.addr === -2) return `${c.form}`
  if (c.addr >= 0 && c.addr + 16 <= PAGE) {
    const m = new Uint8Array(256)
    m.set(c.data.subarray(c.addr, c.addr + 16))
    src = `, m[+0x${c.addr.toString(16)}] ${xmmHex(m, 0)}`
  } else if (rm >= 0) src = `, rm ${rm}: ${xmmHex(c.xmm, rm)}`
  return `${c.form}: code ${code}, mxcsr ${hex(c.mxcsr, 4)}${src}`
}

// ---------------------------------------------------------------- the test

differentialSuite({
  title: 'SSE differential: emulator vs host CPU',
  tag: 'sse-differential',
  forms: selected,
  casesPerForm: CASES,
  caseFor,
  show: SHOW,
  compare,
  describeCase,
})
