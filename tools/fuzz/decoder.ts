// Long fuzz run of the x86-64 decoder against capstone 5 (issue 17):
//
//   npx tsx --conditions=@probekit/source tools/fuzz/decoder.ts [--count N] [--seed S] [--random P] [--show K]
//
// N strings (default 10^6) from packages/x86-emu/test/support/fuzz-bytes.ts
// (P% uniformly random, default 15, the rest mutations of the instructions
// of committed binaries), each
// decoded and compared with capstone. Prints the counts of agreements, of
// each allow-listed class of disagreement (test/support/capstone.ts), and
// the first K unexplained disagreements and host exceptions; exits 1 if
// there is any of the latter.

import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { DecodeError, tryDecode } from '../../packages/x86-emu/src/decoder/index.js'
import { type Decoded, judge, openCapstone } from '../../packages/x86-emu/test/support/capstone.js'
import { fixtureCorpus, fuzzCases } from '../../packages/x86-emu/test/support/fuzz-bytes.js'
import { optionChecks } from './options.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

const { fail, integer } = optionChecks('decoder fuzz')

let args: ReturnType<typeof parseOptions>
function parseOptions() {
  return parseArgs({
    options: {
      count: { type: 'string' },
      seed: { type: 'string' },
      random: { type: 'string' },
      show: { type: 'string' },
    },
    strict: true,
  }).values
}
try {
  args = parseOptions()
} catch (e) {
  fail((e as Error).message)
}
const count = integer('count', args.count, 1_000_000)
const seed = integer('seed', args.seed, 0x5eed_f00d)
const show = integer('show', args.show, 20)
const randomPercent = integer('random', args.random, 15)
if (randomPercent > 100) fail(`--random is a percentage, got ${randomPercent}`)
const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')

const cs = await openCapstone()
const { files, corpus } = fixtureCorpus(ROOT)
console.log(
  `capstone ${cs.version}; corpus: ${corpus.length} instruction forms from ${files.length} binaries; seed ${seed}; ${count} strings, ${randomPercent}% random`,
)

const next = fuzzCases(seed, corpus, { randomPercent })
const address = 0x40_1000
const decode = (b: Uint8Array): Decoded => tryDecode(b, address)
const tally = new Map<string, number>()
const add = (k: string) => tally.set(k, (tally.get(k) ?? 0) + 1)
const problems: string[] = []
let nProblems = 0
const started = Date.now()
for (let i = 0; i < count; i++) {
  const { bytes, origin } = next()
  let ours: Decoded
  try {
    ours = decode(bytes)
  } catch (e) {
    nProblems++
    add('host exception')
    if (problems.length < show) problems.push(`${hex(bytes)} (${origin}): threw ${String(e)}`)
    continue
  }
  if (ours instanceof DecodeError) add(`(decoder rejected: ${ours.reason})`)
  const v = judge(bytes, address, ours, cs, decode)
  if (v.kind === 'allowed') add(`allow-listed ${v.id}`)
  else add(v.kind)
  if (v.kind === 'unexplained') {
    nProblems++
    if (problems.length < show) problems.push(`${v.message} (${origin})`)
  }
  if ((i + 1) % 100_000 === 0) console.error(`  ${i + 1} strings, ${nProblems} problems`)
}
cs.close()

const seconds = (Date.now() - started) / 1000
console.log(`${count} strings in ${seconds.toFixed(1)} s`)
for (const [k, v] of [...tally.entries()].sort((a, b) => a[0].localeCompare(b[0])))
  console.log(`  ${k.padEnd(48)} ${String(v).padStart(9)}`)
for (const p of problems) console.log(`problem: ${p}`)
process.exit(nProblems > 0 ? 1 : 0)
