// Helpers the generated block functions call. Passed in as one object so
// the generated code closes over it (V8 then inlines the small ones).

import { condition, getCF, szp, szp64 } from '../cpu/flags.js'
import { retNear } from '../exec/control.js'
import { imul64 } from '../exec/muldiv.js'
import { checkStackAddress, wrap64 } from '../exec/operands.js'
import { checkAligned16, write128 } from '../exec/sse-common.js'
import { fpArithD } from '../exec/sse-float.js'
import { pop64, push64 } from '../exec/stack.js'

const QWORD = new ArrayBuffer(8)
const MAX_D = Number.MAX_VALUE
const MIN_NORMAL_D = 2 ** -1022

export const runtime = {
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
}

export type JitRuntime = typeof runtime
