/// <reference types="node" />
// Differential test for MMX, the SSE/SSE2 additions on MMX registers, the
// mm <-> xmm conversions, and the x87/MMX aliasing: every case loads MM0-MM7
// from the data page (movq), runs one instruction form or a short sequence,
// then stores the whole x87/SSE state with fxsave64 into the data page. On
// the host (native/sse-oracle, from the fninit state) and in the emulator
// (interpreter and block compiler) the GPRs, RFLAGS, MXCSR, XMM registers,
// the data page (so MM0-7 with their exponent words, TOP, the tag word) and
// the exception (vector, rip) must agree. The emulator runs with CR0.NE and
// CR4.OSXMMEXCPT set, as Linux runs the host: the sequences that leave an x87
// exception pending check #MF at the next MMX/waiting instruction.
//
// Not compared: FOP/FIP/FDP in the fxsave image (not tracked) and MXCSR_MASK.
// Knobs: X86EMU_MMX_CASES=n (default 24), X86EMU_MMX_SEED=n, X86EMU_MMX_FILTER=re.

import { GPR_NAMES } from '../src/index.js'
import { FLAT_CODE_ADDRESS } from './support/flat.js'
import { DATA_BASE, encode, type Insn, type Mem, Rng, reg } from './support/instruction-forms.js'
import { COMPARED_RFLAGS_MASK } from './support/native.js'
import { INT_OPS } from './support/packed-int-ops.js'
import { differentialSuite, type OracleCase, type OracleOutcome } from './support/sse-oracle.js'

const CASES = Number(process.env.X86EMU_MMX_CASES ?? 24)
const SEED = Number(process.env.X86EMU_MMX_SEED ?? 1)
const FILTER = process.env.X86EMU_MMX_FILTER ? new RegExp(process.env.X86EMU_MMX_FILTER) : null
const PAGE = 4096
/** MM0-7 initial values at data+0, the fxsave64 image at data+FX. */
const FX = 0xc00
/** GPRs an instruction may write (not rbx: the data base; not rsp). */
const GPR_DESTS = [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]

const disp32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff]
/** ModRM + disp32 for [rbx + d] with reg field n. */
const atRbx = (n: number, d: number) => [0x80 | ((n & 7) << 3) | 3, ...disp32(d)]
const PRELUDE = Array.from({ length: 8 }, (_, i) => [0x0f, 0x6f, 0x43 | (i << 3), 8 * i]).flat()
const FXSAVE = [0x48, 0x0f, 0xae, ...atRbx(0, FX)]

interface Case extends OracleCase {
  form: string
}

type Kind = 'i' | 'f32' | 'f64'
type Field = 'mm' | 'xmm' | 'gpr' | 'mem' | number

interface Form {
  name: string
  group: string
  pfx?: 0x66 | 0xf2 | 0xf3
  op: number
  /** ModRM.reg: mm, xmm or GPR register, or an opcode extension. */
  reg: Field
  /** ModRM.rm: a register kind, or memory. */
  rm: Field
  w?: boolean
  imm?: boolean
  /** Operand data in xmm registers and memory (float kinds for the conversions). */
  kind?: Kind
  /** Shift by count: keep the count operand plausible. */
  count?: boolean
  /** The whole code (a sequence), instead of one instruction. */
  seq?: (r: Rng) => number[]
  /** Initial MXCSR of the case (default: masked, random rounding). */
  mxcsr?: (r: Rng) => number
}

const forms: Form[] = []
const add = (group: string, f: Omit<Form, 'group'>) => forms.push({ ...f, group })

// mm, mm/m64 operations (no prefix): MMX, then the SSE and SSE2 additions.
const BINARY: Array<[string, number]> = [
  ['punpcklbw', 0x60],
  ['punpcklwd', 0x61],
  ['punpckldq', 0x62],
  ['packsswb', 0x63],
  ['packuswb', 0x67],
  ['punpckhbw', 0x68],
  ['punpckhwd', 0x69],
  ['punpckhdq', 0x6a],
  ['packssdw', 0x6b],
  ...INT_OPS,
]
for (const [m, op] of BINARY) {
  const count = /^ps[lr]/.test(m)
  add('mm arithmetic', { name: `${m} mm, mm`, op, reg: 'mm', rm: 'mm', count })
  add('mm arithmetic', { name: `${m} mm, m64`, op, reg: 'mm', rm: 'mem', count })
}
for (const [m, op, digit] of [
  ['psrlw', 0x71, 2],
  ['psraw', 0x71, 4],
  ['psllw', 0x71, 6],
  ['psrld', 0x72, 2],
  ['psrad', 0x72, 4],
  ['pslld', 0x72, 6],
  ['psrlq', 0x73, 2],
  ['psllq', 0x73, 6],
] as const)
  add('mm arithmetic', { name: `${m} mm, imm8`, op, reg: digit, rm: 'mm', imm: true })
add('mm arithmetic', { name: 'pshufw mm, mm, imm8', op: 0x70, reg: 'mm', rm: 'mm', imm: true })
add('mm arithmetic', { name: 'pshufw mm, m64, imm8', op: 0x70, reg: 'mm', rm: 'mem', imm: true })

// Moves.
const MOVES = 'mm moves'
for (const w of [false, true]) {
  const n = w ? 'movq' : 'movd'
  add(MOVES, { name: `${n} mm, r`, op: 0x6e, reg: 'mm', rm: 'gpr', w })
  add(MOVES, { name: `${n} mm, m`, op: 0x6e, reg: 'mm', rm: 'mem', w })
  add(MOVES, { name: `${n} r, mm`, op: 0x7e, reg: 'mm', rm: 'gpr', w })
  add(MOVES, { name: `${n} m, mm`, op: 0x7e, reg: 'mm', rm: 'mem', w })
}
add(MOVES, { name: 'movq mm, mm', op: 0x6f, reg: 'mm', rm: 'mm' })
add(MOVES, { name: 'movq mm, m64', op: 0x6f, reg: 'mm', rm: 'mem' })
add(MOVES, { name: 'movq mm, mm (0F 7F)', op: 0x7f, reg: 'mm', rm: 'mm' })
add(MOVES, { name: 'movq m64, mm', op: 0x7f, reg: 'mm', rm: 'mem' })
add(MOVES, { name: 'movntq m64, mm', op: 0xe7, reg: 'mm', rm: 'mem' })
add(MOVES, { name: 'pinsrw mm, r32, imm8', op: 0xc4, reg: 'mm', rm: 'gpr', imm: true })
add(MOVES, { name: 'pinsrw mm, m16, imm8', op: 0xc4, reg: 'mm', rm: 'mem', imm: true })
add(MOVES, { name: 'pextrw r32, mm, imm8', op: 0xc5, reg: 'gpr', rm: 'mm', imm: true })
add(MOVES, { name: 'pmovmskb r32, mm', op: 0xd7, reg: 'gpr', rm: 'mm' })
add(MOVES, { name: 'maskmovq mm, mm', op: 0xf7, reg: 'mm', rm: 'mm' })
add(MOVES, { name: 'movq2dq xmm, mm', pfx: 0xf3, op: 0xd6, reg: 'xmm', rm: 'mm' })
add(MOVES, { name: 'movdq2q mm, xmm', pfx: 0xf2, op: 0xd6, reg: 'mm', rm: 'xmm' })
add(MOVES, { name: 'emms', op: 0x77, reg: 0, rm: 0, seq: () => [0x0f, 0x77] })

// Conversions between mm and xmm registers.
const CVT = 'mm conversions'
add(CVT, { name: 'cvtpi2ps xmm, mm', op: 0x2a, reg: 'xmm', rm: 'mm', kind: 'f32' })
add(CVT, { name: 'cvtpi2ps xmm, m64', op: 0x2a, reg: 'xmm', rm: 'mem', kind: 'i' })
add(CVT, { name: 'cvtpi2pd xmm, mm', pfx: 0x66, op: 0x2a, reg: 'xmm', rm: 'mm', kind: 'f64' })
add(CVT, { name: 'cvtpi2pd xmm, m64', pfx: 0x66, op: 0x2a, reg: 'xmm', rm: 'mem', kind: 'i' })
for (const [m, pfx, op, kind] of [
  ['cvtps2pi', undefined, 0x2d, 'f32'],
  ['cvttps2pi', undefined, 0x2c, 'f32'],
  ['cvtpd2pi', 0x66, 0x2d, 'f64'],
  ['cvttpd2pi', 0x66, 0x2c, 'f64'],
] as const) {
  add(CVT, { name: `${m} mm, xmm`, pfx, op, reg: 'mm', rm: 'xmm', kind })
  add(CVT, { name: `${m} mm, m`, pfx, op, reg: 'mm', rm: 'mem', kind })
}

// x87 and MMX share their registers (Intel SDM vol. 1, 9.5).
const ALIAS = 'x87 aliasing and #MF'
const FSTP_M80 = (d: number) => [0xdb, ...atRbx(7, d)]
const FLDCW = (d: number) => [0xd9, ...atRbx(5, d)]
add(ALIAS, {
  name: 'MMX write, then fld of that register: a NaN/infinity with the mm bits',
  op: 0,
  reg: 0,
  rm: 0,
  seq: (r) => {
    const i = r.int(8)
    return [0x0f, 0x6f, ...atRbx(i, 0x100), 0xdd, 0xc7, 0xd9, 0xc0 | i, ...FSTP_M80(0x400)]
  },
})
add(ALIAS, {
  name: 'x87 pushes, then MMX reads of the registers they wrote',
  op: 0,
  reg: 0,
  rm: 0,
  seq: (r) => {
    const n = r.int(4) + 1
    const code = [0xdb, 0xe3] // fninit
    for (let k = 0; k < n; k++)
      code.push(
        ...r.pick([
          [0xd9, 0xe8],
          [0xd9, 0xeb],
          [0xd9, 0xea],
          [0xdf, ...atRbx(5, 0x100 + 8 * k)],
        ]),
      ) // fld1/fldpi/fldl2e/fild m64
    code.push(0x0f, 0x7e, 0xc0 | r.int(8)) // movd eax, mm?
    code.push(0x0f, 0x7f, ...atRbx(r.int(8), 0x500)) // movq [rbx+0x500], mm?
    return code
  },
})
add(ALIAS, {
  name: 'emms, x87 use, then MMX again',
  op: 0,
  reg: 0,
  rm: 0,
  seq: (r) => [
    0x0f,
    0x77,
    ...(r.bool() ? [0xd9, 0xe8] : [0xd9, 0xeb, 0xd9, 0xee]),
    ...(r.bool() ? [0x0f, 0xfc, 0xc0 | (r.int(8) << 3) | r.int(8)] : [0x0f, 0x77]),
  ],
})
add(ALIAS, {
  name: 'unmasked x87 exception, then an MMX instruction (#MF) or fnstsw/fnclex first',
  op: 0,
  reg: 0,
  rm: 0,
  seq: (r) => {
    // Control word at +0x600: some exception unmasked; 1/0 (ZE), 0/0 or sqrt(-1) (IE), or 1/3 (PE).
    const op = r.pick([
      [0xd9, 0xee, 0xd9, 0xe8, 0xde, 0xf1], // fldz; fld1; fdivrp: 0/1? (st1/st0 = 1/0 with rp)
      [0xd9, 0xee, 0xd9, 0xee, 0xde, 0xf9], // 0/0
      [0xd9, 0xe8, 0xd9, 0xe0, 0xd9, 0xfa], // fld1; fchs; fsqrt
      [0xd9, 0xe8, 0xdf, ...atRbx(5, 0x608), 0xde, 0xf9], // 1/3 (fild 3)
    ])
    const after = r.pick([
      [0x0f, 0xfc, 0xc1], // paddb mm0, mm1
      [0x0f, 0x77], // emms
      [0x9b], // fwait
      [0xdf, 0xe0, 0x9b], // fnstsw ax; fwait
      [0xdb, 0xe2, 0x0f, 0xfc, 0xc1], // fnclex; paddb (nothing pending any more)
      [0xd9, 0xe8], // fld1 (waiting: #MF)
      [0xd9, ...atRbx(7, 0x610)], // fnstcw (non-waiting)
      [0x0f, 0xae, ...atRbx(0, 0x800)], // fxsave (does not check)
    ])
    return [0xdb, 0xe3, ...FLDCW(0x600), ...op, ...after]
  },
})

const selected = forms.filter((f) => !FILTER || FILTER.test(f.name))

// ---------------------------------------------------------------- operand values

function randomQword(r: Rng, view: DataView, at: number, kind: Kind): void {
  if (kind === 'f32') {
    for (let i = 0; i < 2; i++) view.setFloat32(at + 4 * i, randomFloat(r), true)
    if (r.bool(0.1)) view.setUint32(at + 4 * r.int(2), r.u32(), true)
  } else if (kind === 'f64') view.setFloat64(at, randomFloat(r), true)
  else {
    const k = r.int(8)
    for (let i = 0; i < 2; i++) {
      let v = r.u32()
      if (k === 0) v &= r.pick([0xff, 0xffff, 0x00ff00ff, 0x0f0f0f0f, 0x7f7f7f7f])
      else if (k === 1) v = r.pick([0, 0xffffffff, 0x80808080, 0x7fff8000, 0x80000000, 0x7fffffff])
      view.setUint32(at + 4 * i, v >>> 0, true)
    }
  }
}

/** Floats around the int32 range, ties, specials. */
function randomFloat(r: Rng): number {
  switch (r.int(6)) {
    case 0:
      return r.pick([
        0,
        -0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        2 ** 31,
        -(2 ** 31),
        2 ** 31 - 1,
        -(2 ** 31) - 1,
        2 ** 32,
      ])
    case 1:
      return r.pick([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-40, 3e38, -1e300])
    case 2:
      return (r.u32() - 2 ** 31) / 2 ** r.int(20)
    default:
      return (r.u32() - 2 ** 31) * 2 ** (r.int(12) - 8) + r.int(4) / 4
  }
}

function caseFor(f: Form, index: number): Case {
  const r = new Rng(Rng.seed(f.name, index * 7919 + SEED))
  const kind = f.kind ?? 'i'
  const data = new Uint8Array(PAGE)
  const dv = new DataView(data.buffer)
  for (let i = 0; i < FX; i += 8) randomQword(r, dv, i, i < 64 ? 'i' : kind)
  const xmm = new Uint8Array(256)
  const xv = new DataView(xmm.buffer)
  for (let i = 0; i < 256; i += 8) randomQword(r, xv, i, kind)
  const gpr: bigint[] = Array.from({ length: 16 }, () => r.bits(64))
  gpr[3] = DATA_BASE
  gpr[4] = DATA_BASE + 0xf00n
  let mxcsr = 0x1f80 | (r.int(4) << 13)
  if (f.mxcsr) mxcsr = f.mxcsr(r)
  let body: number[]
  if (f.seq) {
    body = f.seq(r)
    dv.setUint16(0x600, 0x037f & ~(1 << r.pick([0, 2, 5])) & ~(r.bool(0.3) ? 0x3f : 0), true)
    dv.setBigUint64(0x608, 3n, true)
  } else {
    const mmOrXmm = (field: Field) => (field === 'xmm' ? r.int(16) : r.int(16)) // REX bits: ignored for mm
    const rmField = (): Insn['rm'] => {
      if (f.rm === 'mem') {
        let off = r.bool(0.05) ? PAGE - r.range(1, 8) : 0x100 + r.int(0xa00)
        if (f.pfx === 0x66 && f.reg === 'mm' && r.bool(0.85)) off &= ~15 // cvtpd2pi m128: aligned (mostly)
        const m: Mem = { kind: 'mem', base: 3, index: null, scale: 1, disp: off, dispSize: 4 }
        return m
      }
      if (f.rm === 'gpr') return reg(r.pick(GPR_DESTS))
      return reg(mmOrXmm(f.rm))
    }
    const insn: Insn = {
      opcode: [0x0f, f.op],
      rm: rmField(),
      w: f.w,
      ...(f.pfx === 0x66 ? { opsize16: true } : f.pfx ? { rep: f.pfx } : {}),
      ...(typeof f.reg === 'number'
        ? { digit: f.reg }
        : { reg: reg(f.reg === 'gpr' ? r.pick(GPR_DESTS) : mmOrXmm(f.reg)) }),
    }
    if (f.imm)
      insn.imm = [
        { size: 1, value: BigInt(f.op >= 0x71 && f.op <= 0x73 && r.bool(0.8) ? r.int(70) : r.int(256)) },
      ]
    body = encode(insn, FLAT_CODE_ADDRESS + BigInt(PRELUDE.length))
    if (f.count) {
      // Shift counts: mostly small, sometimes past the lane width or with high bits set.
      for (let i = 0; i < 64; i += 8)
        dv.setBigUint64(i, r.bool(0.5) ? BigInt(r.int(70)) : dv.getBigUint64(i, true), true)
      for (let i = 0x100; i < 0xb08; i += 8) if (r.bool(0.7)) dv.setBigUint64(i, BigInt(r.int(70)), true)
    }
    if (f.op === 0xf7) gpr[7] = DATA_BASE + BigInt(r.bool(0.1) ? PAGE - r.range(1, 7) : 0x100 + r.int(0xa00))
  }
  return {
    form: f.name,
    code: Uint8Array.from([...PRELUDE, ...body, ...FXSAVE]),
    gpr,
    rflags: BigInt(2 | (r.u32() & 0xcd5)),
    mxcsr,
    xmm,
    data,
  }
}

// ---------------------------------------------------------------- comparison

const hex = (v: bigint | number, d = 16) => `0x${BigInt.asUintN(64, BigInt(v)).toString(16).padStart(d, '0')}`
/** fxsave image bytes not compared: FOP, FIP, FDP (not tracked), MXCSR_MASK (host-specific). */
const IGNORED = (i: number) => (i >= FX + 6 && i < FX + 24) || (i >= FX + 28 && i < FX + 32)
const IGNORED_AT_800 = (i: number) =>
  (i >= 0x800 + 6 && i < 0x800 + 24) || (i >= 0x800 + 28 && i < 0x800 + 32)

function compare(native: OracleOutcome, emu: OracleOutcome): string[] {
  const d: string[] = []
  const nf = native.fault
  const ef = emu.fault
  if (!nf !== !ef || (nf && ef && (nf.vector !== ef.vector || nf.errorCode !== ef.errorCode)))
    d.push(`fault: host ${JSON.stringify(nf)}, emulator ${JSON.stringify(ef)}`)
  if (native.rip !== emu.rip) d.push(`rip: host ${hex(native.rip, 8)}, emulator ${hex(emu.rip, 8)}`)
  for (let i = 0; i < 16; i++)
    if (native.gpr[i] !== BigInt.asUintN(64, emu.gpr[i]))
      d.push(`${GPR_NAMES[i]}: host ${hex(native.gpr[i])}, emulator ${hex(emu.gpr[i])}`)
  const fm = COMPARED_RFLAGS_MASK
  if ((native.rflags & fm) !== (emu.rflags & fm))
    d.push(`rflags: host ${hex(native.rflags & fm, 4)}, emulator ${hex(emu.rflags & fm, 4)}`)
  if (native.mxcsr !== emu.mxcsr) d.push(`mxcsr: host ${hex(native.mxcsr, 4)}, emulator ${hex(emu.mxcsr, 4)}`)
  for (let n = 0; n < 16; n++)
    for (let i = 0; i < 16; i++)
      if (native.xmm[16 * n + i] !== emu.xmm[16 * n + i]) {
        d.push(`xmm${n} differs`)
        break
      }
  const bad: number[] = []
  for (let i = 0; i < PAGE; i++)
    if (native.data[i] !== emu.data[i] && !IGNORED(i) && !IGNORED_AT_800(i)) bad.push(i)
  if (bad.length)
    d.push(
      `data: ${bad.length} byte(s) differ: ${bad
        .slice(0, 16)
        .map((i) => `+0x${i.toString(16)} ${native.data[i].toString(16)}/${emu.data[i].toString(16)}`)
        .join(' ')}`,
    )
  return d
}

differentialSuite({
  title: 'MMX differential: emulator vs host CPU',
  tag: 'mmx-differential',
  forms: selected,
  casesPerForm: CASES,
  caseFor,
  show: 8,
  compare: (_c, native, emu) => compare(native, emu),
  describeCase: (c) =>
    `${c.form}: code ${Array.from(c.code.subarray(PRELUDE.length, c.code.length - FXSAVE.length), (b) => b.toString(16).padStart(2, '0')).join(' ')}`,
})
