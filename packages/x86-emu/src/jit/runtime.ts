// Helpers the generated block functions call. Passed in as one object so
// the generated code closes over it (V8 then inlines the small ones).

import type { Cpu } from '../cpu/cpu.js'
import { condition, getCF, szp, szp64 } from '../cpu/flags.js'
import { retNear } from '../exec/control.js'
import { imul64 } from '../exec/muldiv.js'
import { checkStackAddress, wrap64 } from '../exec/operands.js'
import { checkAligned16, write128 } from '../exec/sse-common.js'
import { fpArithD } from '../exec/sse-float.js'
import { pop64, push64 } from '../exec/stack.js'
import { TLB_MASK } from '../memory/tlb.js'

/** Arithmetic flags but AF, which the eager forms a pseudo kind stands for leave clear. */
const ARITH_NOT = ~0x8d5

/**
 * The frame (physical address of the page) the TLB holds for the address in
 * halves with permission bit `bit`, else -1: what a memory access site
 * caches (memory-access.ts). No walk, no fault: it only looks.
 */
function site(c: Cpu, lo: number, hi: number, bit: number): number {
  const vpn = hi * 1048576 + (lo >>> 12)
  const i = (vpn ^ (vpn >> 10)) & TLB_MASK
  const t = c.tlb
  return t.vpn[i] === vpn && (t.bits[i] & bit) !== 0 ? t.phys[i] : -1
}

/**
 * Stores a looping block's flag locals to the Cpu (flag-locals.ts); returns
 * the lazy kind now in Cpu.fop. A pseudo kind (negative: a shift's or
 * imul's eager flags, deferred) becomes eager flags here: CF and OF in fa,
 * SF ZF PF from the result, AF clear.
 */
function sync(
  c: Cpu,
  op: number,
  fa: number,
  fah: number,
  fb: number,
  fbh: number,
  fr: number,
  frh: number,
  fcf: number,
): number {
  if (op < 0) {
    c.eflags = (c.eflags & ARITH_NOT) | fa | (op === -1 ? szp64(fr, frh) : szp(fr, 2))
    c.fop = 0
    return 0
  }
  c.fop = op
  c.fa = fa
  c.fah = fah
  c.fb = fb
  c.fbh = fbh
  c.fr = fr
  c.frh = frh
  c.fcf = fcf
  return op
}

const QWORD = new ArrayBuffer(8)
const MAX_D = Number.MAX_VALUE
const MIN_NORMAL_D = 2 ** -1022

export const runtime = {
  site,
  sync,
  cond: condition,
  getCF,
  imul64,
  szp,
  szp64,
  stk: checkStackAddress,
  wrap64,
  push64,
  pop64,
  ret: retNear,
  /** The aligned SSE forms' #GP(0) check. */
  a16: checkAligned16,
  w128: write128,
  fpd: fpArithD,
  /** A finite double that is not denormal: an operand the SSE2 fast paths take as it is. */
  fastD: (a: number) => Math.abs(a) <= MAX_D && (a === 0 || Math.abs(a) >= MIN_NORMAL_D),
  /** A finite double above the normal minimum: a result with no flag to raise but PE. */
  fastR: (v: number) => Math.abs(v) > MIN_NORMAL_D && Math.abs(v) <= MAX_D,
  /** A memory operand's two halves as a double: qi[0], qi[1] in, qd[0] out. */
  qi: new Int32Array(QWORD),
  qd: new Float64Array(QWORD),
  /** The same scratch as a single: qi[0] in, qf[0] out, or the reverse. */
  qf: new Float32Array(QWORD),
}

export type JitRuntime = typeof runtime
