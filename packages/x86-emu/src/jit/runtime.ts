// Helpers the generated block functions call. Passed in as one object so
// the generated code closes over it (V8 then inlines the small ones).

import { condition, getCF, szp, szp64 } from '../cpu/flags.js'
import { retNear } from '../exec/control.js'
import { imul64 } from '../exec/muldiv.js'
import { checkStackAddress, wrap64 } from '../exec/operands.js'
import { checkAligned16, write128 } from '../exec/sse-common.js'
import { pop64, push64 } from '../exec/stack.js'

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
}

export type JitRuntime = typeof runtime
