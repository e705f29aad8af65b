// Helpers the generated block functions call. Passed in as one object so
// the generated code closes over it (V8 then inlines the small ones).

import { condition, getCF } from '../cpu/flags.js'
import { checkStackAddress, wrap64 } from '../exec/operands.js'
import { pop64, push64 } from '../exec/stack.js'

export const runtime = {
  cond: condition,
  getCF,
  stk: checkStackAddress,
  wrap64,
  push64,
  pop64,
}

export type JitRuntime = typeof runtime
