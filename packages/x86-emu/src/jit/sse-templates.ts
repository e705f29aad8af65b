// Inline templates for the SSE/SSE2 forms compiled floating-point code runs
// besides add/sub/mul/div sd/pd (templates.ts): sqrtsd, minsd/maxsd, the
// scalar and packed single arithmetic, conversions, unpcklpd/unpckhpd,
// shufps, movss and movd/movq. Data movement is exact bit copying, as the
// closures do. Arithmetic takes sse-ieee.ts's fast-path rule (round to
// nearest with PE set and masked, finite non-denormal operands, a finite
// result above the normal minimum: no flag can change, the JavaScript result
// is the IEEE one) and otherwise runs the instruction's own closure ($OP,
// which the block compiler expands into the closure call), so every other
// case (NaNs, denormals, other rounding, unmasked exceptions) is the
// closure's code, bit for bit.

import type { Instruction } from '../decoder/instruction.js'
import type { MemoryEmitter } from './memory-access.js'

/** Where the block compiler puts the call to the instruction's closure. */
export const OP = '$OP'

/** A template whose code may run the closure (OP): it may fault, and, for stores, write. */
export interface SseTemplate {
  code: string
  mayFault: boolean
  mayWrite: boolean
}

/** MXCSR rounds to nearest with PE set and masked: the SSE fast paths' precondition. */
export const MOOT = '(c.mxcsr&28704)===4128'
/** PE set and masked (rounding control aside): conversions that truncate. */
const PE_MOOT = '(c.mxcsr&4128)===4128'
const MAX_D = '1.7976931348623157e+308'
const MIN_NORMAL_D = '2.2250738585072014e-308'
const MAX_F = '3.4028234663852886e+38'
const MIN_NORMAL_F = '1.1754943508222875e-38'
/** A finite double that is not denormal (inline: a call would box it). */
export const fastD = (a: string) => `(Math.abs(${a})<=${MAX_D}&&(Math.abs(${a})>=${MIN_NORMAL_D}||${a}===0))`
/** A finite double above the normal minimum: a result with no flag to raise but PE. */
export const fastR = (v: string) => `(Math.abs(${v})>${MIN_NORMAL_D}&&Math.abs(${v})<=${MAX_D})`
/** A single (as a double) that is finite and not denormal. */
const fastF = (a: string) => `(Math.abs(${a})<=${MAX_F}&&(Math.abs(${a})>=${MIN_NORMAL_F}||${a}===0))`
/** A single result above the normal minimum and finite. */
const fastRF = (v: string) => `(Math.abs(${v})>${MIN_NORMAL_F}&&Math.abs(${v})<=${MAX_F})`

/** The low double of the r/m operand as `b` (and its bits, for a memory one). */
function lowDouble(insn: Instruction, mem: MemoryEmitter): string {
  if (insn.mod === 3) return `const b=c.xmmD[${2 * insn.rm}];`
  return mem.loadDoubles(insn, 8, ['bl', 'bh'], ['b'])
}

/** sqrtsd (F2 0F 51), minsd (5D), maxsd (5F): the low lane; the upper one is the destination's. */
function scalarDouble(insn: Instruction, mem: MemoryEmitter): SseTemplate | null {
  const D = 2 * insn.reg
  const R = 4 * insn.reg
  const load = lowDouble(insn, mem)
  if (insn.opcode === 0x51)
    return {
      code: `{${load}const v=Math.sqrt(b);if(${MOOT}&&${fastD('b')}&&${fastR('v')})c.xmmD[${D}]=v;else{${OP}}}`,
      mayFault: true,
      mayWrite: false,
    }
  // min/max: no rounding; NaNs and denormals raise flags (the closure). Equal operands, -0 and +0
  // included, give the source: its exact bits.
  const takeA = insn.opcode === 0x5d ? 'a<b' : 'a>b'
  const src =
    insn.mod === 3
      ? `const x=c.xmm;x[${R}]=x[${4 * insn.rm}];x[${R + 1}]=x[${4 * insn.rm + 1}];`
      : `const x=c.xmm;x[${R}]=bl;x[${R + 1}]=bh;`
  return {
    code: `{${load}const a=c.xmmD[${D}];if(${fastD('a')}&&${fastD('b')}){if(!(${takeA})){${src}}}else{${OP}}}`,
    mayFault: true,
    mayWrite: false,
  }
}

/** The single-precision lanes of one r/m operand as doubles s0.. (a memory one read whole first). */
function singles(insn: Instruction, mem: MemoryEmitter, lanes: number, names: string): string {
  const q = 'const q=rt.qi,qf=rt.qf;'
  const conv = (src: string[]) => src.map((s, k) => `q[0]=${s};const ${names}${k}=qf[0];`).join('')
  if (insn.mod === 3) {
    const M = 4 * insn.rm
    return `${q}${conv(Array.from({ length: lanes }, (_, k) => `c.xmm[${M + k}]`))}`
  }
  if (lanes === 1) return `${mem.load(insn, 4, ['m0'])}${q}${conv(['m0'])}`
  return `${mem.load(insn, 16, ['m0', 'm1', 'm2', 'm3'], true)}${q}${conv(['m0', 'm1', 'm2', 'm3'])}`
}

const ARITH_JS: Record<number, string> = { 88: '+', 89: '*', 92: '-', 94: '/' }

/** addss/mulss/subss/divss (F3) and addps/mulps/subps/divps (no prefix). */
function singleArith(insn: Instruction, mem: MemoryEmitter): SseTemplate | null {
  const js = ARITH_JS[insn.opcode]
  if (js === undefined) return null
  const lanes = insn.mandatoryPrefix === 0xf3 ? 1 : 4
  const R = 4 * insn.reg
  let code = `{${singles(insn, mem, lanes, 'b')}const x=c.xmm;`
  const checks: string[] = [MOOT]
  for (let k = 0; k < lanes; k++) {
    code += `q[0]=x[${R + k}];const a${k}=qf[0],v${k}=Math.fround(a${k}${js}b${k});`
    checks.push(fastF(`a${k}`), fastF(`b${k}`), fastRF(`v${k}`))
  }
  let write = ''
  for (let k = 0; k < lanes; k++) write += `qf[0]=v${k};x[${R + k}]=q[0];`
  return { code: `${code}if(${checks.join('&&')}){${write}}else{${OP}}}`, mayFault: true, mayWrite: false }
}

/** cvtsi2sd (F2 0F 2A): exact for 32-bit sources and 64-bit ones below 2^53 in magnitude. */
function cvtsi2sd(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const D = 2 * insn.reg
  const wide = insn.rexW
  const load =
    insn.mod === 3
      ? `const lo=r[${2 * insn.rm}]${wide ? `,hi=r[${2 * insn.rm + 1}]` : ''};`
      : wide
        ? mem.load(insn, 8, ['lo', 'hi'])
        : mem.load(insn, 4, ['lo'])
  if (!wide) return { code: `{${load}c.xmmD[${D}]=lo;}`, mayFault: insn.mod !== 3, mayWrite: false }
  return {
    code: `{${load}if(hi>=-2097152&&hi<2097152)c.xmmD[${D}]=hi*4294967296+(lo>>>0);else{${OP}}}`,
    mayFault: true,
    mayWrite: false,
  }
}

/** cvttsd2si (F2 0F 2C): truncation; in range and PE already set and masked, nothing else can change. */
function cvttsd2si(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const G = 2 * insn.reg
  const wide = insn.rexW
  const range = wide ? 'v>=-9223372036854775808&&v<9223372036854775808' : 'v>=-2147483648&&v<2147483648'
  const write = wide
    ? `const h=Math.floor(v/4294967296);r[${G}]=(v-h*4294967296)|0;r[${G + 1}]=h|0;`
    : `r[${G}]=v|0;r[${G + 1}]=0;`
  return {
    code: `{${lowDouble(insn, mem)}const v=Math.trunc(b);if(${PE_MOOT}&&${range}){${write}}else{${OP}}}`,
    mayFault: true,
    mayWrite: false,
  }
}

/** cvtsd2ss (F2 0F 5A): the low single; the destination's other lanes stay. */
function cvtsd2ss(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const R = 4 * insn.reg
  return {
    code: `{${lowDouble(insn, mem)}const v=Math.fround(b);if(${MOOT}&&${fastD('b')}&&${fastRF('v')}){rt.qf[0]=v;c.xmm[${R}]=rt.qi[0];}else{${OP}}}`,
    mayFault: true,
    mayWrite: false,
  }
}

/** unpcklpd / unpckhpd (66 0F 14 / 15): a memory source is read whole and must be aligned. */
function unpckpd(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const R = 4 * insn.reg
  const high = insn.opcode === 0x15
  let load: string
  if (insn.mod === 3) {
    const M = 4 * insn.rm
    load = `const x=c.xmm,s0=x[${M}],s1=x[${M + 1}],s2=x[${M + 2}],s3=x[${M + 3}];`
  } else load = `${mem.load(insn, 16, ['s0', 's1', 's2', 's3'], true)}const x=c.xmm;`
  const code = high
    ? `x[${R}]=x[${R + 2}];x[${R + 1}]=x[${R + 3}];x[${R + 2}]=s2;x[${R + 3}]=s3;`
    : `x[${R + 2}]=s0;x[${R + 3}]=s1;`
  return { code: `{${load}${code}}`, mayFault: insn.mod !== 3, mayWrite: false }
}

/** shufps (0F C6): two dwords of the destination, two of the source. */
function shufps(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const R = 4 * insn.reg
  const k = insn.immediate & 0xff
  let load: string
  if (insn.mod === 3) {
    const M = 4 * insn.rm
    load = `const x=c.xmm,s0=x[${M}],s1=x[${M + 1}],s2=x[${M + 2}],s3=x[${M + 3}];`
  } else load = `${mem.load(insn, 16, ['s0', 's1', 's2', 's3'], true)}const x=c.xmm;`
  const d = (i: number) => `x[${R + i}]`
  return {
    code: `{${load}const d0=${d(k & 3)},d1=${d((k >> 2) & 3)};x[${R}]=d0;x[${R + 1}]=d1;x[${R + 2}]=s${(k >> 4) & 3};x[${R + 3}]=s${(k >> 6) & 3};}`,
    mayFault: insn.mod !== 3,
    mayWrite: false,
  }
}

/** movss (F3 0F 10 / 11): a load from memory zeroes the upper lanes; between registers only lane 0 moves. */
function movss(insn: Instruction, mem: MemoryEmitter): SseTemplate {
  const R = 4 * insn.reg
  const store = insn.opcode === 0x11
  if (insn.mod === 3) {
    const [d, s] = store ? [4 * insn.rm, R] : [R, 4 * insn.rm]
    return { code: `c.xmm[${d}]=c.xmm[${s}];`, mayFault: false, mayWrite: false }
  }
  if (store) return { code: `{${mem.store(insn, 4, [`c.xmm[${R}]`])}}`, mayFault: true, mayWrite: true }
  return {
    code: `{${mem.load(insn, 4, ['v'])}const x=c.xmm;x[${R}]=v;x[${R + 1}]=0;x[${R + 2}]=0;x[${R + 3}]=0;}`,
    mayFault: true,
    mayWrite: false,
  }
}

/** movd/movq between XMM registers and GPRs or memory (66 0F 6E, 66 0F 7E, F3 0F 7E, 66 0F D6). */
function movdq(insn: Instruction, mem: MemoryEmitter): SseTemplate | null {
  const p = insn.mandatoryPrefix
  const R = 4 * insn.reg
  const M = 4 * insn.rm
  const zeroUpper = (d: number) => `x[${d + 2}]=0;x[${d + 3}]=0;`
  if (insn.opcode === 0x6e && p === 0x66) {
    const wide = insn.rexW
    if (insn.mod === 3) {
      const S = 2 * insn.rm
      return {
        code: `{const x=c.xmm;x[${R}]=r[${S}];x[${R + 1}]=${wide ? `r[${S + 1}]` : '0'};${zeroUpper(R)}}`,
        mayFault: false,
        mayWrite: false,
      }
    }
    const load = wide ? mem.load(insn, 8, ['l', 'h']) : mem.load(insn, 4, ['l'])
    return {
      code: `{${load}const x=c.xmm;x[${R}]=l;x[${R + 1}]=${wide ? 'h' : '0'};${zeroUpper(R)}}`,
      mayFault: true,
      mayWrite: false,
    }
  }
  if (insn.opcode === 0x7e && p === 0x66) {
    const wide = insn.rexW
    if (insn.mod === 3) {
      const G = 2 * insn.rm
      return {
        code: `r[${G}]=c.xmm[${R}];r[${G + 1}]=${wide ? `c.xmm[${R + 1}]` : '0'};`,
        mayFault: false,
        mayWrite: false,
      }
    }
    const store = wide
      ? mem.store(insn, 8, [`c.xmm[${R}]`, `c.xmm[${R + 1}]`])
      : mem.store(insn, 4, [`c.xmm[${R}]`])
    return { code: `{${store}}`, mayFault: true, mayWrite: true }
  }
  if (insn.opcode === 0x7e && p === 0xf3) {
    const load = insn.mod === 3 ? `const l=c.xmm[${M}],h=c.xmm[${M + 1}];` : mem.load(insn, 8, ['l', 'h'])
    return {
      code: `{${load}const x=c.xmm;x[${R}]=l;x[${R + 1}]=h;${zeroUpper(R)}}`,
      mayFault: insn.mod !== 3,
      mayWrite: false,
    }
  }
  if (insn.opcode === 0xd6 && p === 0x66) {
    if (insn.mod === 3)
      return {
        code: `{const x=c.xmm,l=x[${R}],h=x[${R + 1}];x[${M}]=l;x[${M + 1}]=h;${zeroUpper(M)}}`,
        mayFault: false,
        mayWrite: false,
      }
    return {
      code: `{${mem.store(insn, 8, [`c.xmm[${R}]`, `c.xmm[${R + 1}]`])}}`,
      mayFault: true,
      mayWrite: true,
    }
  }
  return null
}

/** The template for one of these forms (two-byte map, legacy encoding), or null. */
export function sseTemplate(insn: Instruction, mem: MemoryEmitter): SseTemplate | null {
  const o = insn.opcode
  const p = insn.mandatoryPrefix
  switch (o) {
    case 0x51:
    case 0x5d:
    case 0x5f:
      return p === 0xf2 ? scalarDouble(insn, mem) : null
    case 0x58:
    case 0x59:
    case 0x5c:
    case 0x5e:
      return p === 0xf3 || p === 0 ? singleArith(insn, mem) : null
    case 0x2a:
      return p === 0xf2 ? cvtsi2sd(insn, mem) : null
    case 0x2c:
      return p === 0xf2 ? cvttsd2si(insn, mem) : null
    case 0x5a:
      return p === 0xf2 ? cvtsd2ss(insn, mem) : null
    case 0x14:
    case 0x15:
      return p === 0x66 ? unpckpd(insn, mem) : null
    case 0xc6:
      return p === 0 ? shufps(insn, mem) : null
    case 0x10:
    case 0x11:
      return p === 0xf3 ? movss(insn, mem) : null
    case 0x6e:
    case 0x7e:
    case 0xd6:
      return movdq(insn, mem)
  }
  return null
}
