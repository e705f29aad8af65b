import { test } from 'vitest'
import { run } from './support/asm.js'
test('smoke', () => {
  for (let k = 0; k < 3; k++) {
    const r = run({ code: '48 c7 c0 01 00 00 00 c1 e0 04', regs: {} })
    console.log(r.regs.rax, r.flags, r.fault, r.offset)
  }
})
