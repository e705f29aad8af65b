/// <reference types="node" />
// Differential test for the x87: each form runs after a prelude that loads a
// random control word (rounding and precision control; exceptions masked)
// and two random 80-bit operands (ST1 = B, ST0 = A), with a random memory
// operand at data+32 for the memory forms; the x87 state is then taken with
// fxsave64 into the data page. It runs on the host (native/sse-oracle,
// whose cases start from the fninit state) and in the emulator (interpreter
// and block compiler); GPRs, RFLAGS, the data page (with the fxsave image)
// and the exception must agree.
//
// Not compared: FOP/FIP/FDP/FCS/FDS (the emulator does not track them) in the
// fxsave image and in fnstenv/fnsave images, and MXCSR_MASK.
//
// Knobs: X86EMU_X87_CASES=n (cases per form, default 16), X86EMU_X87_SEED=n,
// X86EMU_X87_FILTER=re, X86EMU_X87_EXACT=1 (transcendentals compared exactly too).

import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runFlat } from './support/flat.js'
import { COMPARED_RFLAGS_MASK } from './support/native.js'

const CASES = Number(process.env.X86EMU_X87_CASES ?? 16)
const SEED = Number(process.env.X86EMU_X87_SEED ?? 1)
const FILTER = process.env.X86EMU_X87_FILTER ? new RegExp(process.env.X86EMU_X87_FILTER) : null
const ORACLE = fileURLToPath(new URL('../native/sse-oracle', import.meta.url))
const PAGE = 4096
const DATA = 0x20000000n
const available = process.arch === 'x64' && process.platform === 'linux' && existsSync(ORACLE)

// ---------------------------------------------------------------- encoding ([rbx+disp])

const FX = 0x200 // fxsave image
const OUT = 0x80 // memory results
const MEM = 0x20 // memory source operand
const CW = 0x40 // control word

function m(op: number, r: number, disp: number): number[] {
  if (disp < 128) return [op, 0x43 | (r << 3), disp]
  return [op, 0x83 | (r << 3), disp & 0xff, (disp >> 8) & 0xff, 0, 0]
}
const PRE_CW = m(0xd9, 5, CW)
const LOAD_B = m(0xdb, 5, 0x10)
const LOAD_A = m(0xdb, 5, 0x00)
const FXSAVE = [0x48, 0x0f, 0xae, 0x83, FX & 0xff, FX >> 8, 0, 0]

type MemKind = 'none' | 'bcd' | 'f32' | 'f64' | 'i16' | 'i32' | 'i64' | 'env' | 'save'
interface Form {
  name: string
  body: number[]
  mem: MemKind
  /** Operands loaded before the body (0: empty stack, 1: only A, 2: B and A, 8: stack full). */
  loads?: number
  /** Largest biased exponent of a finite A (the instruction's documented domain). */
  maxExpA?: number
  /** Transcendental: register values may differ by 1 ulp, C1 and PE are not compared. */
  approx?: boolean
}

class Rng {
  s: bigint
  constructor(seed: number) {
    this.s = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n
  }
  u64(): bigint {
    this.s = BigInt.asUintN(64, this.s * 6364136223846793005n + 1442695040888963407n)
    let x = this.s
    x ^= x >> 29n
    x = BigInt.asUintN(64, x * 0xbf58476d1ce4e5b9n)
    return x ^ (x >> 32n)
  }
  int(n: number): number {
    return Number(this.u64() % BigInt(n))
  }
}

const forms: Form[] = []
const add = (name: string, body: number[], mem: MemKind = 'none', loads = 2) =>
  forms.push({ name, body, mem, loads })

const ARITH = ['fadd', 'fmul', '', '', 'fsub', 'fsubr', 'fdiv', 'fdivr']
for (const r of [0, 1, 4, 5, 6, 7]) {
  const n = ARITH[r]
  add(`${n} st0,st1`, [0xd8, 0xc1 | (r << 3)])
  add(`${n} st1,st0`, [0xdc, 0xc1 | (r << 3)])
  add(`${n}p st1,st0`, [0xde, 0xc1 | (r << 3)])
  add(`${n} m32`, m(0xd8, r, MEM), 'f32')
  add(`${n} m64`, m(0xdc, r, MEM), 'f64')
  add(`fi${n.slice(1)} m32`, m(0xda, r, MEM), 'i32')
  add(`fi${n.slice(1)} m16`, m(0xde, r, MEM), 'i16')
  add(`${n} st0,st1 (empty st1)`, [0xd8, 0xc1 | (r << 3)], 'none', 1)
}
add('fcom st1', [0xd8, 0xd1])
add('fcomp st1', [0xd8, 0xd9])
add('fcompp', [0xde, 0xd9])
add('fucom st1', [0xdd, 0xe1])
add('fucomp st1', [0xdd, 0xe9])
add('fucompp', [0xda, 0xe9])
add('fcom m32', m(0xd8, 2, MEM), 'f32')
add('fcomp m64', m(0xdc, 3, MEM), 'f64')
add('ficom m32', m(0xda, 2, MEM), 'i32')
add('ficomp m16', m(0xde, 3, MEM), 'i16')
add('fcomi st1', [0xdb, 0xf1])
add('fucomi st1', [0xdb, 0xe9])
add('fcomip st1', [0xdf, 0xf1])
add('fucomip st1', [0xdf, 0xe9])
add('fcomi (empty)', [0xdb, 0xf1], 'none', 1)
add('ftst', [0xd9, 0xe4])
add('fxam', [0xd9, 0xe5])
add('fxam (empty)', [0xd9, 0xe5], 'none', 0)
add('fchs', [0xd9, 0xe0])
add('fabs', [0xd9, 0xe1])
add('fsqrt', [0xd9, 0xfa])
add('frndint', [0xd9, 0xfc])
add('fscale', [0xd9, 0xfd])
add('fxtract', [0xd9, 0xf4], 'none', 1)
add('fprem', [0xd9, 0xf8])
add('fprem1', [0xd9, 0xf5])
add('fdecstp', [0xd9, 0xf6])
add('fincstp', [0xd9, 0xf7])
add('fxch st1', [0xd9, 0xc9])
add('fxch (empty)', [0xd9, 0xc9], 'none', 1)
add('fld st1', [0xd9, 0xc1])
add('fld (overflow)', [0xd9, 0xc0], 'none', 8)
add('fxtract (overflow)', [0xd9, 0xf4], 'none', 8)
add('fptan (overflow)', [0xd9, 0xf2], 'none', 8)
add('fsincos (overflow)', [0xd9, 0xfb], 'none', 8)
add('fld1 (overflow)', [0xd9, 0xe8], 'none', 8)
add('fild (overflow)', m(0xdb, 0, MEM), 'i32', 8)
add('fst st1', [0xdd, 0xd1])
add('fstp st1', [0xdd, 0xd9])
add('ffree st1', [0xdd, 0xc1])
add('fninit', [0xdb, 0xe3])
add('fnclex', [0xdb, 0xe2])
add('fnstsw ax', [0xdf, 0xe0])
add('fnstsw m16', m(0xdd, 7, OUT))
add('fnstcw m16', m(0xd9, 7, OUT))
add('fnstenv', m(0xd9, 6, OUT), 'env')
add('fldenv', m(0xd9, 4, MEM), 'env')
add('fnsave', m(0xdd, 6, OUT), 'save')
add('fld m32', m(0xd9, 0, MEM), 'f32')
add('fld m64', m(0xdd, 0, MEM), 'f64')
add('fild m16', m(0xdf, 0, MEM), 'i16')
add('fild m32', m(0xdb, 0, MEM), 'i32')
add('fild m64', m(0xdf, 5, MEM), 'i64')
add('fst m32', m(0xd9, 2, OUT))
add('fstp m32', m(0xd9, 3, OUT))
add('fst m64', m(0xdd, 2, OUT))
add('fstp m64', m(0xdd, 3, OUT))
add('fstp m80', m(0xdb, 7, OUT))
add('fist m16', m(0xdf, 2, OUT))
add('fistp m16', m(0xdf, 3, OUT))
add('fist m32', m(0xdb, 2, OUT))
add('fistp m32', m(0xdb, 3, OUT))
add('fistp m64', m(0xdf, 7, OUT))
add('fisttp m16', m(0xdf, 1, OUT))
add('fisttp m32', m(0xdb, 1, OUT))
add('fisttp m64', m(0xdd, 1, OUT))
add('fbld', m(0xdf, 4, MEM), 'bcd')
add('fbstp', m(0xdf, 6, OUT))
add('fild m64; fbstp', [...m(0xdf, 5, MEM), ...m(0xdf, 6, OUT)], 'i64')
add('fbstp (empty)', m(0xdf, 6, OUT), 'none', 0)
add('fstp m64 (empty)', m(0xdd, 3, OUT), 'none', 0)
add('fistp m32 (empty)', m(0xdb, 3, OUT), 'none', 0)
const TRANS: Array<[string, number[], number?]> = [
  ['f2xm1', [0xd9, 0xf0], 0x3ffe],
  ['fyl2x', [0xd9, 0xf1]],
  ['fptan', [0xd9, 0xf2], 0x3fff + 62],
  ['fpatan', [0xd9, 0xf3]],
  ['fyl2xp1', [0xd9, 0xf9], 0x3ffc],
  ['fsincos', [0xd9, 0xfb], 0x3fff + 62],
  ['fsin', [0xd9, 0xfe], 0x3fff + 62],
  ['fcos', [0xd9, 0xff], 0x3fff + 62],
]
for (const [name, body, maxExpA] of TRANS)
  forms.push({ name, body, mem: 'none', loads: 2, maxExpA, approx: true })
// Random chains of register-stack instructions (TOP, tags, pops and pushes interacting).
const POOL: number[][] = [
  [0xd8, 0xc1],
  [0xd8, 0xe2],
  [0xdc, 0xca],
  [0xde, 0xc1],
  [0xde, 0xf9],
  [0xde, 0xe9],
  [0xd9, 0xc9],
  [0xd9, 0xca],
  [0xd9, 0xc1],
  [0xd9, 0xc2],
  [0xdd, 0xd9],
  [0xdd, 0xda],
  [0xdd, 0xc1],
  [0xdf, 0xc0],
  [0xd9, 0xf6],
  [0xd9, 0xf7],
  [0xd9, 0xe0],
  [0xd9, 0xfa],
  [0xd9, 0xfc],
  [0xd9, 0xfd],
  [0xd9, 0xf8],
  [0xd9, 0xf4],
  [0xd9, 0xe8],
  [0xd9, 0xee],
  [0xdb, 0xf1],
  [0xdf, 0xe9],
  [0xda, 0xe9],
  [0xda, 0xc1],
  [0xdb, 0xd2],
  [0xd9, 0xe5],
  [0xde, 0xd9],
  [0xdb, 0xea],
  [0xda, 0xca],
  [0xda, 0xd9],
  [0xdb, 0xe2],
  [0xd9, 0xeb],
  [0xd9, 0xe1],
  [0xd9, 0xf5],
  [0xd9, 0xcb],
  [0xdd, 0xd8],
  [0xdd, 0xd3],
  [0xd8, 0xf9],
  [0xdc, 0xe3],
]
{
  const cr = new Rng(4242)
  for (let n = 0; n < 150; n++) {
    const body: number[] = []
    const len = 3 + cr.int(8)
    for (let k = 0; k < len; k++) body.push(...POOL[cr.int(POOL.length)])
    add(`chain ${n}`, body, 'none', cr.int(3) === 0 ? 8 : 2)
  }
}
for (let i = 0; i < 7; i++) add(`fld const ${i}`, [0xd9, 0xe8 + i], 'none', 1)
for (let k = 0; k < 8; k++) add(`fcmov ${k}`, [k < 4 ? 0xda : 0xdb, 0xc1 | ((k & 3) << 3)])

// ---------------------------------------------------------------- random values

function f80(r: Rng): [number, bigint] {
  const s = r.int(2) << 15
  const sig = r.u64() | (1n << 63n)
  switch (r.int(16)) {
    case 0:
      return [s, 0n]
    case 1:
      return [s | 0x7fff, 1n << 63n]
    case 2:
      return [s | 0x7fff, sig | (1n << 62n)] // QNaN
    case 3:
      return [s | 0x7fff, (sig & ~(1n << 62n)) | 1n] // SNaN
    case 4:
      return [s, r.u64() >> BigInt(r.int(64))] // denormal
    case 5: // small integers and halves
      return [s | (0x3fff + r.int(6)), (r.u64() | (1n << 63n)) & ~((1n << BigInt(60 - r.int(4))) - 1n)]
    case 6:
      return [s | (0x3fff + r.int(3) - 1), 1n << 63n]
    case 7:
      return [s | (r.int(2) ? 1 + r.int(80) : 0x7ffe - r.int(80)), sig]
    case 8: {
      // round ties at 24 and 53 bits
      const k = BigInt([39, 10, 11, 40][r.int(4)])
      return [s | (0x3fff + r.int(40) - 20), (sig & ~((1n << (k + 1n)) - 1n)) | (1n << k)]
    }
    default:
      return [s | (0x3fff + r.int(140) - 70), sig]
  }
}

function memOperand(r: Rng, kind: MemKind, data: Uint8Array): void {
  const v = new DataView(data.buffer)
  switch (kind) {
    case 'f32': {
      const e = [0, 0xff, 0x7f, 0x80, 0x3f, 1, 0xfe][r.int(7)]
      const bits = (r.int(2) << 31) | (e << 23) | r.int(1 << 23)
      v.setUint32(MEM, r.int(3) === 0 ? Number(r.u64() & 0xffffffffn) : bits >>> 0, true)
      break
    }
    case 'f64': {
      const e = BigInt([0, 0x7ff, 0x3ff, 0x400, 1, 0x7fe, 0x3f0 + r.int(32)][r.int(7)])
      const bits = (BigInt(r.int(2)) << 63n) | (e << 52n) | (r.u64() >> BigInt(12 + r.int(3) * 20))
      v.setBigUint64(MEM, r.int(4) === 0 ? r.u64() : bits, true)
      break
    }
    case 'i16':
    case 'i32':
    case 'i64':
      v.setBigUint64(
        MEM,
        r.int(2) ? r.u64() >> BigInt(r.int(64)) : BigInt.asUintN(64, -(r.u64() >> BigInt(r.int(64)))),
        true,
      )
      if (r.int(8) === 0) v.setBigUint64(MEM, [0n, 0x8000n, 0x80000000n, 1n << 63n, 0xffffn][r.int(5)], true)
      break
    case 'bcd': {
      let lo = 0n
      for (let i = 0; i < 16; i++) lo |= BigInt(r.int(10)) << BigInt(4 * i)
      v.setBigUint64(MEM, lo >> BigInt(4 * r.int(16)), true)
      v.setUint16(MEM + 8, (r.int(2) << 15) | (r.int(3) ? r.int(10) | (r.int(10) << 4) : 0), true)
      break
    }
    case 'env':
      // A plausible environment: control word, status, tags (valid/zero/special/empty patterns).
      v.setUint32(MEM, 0x0300 | (r.int(16) << 8) | 0x3f | 0x40, true)
      v.setUint32(MEM + 4, r.int(0x10000) & ~0x8080 & ~0x7f, true)
      v.setUint32(MEM + 8, r.int(0x10000), true)
      break
  }
}

interface Case {
  form: string
  code: Uint8Array
  data: Uint8Array
  rflags: bigint
  ignore: Array<[number, number]>
  approx: boolean
}

function makeCase(f: Form, r: Rng): Case {
  const data = new Uint8Array(PAGE)
  const v = new DataView(data.buffer)
  let [sa, ma] = f80(r)
  const [sb, mb] = f80(r)
  if (f.maxExpA !== undefined && (sa & 0x7fff) > f.maxExpA && (sa & 0x7fff) !== 0x7fff)
    sa = (sa & 0x8000) | (f.maxExpA - r.int(8))
  v.setBigUint64(0, ma, true)
  v.setUint16(8, sa, true)
  v.setBigUint64(16, mb, true)
  v.setUint16(24, sb, true)
  // Exceptions masked; random PC (including the reserved 01) and RC.
  v.setUint16(CW, 0x037f & ~0x0f00, true)
  v.setUint16(CW, (0x007f | (r.int(4) << 8) | (r.int(4) << 10) | 0x40) & 0xffff, true)
  memOperand(r, f.mem, data)
  const loads = f.loads ?? 2
  const code: number[] = [...PRE_CW]
  if (loads === 1) code.push(...LOAD_A)
  else if (loads === 2) code.push(...LOAD_B, ...LOAD_A)
  else if (loads === 8) for (let k = 0; k < 8; k++) code.push(...(k & 1 ? LOAD_A : LOAD_B))
  code.push(...f.body, ...FXSAVE)
  const ignore: Array<[number, number]> = [
    [FX + 6, FX + 24],
    [FX + 28, FX + 32],
  ]
  if (f.mem === 'env' || f.mem === 'save') ignore.push([OUT + 12, OUT + 28])
  return {
    form: f.name,
    code: new Uint8Array(code),
    data,
    rflags: BigInt(r.int(0x100) & 0xd5) | 2n,
    ignore,
    approx: f.approx === true,
  }
}

// ---------------------------------------------------------------- running

const RESULT_SIZE = 16 + 128 + 24 + 8 + 256 + PAGE

function runNative(
  cases: Case[],
): Array<{ gpr: bigint[]; rflags: bigint; vector: number; data: Uint8Array }> {
  const bufs = cases.map((c) => {
    const buf = Buffer.alloc(8 + 136 + 8 + 256 + PAGE + c.code.length)
    buf.writeUInt32LE(0x43455353, 0)
    buf.writeUInt32LE(c.code.length, 4)
    buf.writeBigUInt64LE(DATA, 8 + 8 * 3)
    buf.writeBigUInt64LE(c.rflags, 136)
    buf.writeUInt32LE(0x1f80, 144)
    buf.set(c.data, 152 + 256)
    buf.set(c.code, 152 + 256 + PAGE)
    return buf
  })
  const res = spawnSync(ORACLE, [], {
    input: Buffer.concat(bufs),
    maxBuffer: RESULT_SIZE * cases.length + 4096,
  })
  if (res.error) throw res.error
  if (res.status !== 0) throw new Error(`sse-oracle exited with ${res.status}: ${res.stderr}`)
  const out = res.stdout
  return cases.map((_, k) => {
    const o = k * RESULT_SIZE
    const gpr: bigint[] = []
    for (let i = 0; i < 16; i++) gpr.push(out.readBigUInt64LE(o + 16 + 8 * i))
    return {
      gpr,
      rflags: out.readBigUInt64LE(o + 144),
      vector: out.readInt32LE(o + 4),
      data: new Uint8Array(out.subarray(o + 432, o + 432 + PAGE)),
    }
  })
}

/** For transcendentals: drop C1 and PE, and make registers 1 ulp apart compare equal. */
function approxNormalise(nd: Uint8Array, ed: Uint8Array): void {
  for (const d of [nd, ed]) {
    d[FX + 2] &= ~0x20
    d[FX + 3] &= ~0x02
  }
  const nv = new DataView(nd.buffer, nd.byteOffset)
  const ev = new DataView(ed.buffer, ed.byteOffset)
  for (let i = 0; i < 8; i++) {
    const o = FX + 32 + 16 * i
    const a = nv.getBigUint64(o, true)
    const b = ev.getBigUint64(o, true)
    const diff = a > b ? a - b : b - a
    if (nv.getUint16(o + 8, true) === ev.getUint16(o + 8, true) && diff <= 1n) ev.setBigUint64(o, a, true)
  }
}

function hex(b: Uint8Array, from: number, to: number): string {
  return Array.from(b.subarray(from, to), (x) => x.toString(16).padStart(2, '0')).join('')
}

describe.skipIf(!available)('x87 differential (host CPU vs emulator)', () => {
  const active = forms.filter((f) => !FILTER || FILTER.test(f.name))
  const r = new Rng(SEED)
  const cases = active.flatMap((f) => Array.from({ length: CASES }, () => makeCase(f, r)))
  let nativeRuns: ReturnType<typeof runNative> | null = null
  const nativeResults = () => {
    nativeRuns ??= runNative(cases)
    return nativeRuns
  }

  it('runs the native side', () => {
    expect(nativeResults().length).toBe(cases.length)
  })

  for (const jit of [Number.POSITIVE_INFINITY, 0]) {
    it(`agrees with the host (${jit === 0 ? 'block compiler' : 'interpreter'})`, () => {
      const bad: string[] = []
      const native = nativeResults()
      cases.forEach((c, k) => {
        const n = native[k]
        const gpr = Array.from({ length: 16 }, (_, i) => (i === 3 ? DATA : 0n))
        let e: ReturnType<typeof runFlat>
        try {
          e = runFlat({ code: c.code, gpr, rflags: c.rflags, data: c.data }, 1000, jit)
        } catch (err) {
          bad.push(`${c.form}: ${err}`)
          return
        }
        const nd = n.data.slice()
        const ed = e.data.slice()
        for (const [a, b] of c.ignore) {
          nd.fill(0, a, b)
          ed.fill(0, a, b)
        }
        if (c.approx && !process.env.X86EMU_X87_EXACT) approxNormalise(nd, ed)
        const diffs: string[] = []
        if ((n.vector >= 0 ? n.vector : null) !== (e.fault ? e.fault.vector : null))
          diffs.push(`fault native ${n.vector} emu ${e.fault?.vector}`)
        if ((n.rflags & COMPARED_RFLAGS_MASK) !== (e.rflags & COMPARED_RFLAGS_MASK))
          diffs.push(`rflags native ${n.rflags.toString(16)} emu ${e.rflags.toString(16)}`)
        if (n.gpr[0] !== e.gpr[0])
          diffs.push(`rax native ${n.gpr[0].toString(16)} emu ${e.gpr[0].toString(16)}`)
        for (let o = 0; o < PAGE; o += 16) {
          if (hex(nd, o, o + 16) !== hex(ed, o, o + 16))
            diffs.push(`data+${o.toString(16)} native ${hex(nd, o, o + 16)} emu ${hex(ed, o, o + 16)}`)
        }
        if (diffs.length)
          bad.push(
            `${c.form} A=${hex(c.data, 0, 10)} B=${hex(c.data, 16, 26)} M=${hex(c.data, MEM, MEM + 8)} CW=${hex(c.data, CW, CW + 2)}\n    ${diffs.join('\n    ')}`,
          )
      })
      if (bad.length) {
        const by = new Map<string, number>()
        for (const b of bad) by.set(b.split(' A=')[0], (by.get(b.split(' A=')[0]) ?? 0) + 1)
        console.log(
          `${bad.length} mismatches: ${[...by].map(([k, v]) => `${k} ${v}`).join(', ')}\n${bad.slice(0, 40).join('\n')}`,
        )
      }
      expect(bad.length).toBe(0)
    })
  }
})
