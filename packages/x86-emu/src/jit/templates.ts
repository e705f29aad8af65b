// JavaScript templates for the hottest instruction forms. Each returns the
// source of one instruction's effect inside a block function, or null to
// fall back to the interpreter's compiled closure for that instruction.
//
// Generated code sees: c (the Cpu), r (c.r), ops (the block's closures),
// rt (runtime helpers), t (a scratch number). Semantics must equal the
// closures in ../exec exactly: the differential tests run both.

import { FK_ADC, FK_ADD, FK_DEC, FK_EAGER, FK_INC, FK_LOGIC, FK_SBB, FK_SUB, S32, S64 } from '../cpu/flags.js'
import type { Instruction } from '../decoder/instruction.js'
import { memOperand } from '../exec/operands.js'
import { DIRECT, type MemoryEmitter } from './memory-access.js'
import { fastD, fastR, MOOT, sseTemplate } from './sse-templates.js'

/** How an instruction uses the six arithmetic flags. */
export enum FlagUse {
  /** Neither reads nor writes them. */
  None = 0,
  /** Reads some (jcc, cmovcc, adc/sbb, inc/dec's CF). */
  Read = 1,
  /** Overwrites all six without reading any: the flag state after it does not depend on the one before. */
  Write = 2,
}

export interface Template {
  code: string
  /** May raise a fault: the block function records the instruction index first. */
  mayFault: boolean
  /** May write memory (self-modifying code ends the block after it). */
  mayWrite: boolean
  /** None when left out. */
  flagUse?: FlagUse
  /**
   * The flag update of a FlagUse.Write instruction, run after code. The block
   * compiler leaves it out where a later instruction overwrites the flags
   * before anything can observe them (see block-compiler.ts).
   */
  flags?: string
  /**
   * The same update deferred, for eager flags: a pseudo lazy kind recording
   * the result and CF|OF, which flag-locals.ts turns into eager flags only
   * where they are observed (c.fop -2 for a 32-bit result, -1 for 64-bit).
   */
  pseudo?: string
}

const TWO_32 = 4294967296

/** Where a template's flag update goes inside its code when it must share the operation's scope. */
export const FLAGS = '/*FLAGS*/'

function lazy32(fop: number, a: string, b: string, v: string): string {
  return `c.fop=${fop};c.fa=${a};c.fb=${b};c.fr=${v};`
}
function lazy64(fop: number): string {
  return `c.fop=${fop};c.fa=a;c.fah=ah;c.fb=b;c.fbh=bh;c.fr=v;c.frh=vh;`
}

const reg = (insn: Instruction) => insn.reg
const isLegacy = (insn: Instruction) => insn.encoding === 'legacy'

/**
 * ALU kinds the templates inline, as statements in a block: the operation
 * (a, b and for 64-bit ah, bh defined before it) and its lazy flag update.
 * adc/sbb read CF, so their flag update is part of the operation.
 */
function aluBody(
  kind: number,
  size: number,
  write: boolean,
  D: number,
): { op: string; flags: string; reads: boolean } | null {
  let body: string
  let lazy: string
  const reads = kind === 2 || kind === 3
  if (size === 4) {
    switch (kind) {
      case 0:
        body = 'const v=(a+b)|0;'
        lazy = lazy32(FK_ADD | S32, 'a', 'b', 'v')
        break
      case 2:
        body = 'const ci=rt.getCF(c)?1:0,v=(a+b+ci)|0;'
        lazy = `c.fop=ci?${FK_ADC | S32}:${FK_ADD | S32};c.fa=a;c.fb=b;c.fr=v;`
        break
      case 3:
        body = 'const ci=rt.getCF(c)?1:0,v=(a-b-ci)|0;'
        lazy = `c.fop=ci?${FK_SBB | S32}:${FK_SUB | S32};c.fa=a;c.fb=b;c.fr=v;`
        break
      case 5:
      case 7:
        body = 'const v=(a-b)|0;'
        lazy = lazy32(FK_SUB | S32, 'a', 'b', 'v')
        break
      case 4:
        body = 'const v=a&b;'
        lazy = `c.fop=${FK_LOGIC | S32};c.fr=v;`
        break
      case 1:
        body = 'const v=a|b;'
        lazy = `c.fop=${FK_LOGIC | S32};c.fr=v;`
        break
      case 6:
        body = 'const v=a^b;'
        lazy = `c.fop=${FK_LOGIC | S32};c.fr=v;`
        break
      default:
        return null
    }
    const op = `const a=r[${2 * D}];${body}${write ? `r[${2 * D}]=v;r[${2 * D + 1}]=0;` : ''}`
    return reads ? { op: op + lazy, flags: '', reads } : { op, flags: lazy, reads }
  }
  switch (kind) {
    case 0:
      // The low half's carry and borrow by the sign-bit formulas: int32 operations only.
      body = `const v=(a+b)|0,vh=(ah+bh+(((a&b)|((a|b)&~v))>>>31))|0;`
      lazy = lazy64(FK_ADD | S64)
      break
    case 2:
      body = `const ci=rt.getCF(c)?1:0,s=(a>>>0)+(b>>>0)+ci,v=s|0,vh=(ah+bh+(s>4294967295?1:0))|0;`
      lazy = `c.fop=ci?${FK_ADC | S64}:${FK_ADD | S64};c.fa=a;c.fah=ah;c.fb=b;c.fbh=bh;c.fr=v;c.frh=vh;`
      break
    case 3:
      body = `const ci=rt.getCF(c)?1:0,s=(a>>>0)-(b>>>0)-ci,v=s|0,vh=(ah-bh-(s<0?1:0))|0;`
      lazy = `c.fop=ci?${FK_SBB | S64}:${FK_SUB | S64};c.fa=a;c.fah=ah;c.fb=b;c.fbh=bh;c.fr=v;c.frh=vh;`
      break
    case 5:
    case 7:
      body = `const v=(a-b)|0,vh=(ah-bh-(((~a&b)|(~(a^b)&v))>>>31))|0;`
      lazy = lazy64(FK_SUB | S64)
      break
    case 4:
      body = 'const v=a&b,vh=ah&bh;'
      lazy = `c.fop=${FK_LOGIC | S64};c.fr=v;c.frh=vh;`
      break
    case 1:
      body = 'const v=a|b,vh=ah|bh;'
      lazy = `c.fop=${FK_LOGIC | S64};c.fr=v;c.frh=vh;`
      break
    case 6:
      body = 'const v=a^b,vh=ah^bh;'
      lazy = `c.fop=${FK_LOGIC | S64};c.fr=v;c.frh=vh;`
      break
    default:
      return null
  }
  const op = `const a=r[${2 * D}],ah=r[${2 * D + 1}];${body}${write ? `r[${2 * D}]=v;r[${2 * D + 1}]=vh;` : ''}`
  return reads ? { op: op + lazy, flags: '', reads } : { op, flags: lazy, reads }
}

/** Source operand of a binary op: statements defining b (and bh for 64-bit). */
function srcFromRm(
  insn: Instruction,
  size: number,
  mem: MemoryEmitter,
): { code: string; mem: boolean } | null {
  if (insn.mod === 3) {
    const S = 2 * insn.rm
    return { code: size === 8 ? `const b=r[${S}],bh=r[${S + 1}];` : `const b=r[${S}];`, mem: false }
  }
  return { code: size === 8 ? mem.load(insn, 8, ['b', 'bh']) : mem.load(insn, 4, ['b']), mem: true }
}

function srcImm(insn: Instruction, size: number): string {
  const v = insn.immediate | 0
  return size === 8 ? `const b=${v},bh=${v < 0 ? -1 : 0};` : `const b=${v};`
}

/**
 * An ALU template: the operation and its flag update share one block scope
 * (the flag code reads a, b, v), so the flag code is emitted inside it: see
 * withFlags in block-compiler.ts, which replaces the FLAGS marker.
 */
function aluTemplate(
  src: string,
  kind: number,
  size: number,
  write: boolean,
  D: number,
  mem: boolean,
): Template | null {
  const body = aluBody(kind, size, write, D)
  if (body === null) return null
  return {
    code: `{${src}${body.op}${FLAGS}}`,
    mayFault: mem,
    mayWrite: false,
    flagUse: body.reads ? FlagUse.Read : FlagUse.Write,
    flags: body.flags,
  }
}

function alu(insn: Instruction, mem: MemoryEmitter): Template | null {
  const o = insn.opcode
  const size = insn.operandSize
  if (size !== 4 && size !== 8) return null
  let kind: number
  let D: number
  let src: { code: string; mem: boolean } | null
  if (o < 0x40 && (o & 7) === 1 && insn.mod === 3) {
    kind = o >> 3
    D = insn.rm
    src = {
      code:
        size === 8 ? `const b=r[${2 * insn.reg}],bh=r[${2 * insn.reg + 1}];` : `const b=r[${2 * insn.reg}];`,
      mem: false,
    }
  } else if (o < 0x40 && (o & 7) === 3) {
    kind = o >> 3
    D = reg(insn)
    src = srcFromRm(insn, size, mem)
  } else if (o < 0x40 && (o & 7) === 5) {
    kind = o >> 3
    D = 0
    src = { code: srcImm(insn, size), mem: false }
  } else if ((o === 0x81 || o === 0x83) && insn.mod === 3) {
    kind = insn.reg & 7
    D = insn.rm
    src = { code: srcImm(insn, size), mem: false }
  } else if (o === 0x85) {
    src = srcFromRm(insn, size, mem)
    if (src === null) return null
    return aluTemplate(src.code, 4, size, false, insn.reg, src.mem)
  } else if (o === 0xf7 && (insn.reg & 7) === 0 && insn.mod === 3) {
    return aluTemplate(srcImm(insn, size), 4, size, false, insn.rm, false)
  } else if (o === 0xa9) {
    return aluTemplate(srcImm(insn, size), 4, size, false, 0, false)
  } else return null
  if (src === null) return null
  return aluTemplate(src.code, kind, size, kind !== 7, D, src.mem)
}

function mov(insn: Instruction, mem: MemoryEmitter): Template | null {
  const o = insn.opcode
  const size = insn.operandSize
  if (o === 0x89 || o === 0x8b) {
    if (size !== 4 && size !== 8) return null
    const R = 2 * insn.reg
    if (insn.mod === 3) {
      const [D, S] = o === 0x89 ? [2 * insn.rm, R] : [R, 2 * insn.rm]
      return {
        code: size === 8 ? `r[${D}]=r[${S}];r[${D + 1}]=r[${S + 1}];` : `r[${D}]=r[${S}];r[${D + 1}]=0;`,
        mayFault: false,
        mayWrite: false,
      }
    }
    if (o === 0x8b) {
      return {
        code:
          size === 8
            ? `{${mem.load(insn, 8, ['v', 'vh'])}r[${R}]=v;r[${R + 1}]=vh;}`
            : `{${mem.load(insn, 4, ['v'])}r[${R}]=v;r[${R + 1}]=0;}`,
        mayFault: true,
        mayWrite: false,
      }
    }
    return {
      code: size === 8 ? mem.store(insn, 8, [`r[${R}]`, `r[${R + 1}]`]) : mem.store(insn, 4, [`r[${R}]`]),
      mayFault: true,
      mayWrite: true,
    }
  }
  if ((o === 0x88 || o === 0x8a) && insn.mod !== 3 && (insn.rex !== 0 || insn.reg < 4)) {
    const R = 2 * insn.reg
    if (o === 0x8a)
      return {
        code: `{${mem.load(insn, 1, ['v'])}r[${R}]=(r[${R}]&-256)|v;}`,
        mayFault: true,
        mayWrite: false,
      }
    return { code: mem.store(insn, 1, [`r[${R}]&255`]), mayFault: true, mayWrite: true }
  }
  if (o >= 0xb8 && o <= 0xbf && (size === 4 || size === 8)) {
    const D = 2 * ((o & 7) | (insn.rexB ? 8 : 0))
    if (size === 4)
      return { code: `r[${D}]=${insn.immediate | 0};r[${D + 1}]=0;`, mayFault: false, mayWrite: false }
    const b = BigInt.asUintN(64, insn.immediateSize === 8 ? insn.immediateBig : BigInt(insn.immediate))
    return {
      code: `r[${D}]=${Number(b & 0xffffffffn) | 0};r[${D + 1}]=${Number(b >> 32n) | 0};`,
      mayFault: false,
      mayWrite: false,
    }
  }
  if (o === 0xc7 && (insn.reg & 7) === 0 && (size === 4 || size === 8)) {
    const v = insn.immediate | 0
    const hi = size === 8 && v < 0 ? -1 : 0
    if (insn.mod === 3)
      return { code: `r[${2 * insn.rm}]=${v};r[${2 * insn.rm + 1}]=${hi};`, mayFault: false, mayWrite: false }
    return {
      code: size === 8 ? mem.store(insn, 8, [`${v}`, `${hi}`]) : mem.store(insn, 4, [`${v}`]),
      mayFault: true,
      mayWrite: true,
    }
  }
  if (o === 0x8d && (size === 8 || size === 4)) {
    const m = memOperand(insn)
    const R = 2 * insn.reg
    if (m.ripRelative) {
      const t = insn.address + insn.length + m.displacement
      return {
        code: `r[${R}]=${t | 0};r[${R + 1}]=${size === 8 ? Math.floor(t / TWO_32) | 0 : 0};`,
        mayFault: false,
        mayWrite: false,
      }
    }
    if (insn.addressSize === 4) return null
    const d = m.displacement
    let lo = `${d >>> 0}`
    let hi = `${d < 0 ? -1 : 0}`
    if (m.base >= 0) {
      lo += `+(r[${2 * m.base}]>>>0)`
      hi += `+r[${2 * m.base + 1}]`
    }
    if (m.index >= 0) {
      lo += `+(r[${2 * m.index}]>>>0)*${m.scale}`
      hi += `+r[${2 * m.index + 1}]*${m.scale}`
    }
    if (size === 4) return { code: `r[${R}]=(${lo})|0;r[${R + 1}]=0;`, mayFault: false, mayWrite: false }
    return {
      code: `t=${lo};r[${R + 1}]=(${hi}+Math.floor(t/${TWO_32}))|0;r[${R}]=t|0;`,
      mayFault: false,
      mayWrite: false,
    }
  }
  return null
}

function extend(insn: Instruction, mem: MemoryEmitter): Template | null {
  const size = insn.operandSize
  if (size !== 4 && size !== 8) return null
  const R = 2 * insn.reg
  let srcSize: number
  let signed: boolean
  if (insn.map === 0 && insn.opcode === 0x63) {
    srcSize = 4
    signed = true
  } else if (
    insn.map === 1 &&
    (insn.opcode === 0xb6 || insn.opcode === 0xb7 || insn.opcode === 0xbe || insn.opcode === 0xbf)
  ) {
    srcSize = insn.opcode & 1 ? 2 : 1
    signed = insn.opcode >= 0xbe
  } else return null
  let v: string
  let load = ''
  if (insn.mod === 3) {
    if (srcSize === 1 && insn.rex === 0 && insn.rm >= 4 && insn.rm < 8) return null
    v = srcSize === 4 ? `r[${2 * insn.rm}]` : `(r[${2 * insn.rm}]&${srcSize === 1 ? 255 : 65535})`
  } else {
    load = mem.load(insn, srcSize as 1 | 2 | 4, ['m'])
    v = 'm'
  }
  const sh = 32 - 8 * srcSize
  const val = signed ? (sh === 0 ? v : `((${v}<<${sh})>>${sh})`) : v
  const hi = signed && size === 8 ? `r[${R}]>>31` : '0'
  const code = `r[${R}]=${val};r[${R + 1}]=${hi};`
  return { code: load === '' ? code : `{${load}${code}}`, mayFault: insn.mod !== 3, mayWrite: false }
}

function incDec(insn: Instruction): Template | null {
  if (insn.opcode !== 0xff || insn.mod !== 3 || (insn.reg & 7) > 1) return null
  const size = insn.operandSize
  const dec = (insn.reg & 7) === 1
  const D = 2 * insn.rm
  const fop = (dec ? FK_DEC : FK_INC) | (size === 8 ? S64 : S32)
  if (size === 4) {
    return {
      code: `{c.fcf=rt.getCF(c)?1:0;const a=r[${D}],v=(a${dec ? '-' : '+'}1)|0;r[${D}]=v;r[${D + 1}]=0;${lazy32(fop, 'a', '1', 'v')}}`,
      mayFault: false,
      mayWrite: false,
      flagUse: FlagUse.Read,
    }
  }
  if (size !== 8) return null
  const body = dec ? `const v=(a-1)|0,vh=a===0?(ah-1)|0:ah;` : `const v=(a+1)|0,vh=a===-1?(ah+1)|0:ah;`
  return {
    code: `{c.fcf=rt.getCF(c)?1:0;const a=r[${D}],ah=r[${D + 1}],b=1,bh=0;${body}r[${D}]=v;r[${D + 1}]=vh;${lazy64(fop)}}`,
    mayFault: false,
    mayWrite: false,
    flagUse: FlagUse.Read,
  }
}

function stack(insn: Instruction): Template | null {
  if (insn.operandSize === 2) return null
  const o = insn.opcode
  if (o >= 0x50 && o <= 0x57) {
    const S = 2 * ((o & 7) | (insn.rexB ? 8 : 0))
    return { code: `rt.push64(c,r[${S}],r[${S + 1}]);`, mayFault: true, mayWrite: true }
  }
  if (o >= 0x58 && o <= 0x5f) {
    const D = 2 * ((o & 7) | (insn.rexB ? 8 : 0))
    return { code: `{const v=rt.pop64(c);r[${D}]=v;r[${D + 1}]=c.th;}`, mayFault: true, mayWrite: false }
  }
  return null
}

const ARITH = 0x8d5 // CF PF AF ZF SF OF

/** shl/shr/sar of a register by a constant (C1 /4 /5 /6 /7, D1): flags as shift.ts sets them (AF 0, OF by the count-1 formula). */
function shiftImm(insn: Instruction): Template | null {
  const size = insn.operandSize
  if (insn.mod !== 3 || (size !== 4 && size !== 8)) return null
  const op = insn.reg & 7
  if (op < 4) return null
  const kind = op === 6 ? 4 : op
  const n = (insn.opcode === 0xd1 ? 1 : insn.immediate) & (size === 8 ? 63 : 31)
  if (n === 0) return null
  const D = 2 * insn.rm
  let body: string
  if (size === 4) {
    if (kind === 4) body = `const v=a<<${n},cf=(a>>>${32 - n})&1,of=(v>>>31)^cf;`
    else if (kind === 5) body = `const v=a>>>${n},cf=(a>>>${n - 1})&1,of=((v>>>31)^(v>>>30))&1;`
    else body = `const v=a>>${n},cf=(a>>${n - 1})&1,of=0;`
    return {
      code: `{const a=r[${D}];${body}r[${D}]=v;r[${D + 1}]=0;${FLAGS}}`,
      mayFault: false,
      mayWrite: false,
      flagUse: FlagUse.Write,
      flags: `c.eflags=(c.eflags&${~ARITH})|cf|rt.szp(v,${S32})|(of?2048:0);c.fop=0;`,
      pseudo: 'c.fop=-2;c.fr=v;c.fa=cf|(of?2048:0);',
    }
  }
  if (kind === 4) {
    if (n < 32) body = `const vh=(ah<<${n})|(a>>>${32 - n}),v=a<<${n},cf=(ah>>>${32 - n})&1;`
    else if (n === 32) body = 'const vh=a,v=0,cf=ah&1;'
    else body = `const vh=a<<${n - 32},v=0,cf=(a>>>${64 - n})&1;`
    body += 'const of=(vh>>>31)^cf;'
  } else if (kind === 5) {
    if (n < 32) body = `const v=(a>>>${n})|(ah<<${32 - n}),vh=ah>>>${n},cf=(a>>>${n - 1})&1;`
    else if (n === 32) body = 'const v=ah,vh=0,cf=(a>>>31)&1;'
    else body = `const v=ah>>>${n - 32},vh=0,cf=(ah>>>${n - 33})&1;`
    body += 'const of=((vh>>>31)^(vh>>>30))&1;'
  } else {
    if (n < 32) body = `const v=(a>>>${n})|(ah<<${32 - n}),vh=ah>>${n},cf=(a>>>${n - 1})&1;`
    else if (n === 32) body = 'const v=ah,vh=ah>>31,cf=(a>>>31)&1;'
    else body = `const v=ah>>${n - 32},vh=ah>>31,cf=(ah>>${n - 33})&1;`
    body += 'const of=0;'
  }
  return {
    code: `{const a=r[${D}],ah=r[${D + 1}];${body}r[${D}]=v;r[${D + 1}]=vh;${FLAGS}}`,
    mayFault: false,
    mayWrite: false,
    flagUse: FlagUse.Write,
    flags: `c.eflags=(c.eflags&${~ARITH})|cf|rt.szp64(v,vh)|(of?2048:0);c.fop=0;`,
    pseudo: 'c.fop=-1;c.fr=v;c.frh=vh;c.fa=cf|(of?2048:0);',
  }
}

/** imul r32, r/m32 (0F AF) and imul r32, r/m32, imm (69, 6B): CF=OF when the product does not fit; SF ZF PF from it, AF 0 (as muldiv.ts). */
function imul32(insn: Instruction, mem: MemoryEmitter): Template | null {
  if (insn.operandSize === 8) {
    const src = srcFromRm(insn, 8, mem)
    if (src === null) return null
    const R = 2 * insn.reg
    const x = insn.map === 1 ? `r[${R}],r[${R + 1}]` : `${insn.immediate | 0},${insn.immediate < 0 ? -1 : 0}`
    return {
      code: `{${src.code}r[${R}]=rt.imul64(c,${x},b,bh);r[${R + 1}]=c.th;}`,
      mayFault: src.mem,
      mayWrite: false,
      // imul64 records its operands for lazy flags (cheap): all six follow from them.
      flagUse: FlagUse.Write,
    }
  }
  if (insn.operandSize !== 4) return null
  const src = srcFromRm(insn, 4, mem)
  if (src === null) return null
  const R = 2 * insn.reg
  const a = insn.map === 1 ? `r[${R}]` : `${insn.immediate | 0}`
  return {
    code: `{${src.code}const x=${a},v=Math.imul(x,b);r[${R}]=v;r[${R + 1}]=0;${FLAGS}}`,
    mayFault: src.mem,
    mayWrite: false,
    flagUse: FlagUse.Write,
    flags: `c.eflags=(c.eflags&${~ARITH})|rt.szp(v,${S32})|(x*b!==v?2049:0);c.fop=0;`,
    pseudo: 'c.fop=-2;c.fr=v;c.fa=x*b!==v?2049:0;',
  }
}

const SUB64: Record<number, string> = {
  2: '(c.fah>>>0<c.fbh>>>0||(c.fah===c.fbh&&c.fa>>>0<c.fb>>>0))',
  3: '(c.fah>>>0>c.fbh>>>0||(c.fah===c.fbh&&c.fa>>>0>=c.fb>>>0))',
  6: '(c.fah>>>0<c.fbh>>>0||(c.fah===c.fbh&&c.fa>>>0<=c.fb>>>0))',
  7: '(c.fah>>>0>c.fbh>>>0||(c.fah===c.fbh&&c.fa>>>0>c.fb>>>0))',
  12: '(c.fah<c.fbh||(c.fah===c.fbh&&c.fa>>>0<c.fb>>>0))',
  13: '(c.fah>c.fbh||(c.fah===c.fbh&&c.fa>>>0>=c.fb>>>0))',
  14: '(c.fah<c.fbh||(c.fah===c.fbh&&c.fa>>>0<=c.fb>>>0))',
  15: '(c.fah>c.fbh||(c.fah===c.fbh&&c.fa>>>0>c.fb>>>0))',
}
const SUB32: Record<number, string> = {
  2: 'c.fa>>>0<c.fb>>>0',
  3: 'c.fa>>>0>=c.fb>>>0',
  6: 'c.fa>>>0<=c.fb>>>0',
  7: 'c.fa>>>0>c.fb>>>0',
  12: 'c.fa<c.fb',
  13: 'c.fa>=c.fb',
  14: 'c.fa<=c.fb',
  15: 'c.fa>c.fb',
}
/** Condition expression for cc, with the cmp/sub fast paths of flags.ts inline. */
export function condExpr(cc: number): string {
  const z = `(c.fop===0?(c.eflags&64)!==0:(c.fop&3)===3?(c.fr|c.frh)===0:c.fr===0)`
  if (cc === 4) return z
  if (cc === 5) return `!${z}`
  if (SUB64[cc])
    return `(c.fop===${FK_SUB | S64}?${SUB64[cc]}:c.fop===${FK_SUB | S32}?${SUB32[cc]}:rt.cond(c,${cc}))`
  return `rt.cond(c,${cc})`
}

/**
 * Condition expression for cc when the block compiler knows the lazy-flag
 * kind the last flag writer left (Cpu.fop, a constant in its code): the
 * branch of condExpr that kind takes, without the tests; null where only
 * condExpr's general form (or flags.ts) applies.
 */
export function condExprKnown(cc: number, fop: number): string | null {
  if (fop === -1 || fop === -2) return pseudoCond(cc, fop === -1)
  const kind = fop & ~3
  const size = fop & 3
  if (cc === 4 || cc === 5) {
    let z: string
    if (fop === FK_EAGER) z = '(c.eflags&64)!==0'
    else if (kind === FK_ADD || kind === FK_SUB || kind === FK_LOGIC || kind === FK_INC || kind === FK_DEC)
      z = size === S64 ? '(c.fr|c.frh)===0' : size === S32 ? 'c.fr===0' : ''
    else return null
    if (z === '') return null
    return cc === 4 ? `(${z})` : `!(${z})`
  }
  if (kind !== FK_SUB || !SUB64[cc]) return null
  if (size === S64) return SUB64[cc]
  if (size === S32) return `(${SUB32[cc]})`
  return null
}

/** Condition cc after a pseudo kind (Template.pseudo): CF and OF in fa, the result in fr (and frh); null for the parity conditions. */
function pseudoCond(cc: number, wide: boolean): string | null {
  const zf = wide ? '(c.fr|c.frh)===0' : 'c.fr===0'
  const sf = wide ? 'c.frh<0' : 'c.fr<0'
  const cf = '(c.fa&1)!==0'
  const of = '(c.fa&2048)!==0'
  const lt = `(${sf})!==(${of})`
  const base = [of, cf, zf, `${cf}||${zf}`, sf, null, lt, `${zf}||${lt}`][cc >> 1]
  if (base === null) return null
  return (cc & 1) !== 0 ? `!(${base})` : `(${base})`
}

function branch(insn: Instruction): Template | null {
  // ret (C3, C2 imm16): its target comes from the stack, so a block ends with it; one whose
  // return lands on the block's own start loops inside the block function (block-compiler.ts).
  if (insn.map === 0 && (insn.opcode === 0xc3 || insn.opcode === 0xc2) && insn.operandSize !== 2)
    return {
      code: `rt.ret(c,${insn.opcode === 0xc2 ? insn.immediate & 0xffff : 0});`,
      mayFault: true,
      mayWrite: false,
    }
  const next = insn.address + insn.length
  const t = insn.branchTarget
  const canonical = (v: number) => v >= -0x8000_0000_0000 && v < 0x8000_0000_0000
  if (t === null || !canonical(t) || insn.operandSize === 2) return null
  if (
    (insn.map === 0 && insn.opcode >= 0x70 && insn.opcode <= 0x7f) ||
    (insn.map === 1 && insn.opcode >= 0x80 && insn.opcode <= 0x8f)
  ) {
    return {
      code: `c.rip=${condExpr(insn.opcode & 15)}?${t}:${next};`,
      mayFault: false,
      mayWrite: false,
      flagUse: FlagUse.Read,
    }
  }
  if (insn.map === 0 && (insn.opcode === 0xe9 || insn.opcode === 0xeb))
    return { code: `c.rip=${t};`, mayFault: false, mayWrite: false }
  if (insn.map === 0 && insn.opcode === 0xe8) {
    return {
      code: `rt.push64(c,${next | 0},${Math.floor(next / TWO_32) | 0});c.rip=${t};`,
      mayFault: true,
      mayWrite: true,
    }
  }
  return null
}

/** cmovcc between registers: a 32-bit destination is zero-extended even when the condition is false. */
function cmov(insn: Instruction): Template | null {
  const size = insn.operandSize
  if (insn.mod !== 3 || (size !== 4 && size !== 8)) return null
  const R = 2 * insn.reg
  const S = 2 * insn.rm
  const cond = condExpr(insn.opcode & 15)
  const code =
    size === 8
      ? `if(${cond}){r[${R}]=r[${S}];r[${R + 1}]=r[${S + 1}];}`
      : `if(${cond})r[${R}]=r[${S}];r[${R + 1}]=0;`
  return { code, mayFault: false, mayWrite: false, flagUse: FlagUse.Read }
}

/**
 * SSE data movement between registers and memory, and pxor/xorps/xorpd
 * between registers (exactly as sse-move.ts and the logic closures do; no
 * flags, no MXCSR). Loads read all 16 (or 8) bytes before any register
 * changes; 128-bit stores probe all 16 bytes first (rt.w128); the aligned
 * forms raise #GP(0) for a misaligned address (rt.a16).
 */
/** 0F 58, 59, 5C, 5E to sse-ieee.ts's operation numbers (ADD, MUL, SUB, DIV). */
const ARITH_D: Record<number, [op: number, js: string]> = {
  88: [0, '+'],
  89: [2, '*'],
  92: [1, '-'],
  94: [3, '/'],
}

/**
 * addsd/subsd/mulsd/divsd (F2) and their pd forms (66). Inline: when MXCSR
 * rounds to nearest with PE set and masked, and every operand is finite and
 * not denormal and every result finite and above the normal minimum, no flag
 * can change and JavaScript's double result is the IEEE one (sse-ieee.ts's
 * own fast path). Anything else goes through rt.fpd, the closure's code.
 */
function fpArithDouble(insn: Instruction, mem: MemoryEmitter): Template | null {
  const e = ARITH_D[insn.opcode]
  const p = insn.mandatoryPrefix
  if (e === undefined || (p !== 0xf2 && p !== 0x66)) return null
  const [op, js] = e
  const packed = p === 0x66
  const R = 4 * insn.reg
  const D = 2 * insn.reg
  const M = 4 * insn.rm
  let load: string
  if (insn.mod === 3) {
    load = packed
      ? `const x=c.xmm,l0=x[${M}],h0=x[${M + 1}],l1=x[${M + 2}],h1=x[${M + 3}],b0=X[${2 * insn.rm}],b1=X[${2 * insn.rm + 1}];`
      : `const x=c.xmm,l0=x[${M}],h0=x[${M + 1}],l1=0,h1=0,b0=X[${2 * insn.rm}];`
  } else {
    load = packed
      ? mem.loadDoubles(insn, 16, ['l0', 'h0', 'l1', 'h1'], ['b0', 'b1'], true)
      : `${mem.loadDoubles(insn, 8, ['l0', 'h0'], ['b0'])}const l1=0,h1=0;`
  }
  const slow = `rt.fpd(c,${op},${R},${packed},l0,h0,l1,h1)`
  const code = packed
    ? `{const X=c.xmmD;${load}const a0=X[${D}],a1=X[${D + 1}],v0=a0${js}b0,v1=a1${js}b1;if(${MOOT}&&${fastD('a0')}&&${fastD('b0')}&&${fastD('a1')}&&${fastD('b1')}&&${fastR('v0')}&&${fastR('v1')}){X[${D}]=v0;X[${D + 1}]=v1;}else ${slow};}`
    : `{const X=c.xmmD;${load}const a0=X[${D}],v0=a0${js}b0;if(${MOOT}&&${fastD('a0')}&&${fastD('b0')}&&${fastR('v0')})X[${D}]=v0;else ${slow};}`
  // The slow path raises #XM (or #UD) for an unmasked exception, whatever the operand.
  return { code, mayFault: true, mayWrite: false }
}

function sse(insn: Instruction, mem: MemoryEmitter): Template | null {
  const o = insn.opcode
  const p = insn.mandatoryPrefix
  const R = 4 * insn.reg
  const M = 4 * insn.rm
  if (o === 0x58 || o === 0x59 || o === 0x5c || o === 0x5e) return fpArithDouble(insn, mem)
  const copy128 = (d: number, s: number) =>
    `{const x=c.xmm;x[${d}]=x[${s}];x[${d + 1}]=x[${s + 1}];x[${d + 2}]=x[${s + 2}];x[${d + 3}]=x[${s + 3}];}`
  const load128 = (aligned: boolean): Template | null => {
    return {
      code: `{${mem.load(insn, 16, ['l0', 'h0', 'l1', 'h1'], aligned)}const x=c.xmm;x[${R}]=l0;x[${R + 1}]=h0;x[${R + 2}]=l1;x[${R + 3}]=h1;}`,
      mayFault: true,
      mayWrite: false,
    }
  }
  const store128 = (aligned: boolean): Template | null => {
    return {
      code: `{const x=c.xmm;${mem.store(insn, 16, [`x[${R}]`, `x[${R + 1}]`, `x[${R + 2}]`, `x[${R + 3}]`], aligned)}}`,
      mayFault: true,
      mayWrite: true,
    }
  }
  // movups/movupd (no prefix, 66) and movss/movsd (F3, F2): 0F 10 load, 0F 11 store.
  if (o === 0x10 || o === 0x11) {
    const store = o === 0x11
    if (p === 0 || p === 0x66) {
      if (insn.mod === 3)
        return { code: store ? copy128(M, R) : copy128(R, M), mayFault: false, mayWrite: false }
      return store ? store128(false) : load128(false)
    }
    if (p !== 0xf2) return null // movss: the closure
    if (insn.mod === 3) {
      const [d, s2] = store ? [M, R] : [R, M]
      return {
        code: `{const x=c.xmm;x[${d}]=x[${s2}];x[${d + 1}]=x[${s2 + 1}];}`,
        mayFault: false,
        mayWrite: false,
      }
    }
    if (store)
      return {
        code: `{const x=c.xmm;${mem.store(insn, 8, [`x[${R}]`, `x[${R + 1}]`])}}`,
        mayFault: true,
        mayWrite: true,
      }
    // A load from memory zeroes the upper quadword.
    return {
      code: `{${mem.load(insn, 8, ['l', 'h'])}const x=c.xmm;x[${R}]=l;x[${R + 1}]=h;x[${R + 2}]=0;x[${R + 3}]=0;}`,
      mayFault: true,
      mayWrite: false,
    }
  }
  // movaps/movapd: 0F 28 load, 0F 29 store (aligned).
  if ((o === 0x28 || o === 0x29) && (p === 0 || p === 0x66)) {
    if (insn.mod === 3)
      return { code: o === 0x28 ? copy128(R, M) : copy128(M, R), mayFault: false, mayWrite: false }
    return o === 0x28 ? load128(true) : store128(true)
  }
  // movdqa (66, aligned) / movdqu (F3): 0F 6F load, 0F 7F store.
  if ((o === 0x6f || o === 0x7f) && (p === 0x66 || p === 0xf3)) {
    if (insn.mod === 3)
      return { code: o === 0x6f ? copy128(R, M) : copy128(M, R), mayFault: false, mayWrite: false }
    return o === 0x6f ? load128(p === 0x66) : store128(p === 0x66)
  }
  // pxor (66 0F EF), xorps (0F 57), xorpd (66 0F 57) between registers.
  if (insn.mod === 3 && ((o === 0xef && p === 0x66) || (o === 0x57 && (p === 0 || p === 0x66)))) {
    return {
      code: `{const x=c.xmm;x[${R}]^=x[${M}];x[${R + 1}]^=x[${M + 1}];x[${R + 2}]^=x[${M + 2}];x[${R + 3}]^=x[${M + 3}];}`,
      mayFault: false,
      mayWrite: false,
    }
  }
  return null
}

/** The inline template for an instruction, or null to call its closure. */
export function template(insn: Instruction, mem: MemoryEmitter = DIRECT): Template | null {
  if (!isLegacy(insn)) return null
  if (insn.map === 0) {
    const o = insn.opcode
    if (o < 0x40 || o === 0x81 || o === 0x83 || o === 0x85 || o === 0xa9 || o === 0xf7) return alu(insn, mem)
    if (o === 0xc1 || o === 0xd1) return shiftImm(insn)
    if (o === 0x69 || o === 0x6b) return imul32(insn, mem)
    if (
      o === 0x89 ||
      o === 0x8b ||
      o === 0x88 ||
      o === 0x8a ||
      o === 0xc7 ||
      o === 0x8d ||
      (o >= 0xb8 && o <= 0xbf)
    )
      return mov(insn, mem)
    if (o === 0x63) return extend(insn, mem)
    if (o === 0xff) return incDec(insn)
    if (o >= 0x50 && o <= 0x5f) return stack(insn)
    if ((o >= 0x70 && o <= 0x7f) || o === 0xe8 || o === 0xe9 || o === 0xeb || o === 0xc2 || o === 0xc3)
      return branch(insn)
    return null
  }
  if (insn.map === 1) {
    const o = insn.opcode
    const fp = sseTemplate(insn, mem)
    if (fp !== null) return fp
    if (o >= 0x80 && o <= 0x8f) return branch(insn)
    if (o === 0xaf) return imul32(insn, mem)
    if (o >= 0x40 && o <= 0x4f) return cmov(insn)
    if (o === 0x1f) return { code: '', mayFault: false, mayWrite: false } // nop r/m
    if (o === 0xb6 || o === 0xb7 || o === 0xbe || o === 0xbf) return extend(insn, mem)
    if (
      o === 0x10 ||
      o === 0x11 ||
      o === 0x28 ||
      o === 0x29 ||
      o === 0x6f ||
      o === 0x7f ||
      o === 0xef ||
      o === 0x57 ||
      o === 0x58 ||
      o === 0x59 ||
      o === 0x5c ||
      o === 0x5e
    )
      return sse(insn, mem)
  }
  return null
}
