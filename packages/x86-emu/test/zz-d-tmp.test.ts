import { test } from 'vitest'
import { decode } from '../src/decoder/decode.js'
test('d', () => {
  for (const h of ['48c7c001000000', 'c1e004']) {
    const b = Uint8Array.from(h.match(/../g)!.map((x) => parseInt(x, 16)))
    const i = decode(b, 0x10000000, 0)
    console.log(i.mnemonic, i.opcode, i.map, i.reg, i.rm, i.mod, i.operandSize, i.immediate, i.immediateSize)
  }
})
