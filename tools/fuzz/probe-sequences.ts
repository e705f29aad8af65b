// Long fuzz run of probe sequences (issue 17):
//
//   npx tsx --conditions=@probekit/source tools/fuzz/probe-sequences.ts \
//     [--from S] [--count N] [--workload threads|proctree] [--cpus C] [--no-optimize] [--trace]
//
// N seeds from S (default 1, 20), each a run of packages/kprobes/test/support/probe-sequence.ts:
// random register / unregister / disable / enable of kprobes, kretprobes and jprobes (with jump
// optimization switched through its sysctl unless --no-optimize) on 2-4 vCPUs while the workload
// runs to its end; then every hit accounted for and the kernel text restored. --trace prints
// each action and syscall of the (single) seed, to replay a failure. Exits 1 if a seed failed.

import { parseArgs } from 'node:util'
import { fixture, probeSequence, type Workload } from '../../packages/kprobes/test/support/probe-sequence.js'
import { optimizerExtension } from '../../packages/optprobes/test/support/optimizer-extension.js'
import { optionChecks } from './options.js'

const { fail, integer } = optionChecks('probe-sequences fuzz')

let args: ReturnType<typeof parseOptions>
function parseOptions() {
  return parseArgs({
    options: {
      from: { type: 'string' },
      count: { type: 'string' },
      workload: { type: 'string' },
      cpus: { type: 'string' },
      'no-optimize': { type: 'boolean' },
      trace: { type: 'boolean' },
    },
    strict: true,
  }).values
}
try {
  args = parseOptions()
} catch (e) {
  fail((e as Error).message)
}

const WORKLOADS: Record<string, () => { workload: Workload; minRun: number; maxRun: number }> = {
  threads: () => ({
    workload: {
      path: '/bin/threads',
      bytes: fixture('threads'),
      argv: ['threads'],
      expectStdout: /counter: 20000 \(expected 20000\)\n$/,
    },
    minRun: 2_000,
    maxRun: 60_000,
  }),
  proctree: () => ({
    workload: {
      path: '/bin/proctree',
      bytes: fixture('proctree'),
      argv: ['/bin/proctree'],
      expectStdout: /ECHILD/,
    },
    minRun: 200,
    maxRun: 5_000,
  }),
}

const from = integer('from', args.from, 1)
const count = integer('count', args.count, 20)
const cpus = args.cpus === undefined ? undefined : integer('cpus', args.cpus, 2)
if (cpus !== undefined && (cpus < 1 || cpus > 8)) fail(`--cpus wants 1 to 8, got ${cpus}`)
const name = args.workload ?? 'threads'
const make = WORKLOADS[name]
if (!make) fail(`--workload is one of ${Object.keys(WORKLOADS).join(', ')}, got '${name}'`)
if (args.trace && count !== 1) fail('--trace wants --count 1')

let failed = 0
for (let seed = from; seed < from + count; seed++) {
  const started = Date.now()
  try {
    const report = probeSequence({
      seed,
      cpus,
      ...make(),
      extensions: args['no-optimize'] ? [] : [optimizerExtension],
      trace: args.trace ? (line) => console.log(line) : undefined,
    })
    const { seed: _s, ...counts } = report
    console.log(`seed ${seed}: ok in ${Date.now() - started} ms ${JSON.stringify(counts)}`)
  } catch (e) {
    failed++
    console.log(`seed ${seed}: FAILED ${e instanceof Error ? e.message : String(e)}`)
  }
}
console.log(`${count - failed} of ${count} seeds passed (${name}, from ${from})`)
process.exit(failed > 0 ? 1 : 0)
