// Memory accesses in compiled blocks: the effective address and the code
// that reads or writes through it.
//
// Two emitters. The direct one calls the Cpu's access functions (a TLB probe
// each). A looping block uses access sites instead: each memory operand
// keeps, in locals of the block function, the page it last reached (its
// address's page in halves, the frame's physical address) and the TLB
// generation it was valid under. While the same page comes round again and
// the TLB has not changed (no fill, flush or revoked write: Tlb.gen), the
// access is one typed-array load or store at the cached frame. So the hit
// path sees exactly what the TLB would give: a site is filled only from a
// TLB entry allowing the access (reads: R for the CPL, writes: W, which the
// TLB grants only for dirty pages holding no decoded code and no data
// breakpoint), and any change to the TLB invalidates every site. Anything
// else (a miss, a page-crossing or misaligned access) takes the direct path,
// which walks, faults, and sets accessed and dirty bits as before.

import type { Instruction } from '../decoder/instruction.js'
import { memOperand } from '../exec/operands.js'

const TWO_32 = 4294967296

function num(v: number): string {
  return Number.isInteger(v) ? String(v) : 'NaN'
}

/** Exact effective-address expression, a linear number (see operands.ts compileEa). */
export function eaExpr(insn: Instruction): string {
  const m = memOperand(insn)
  const d = m.displacement
  let e: string
  if (m.ripRelative) return num(insn.address + insn.length + d)
  const B = 2 * m.base
  const X = 2 * m.index
  const s = m.scale
  if (insn.addressSize === 4) {
    const parts = [m.base >= 0 ? `r[${B}]` : '', m.index >= 0 ? `r[${X}]*${s}` : '', String(d)].filter(
      (x) => x !== '',
    )
    e = `((${parts.join('+')})>>>0)`
  } else if (m.base >= 0 && m.index < 0) {
    e = `(t=(r[${B}]>>>0)+${d},((r[${B + 1}]+(t<0?-1:t>=${TWO_32}?1:0))|0)*${TWO_32}+(t>>>0))`
  } else if (m.base >= 0) {
    e = `(t=(r[${B}]>>>0)+(r[${X}]>>>0)*${s}+${d},((r[${B + 1}]+r[${X + 1}]*${s}+Math.floor(t/${TWO_32}))|0)*${TWO_32}+(t>>>0))`
  } else if (m.index >= 0) {
    e = `(t=(r[${X}]>>>0)*${s}+${d},((r[${X + 1}]*${s}+Math.floor(t/${TWO_32}))|0)*${TWO_32}+(t>>>0))`
  } else {
    e = num(d)
  }
  if (m.segment === 'fs') return `rt.wrap64(${e}+c.fsBase)`
  if (m.segment === 'gs') return `rt.wrap64(${e}+c.gsBase)`
  if (isStack(insn)) return `rt.stk(${e})`
  return e
}

/** References through RSP or RBP use SS: a non-canonical one is #SS(0). */
function isStack(insn: Instruction): boolean {
  const m = memOperand(insn)
  return (m.base === 4 || m.base === 5) && !m.ripRelative && insn.addressSize === 8
}

/** The carry out of the int32 addition s = a + b (as unsigned): 0 or 1, in int32 operations only. */
const carry = (a: string, b: string, sum: string) => `((((${a})&(${b}))|(((${a})|(${b}))&~${sum}))>>>31)`

/**
 * The effective address as two int32 halves (statements setting ql, qh,
 * and scratch constants named q*: template names never start with q),
 * exactly as eaExpr's sum modulo 2^64 but in int32 arithmetic throughout
 * (carries by the sign-bit formula: no double, no conversion); null for
 * FS/GS-relative operands (their bases are linear numbers: the direct path
 * handles them).
 */
export function eaHalves(insn: Instruction): string | null {
  const m = memOperand(insn)
  if (m.segment === 'fs' || m.segment === 'gs') return null
  const d = m.displacement | 0
  const dh = d < 0 ? -1 : 0
  if (m.ripRelative) {
    const a = insn.address + insn.length + m.displacement
    if (!Number.isInteger(a)) return null
    return `const ql=${a | 0},qh=${Math.floor(a / TWO_32) | 0};`
  }
  const B = 2 * m.base
  const X = 2 * m.index
  if (insn.addressSize === 4) {
    const parts = [m.base >= 0 ? `r[${B}]` : '', m.index >= 0 ? `r[${X}]*${m.scale}` : '', String(d)].filter(
      (x) => x !== '',
    )
    return `const ql=(${parts.join('+')})|0,qh=0;`
  }
  // The index scaled: a shift of both halves.
  const k = Math.log2(m.scale)
  const index =
    k === 0
      ? `const qxl=r[${X}],qxh=r[${X + 1}];`
      : `const qxl=r[${X}]<<${k},qxh=(r[${X + 1}]<<${k})|(r[${X}]>>>${32 - k});`
  let code: string
  let lo: string
  let hi: string
  if (m.base >= 0 && m.index >= 0) {
    code = `const qbl=r[${B}],${index.slice(6)}const qsl=(qbl+qxl)|0,qsh=(r[${B + 1}]+qxh+${carry('qbl', 'qxl', 'qsl')})|0;`
    lo = 'qsl'
    hi = 'qsh'
  } else if (m.base >= 0) {
    code = `const qbl=r[${B}],qbh=r[${B + 1}];`
    lo = 'qbl'
    hi = 'qbh'
  } else if (m.index >= 0) {
    code = index
    lo = 'qxl'
    hi = 'qxh'
  } else return `const ql=${d},qh=${dh};`
  if (d === 0) return `${code}const ql=${lo},qh=${hi};`
  return `${code}const ql=(${lo}+${d})|0,qh=(${hi}+${dh}+${carry(lo, String(d), 'ql')})|0;`
}

export type AccessSize = 1 | 2 | 4 | 8 | 16

/**
 * Emits a template's memory accesses. Names and values come in lanes of
 * int32: sizes 1 to 4 one (read8 and read16 zero-extended, read32 signed),
 * 8 two (low, high), 16 four (lowest first).
 */
export interface MemoryEmitter {
  /** Statements declaring the names with the bytes read; aligned: #GP(0) unless 16-byte aligned. */
  load(insn: Instruction, size: AccessSize, names: readonly string[], aligned?: boolean): string
  /** Statements writing the value expressions. */
  store(insn: Instruction, size: AccessSize, values: readonly string[], aligned?: boolean): string
  /**
   * load, and the same bytes as doubles (one per 8 bytes) in `doubles`: the
   * SSE2 fast paths compute on the doubles, their slow paths take the bits.
   */
  loadDoubles(
    insn: Instruction,
    size: 8 | 16,
    names: readonly string[],
    doubles: readonly string[],
    aligned?: boolean,
  ): string
}

/** Doubles from the int32 halves through runtime's scratch quadword (the direct path's conversion). */
function viaScratch(names: readonly string[], doubles: readonly string[]): string {
  let code = 'q=rt.qi;'
  doubles.forEach((d, k) => {
    code += `q[0]=${names[2 * k]};q[1]=${names[2 * k + 1]};${d}=rt.qd[0];`
  })
  return code
}

function directLoad(addr: string, size: AccessSize, n: readonly string[], decl: string): string {
  switch (size) {
    case 1:
      return `${decl}${n[0]}=c.read8(${addr});`
    case 2:
      return `${decl}${n[0]}=c.read16(${addr});`
    case 4:
      return `${decl}${n[0]}=c.read32(${addr});`
    case 8:
      return `${decl}${n[0]}=c.read64(${addr}),${n[1]}=c.th;`
    default:
      return `{const ma=${addr};${n[0]}=c.read64(ma);${n[1]}=c.th;${n[2]}=c.read64(ma+8);${n[3]}=c.th;}`
  }
}

function directStore(addr: string, size: AccessSize, v: readonly string[]): string {
  switch (size) {
    case 1:
      return `c.write8(${addr},${v[0]});`
    case 2:
      return `c.write16(${addr},${v[0]});`
    case 4:
      return `c.write32(${addr},${v[0]});`
    case 8:
      return `c.write64(${addr},${v[0]},${v[1]});`
    default:
      return `rt.w128(c,${addr},${v[0]},${v[1]},${v[2]},${v[3]});`
  }
}

const withAlign = (addr: string, aligned: boolean | undefined) => (aligned ? `rt.a16(${addr})` : addr)

/** Through the Cpu's access functions. */
export const DIRECT: MemoryEmitter = {
  load(insn, size, names, aligned) {
    const addr = withAlign(eaExpr(insn), aligned)
    if (size === 16) return `let ${names.join(',')};${directLoad(addr, 16, names, '')}`
    return directLoad(addr, size, names, 'const ')
  },
  store(insn, size, values, aligned) {
    return directStore(withAlign(eaExpr(insn), aligned), size, values)
  },
  loadDoubles(insn, size, names, doubles, aligned) {
    const addr = withAlign(eaExpr(insn), aligned)
    return `let ${[...names, ...doubles, 'q'].join(',')};${directLoad(addr, size, names, '')}${viaScratch(names, doubles)}`
  },
}

/** The hit path's typed-array code at physical address p (a local). */
function fastLoad(size: AccessSize, n: readonly string[]): string {
  switch (size) {
    case 1:
      return `${n[0]}=M[p];`
    case 2:
      return `${n[0]}=V.getUint16(p,true);`
    case 4:
      return `${n[0]}=V.getInt32(p,true);`
    case 8:
      return `${n[0]}=V.getInt32(p,true);${n[1]}=V.getInt32(p+4,true);`
    default:
      return `${n[0]}=V.getInt32(p,true);${n[1]}=V.getInt32(p+4,true);${n[2]}=V.getInt32(p+8,true);${n[3]}=V.getInt32(p+12,true);`
  }
}

function fastStore(size: AccessSize, v: readonly string[]): string {
  switch (size) {
    case 1:
      return `M[p]=${v[0]};`
    case 2:
      return `V.setUint16(p,${v[0]},true);`
    case 4:
      return `V.setInt32(p,${v[0]},true);`
    case 8:
      return `V.setInt32(p,${v[0]},true);V.setInt32(p+4,${v[1]},true);`
    default:
      return `V.setInt32(p,${v[0]},true);V.setInt32(p+4,${v[1]},true);V.setInt32(p+8,${v[2]},true);V.setInt32(p+12,${v[3]},true);`
  }
}

/**
 * What the two emitters share: loads, stores and double loads through an
 * emitter's access code (its hit test, the fast path on a hit, the direct
 * path otherwise), or the direct path when the address has no halves.
 */
abstract class AccessEmitter implements MemoryEmitter {
  abstract declare(): string

  protected abstract access(
    insn: Instruction,
    size: AccessSize,
    aligned: boolean | undefined,
    write: boolean,
    fast: string,
    slow: (addr: string) => string,
  ): string | null

  load(insn: Instruction, size: AccessSize, names: readonly string[], aligned?: boolean): string {
    const code = this.access(insn, size, aligned, false, fastLoad(size, names), (addr) =>
      directLoad(addr, size, names, ''),
    )
    if (code === null) return DIRECT.load(insn, size, names, aligned)
    return `let ${names.join(',')};${code}`
  }

  store(insn: Instruction, size: AccessSize, values: readonly string[], aligned?: boolean): string {
    const code = this.access(insn, size, aligned, true, fastStore(size, values), (addr) =>
      directStore(addr, size, values),
    )
    return code ?? DIRECT.store(insn, size, values, aligned)
  }

  loadDoubles(
    insn: Instruction,
    size: 8 | 16,
    names: readonly string[],
    doubles: readonly string[],
    aligned?: boolean,
  ): string {
    // The hit path reads the doubles straight from memory (no int-to-double trip through a scratch buffer).
    const fast = fastLoad(size, names) + doubles.map((d, k) => `${d}=V.getFloat64(p+${8 * k},true);`).join('')
    const code = this.access(
      insn,
      size,
      aligned,
      false,
      fast,
      (addr) => directLoad(addr, size, names, '') + viaScratch(names, doubles),
    )
    if (code === null) return DIRECT.loadDoubles(insn, size, names, doubles, aligned)
    return `let ${[...names, ...doubles, 'q'].join(',')};${code}`
  }
}

/**
 * The TLB probe inline, for blocks that do not loop (a site's cache would
 * be used once): the same test Cpu.read64 and the others make, without the
 * call (V8 does not inline those into hundreds of block functions) and on
 * the address's halves.
 */
export class TlbEmitter extends AccessEmitter {
  private used = false

  /** Declarations of what the probes use. */
  declare(): string {
    return this.used ? 'const T=c.tlb,TV=T.vpn,TB=T.bits,TP=T.phys,V=c.view,M=c.mem;' : ''
  }

  protected access(
    insn: Instruction,
    size: AccessSize,
    aligned: boolean | undefined,
    write: boolean,
    fast: string,
    slow: (addr: string) => string,
  ): string | null {
    const halves = eaHalves(insn)
    if (halves === null) return null
    this.used = true
    let addr = `qh*${TWO_32}+(ql>>>0)`
    if (isStack(insn)) addr = `rt.stk(${addr})`
    const hit = `TV[ti]===vp&&(TB[ti]&${write ? 'c.wBit' : 'c.rBit'})!==0&&(ql&4095)<=${4096 - size}${aligned ? '&&(ql&15)===0' : ''}`
    return `{${halves}const vp=qh*1048576+(ql>>>12),ti=(vp^(vp>>10))&4095;if(${hit}){const p=TP[ti]+(ql&4095);${fast}}else{${slow(withAlign(addr, aligned))}}}`
  }
}

/**
 * Access sites for one block function: site k's locals are Kk (the page's
 * low half, 1 when empty: never a page address), Hk (its high half), Pk
 * (the frame's physical address) and Gk (the TLB generation).
 */
export class SiteEmitter extends AccessEmitter {
  private sites = 0

  /** Declarations of the sites' locals and of what their code uses (T, V, M). */
  declare(): string {
    if (this.sites === 0) return ''
    const vars: string[] = []
    for (let k = 0; k < this.sites; k++) vars.push(`K${k}=1,H${k}=0,P${k}=0,G${k}=-1`)
    return `const T=c.tlb,V=c.view,M=c.mem;let ${vars.join(',')};`
  }

  protected access(
    insn: Instruction,
    size: AccessSize,
    aligned: boolean | undefined,
    write: boolean,
    fast: string,
    slow: (addr: string) => string,
  ): string | null {
    const halves = eaHalves(insn)
    if (halves === null) return null
    const k = this.sites++
    let addr = `qh*${TWO_32}+(ql>>>0)`
    if (isStack(insn)) addr = `rt.stk(${addr})`
    const hit = `(ql&-4096)===K${k}&&qh===H${k}&&G${k}===T.gen&&(ql&4095)<=${4096 - size}${aligned ? '&&(ql&15)===0' : ''}`
    const fill = `P${k}=rt.site(c,ql,qh,${write ? 'c.wBit' : 'c.rBit'});K${k}=P${k}<0?1:ql&-4096;H${k}=qh;G${k}=T.gen;`
    return `{${halves}if(${hit}){const p=P${k}+(ql&4095);${fast}}else{${slow(withAlign(addr, aligned))}${fill}}}`
  }
}
