// Which instructions a workload executes, by dynamic count, and whether the
// block compiler inlines them (a debugging aid for choosing templates):
// op-mix.ts <workload> [iterations]. Runs interpreted (every block counts its
// executions), then weighs each block's instructions by them.
import { readFileSync } from 'node:fs'
import { decodeBlock } from '../src/exec/block.js'
import { template } from '../src/jit/templates.js'
import { loadBare } from '../test/support/bare.js'
import { patchGlobal32 } from '../test/support/elf.js'

const [path, iterations] = process.argv.slice(2)
let elf: Uint8Array = new Uint8Array(readFileSync(path))
if (Number(iterations) > 0) elf = patchGlobal32(elf, 'iterations', Number(iterations))
const { machine } = loadBare(elf)
machine.jitThreshold = Number.POSITIVE_INFINITY
machine.run({ maxInstructions: 10_000_000_000 })
const total = machine.totalInstructions()
const counts = new Map<string, { n: number; inline: boolean }>()
// biome-ignore lint/suspicious/noExplicitAny: a debugging aid reads the cache's private map
for (const b of (machine as any).codeCache.blocks.values()) {
  const insns = decodeBlock(machine.memory.bytes, b)
  if (insns === null) continue
  for (const insn of insns) {
    const key = `${insn.mnemonic} ${insn.operands.map((o) => o.kind).join(',')}${template(insn) === null ? ` [${[...insn.bytes].map((x) => x.toString(16).padStart(2, '0')).join(' ')}]` : ''}`
    const e = counts.get(key) ?? { n: 0, inline: template(insn) !== null }
    e.n += b.hits
    counts.set(key, e)
  }
}
const rows = [...counts].sort((a, b) => b[1].n - a[1].n)
let closures = 0
for (const [, e] of rows) if (!e.inline) closures += e.n
console.log(`total ${total}, counted ${rows.reduce((s, [, e]) => s + e.n, 0)}, closures ${closures}`)
for (const [k, e] of rows.slice(0, 50))
  console.log(`${((100 * e.n) / total).toFixed(2).padStart(6)}% ${e.inline ? '     ' : 'CLOS '} ${k}`)
