// The long syscall-fuzzing run (issue 17): packages/kernel/fixtures/bin/syscallfuzz
// under the probekit kernel, COUNT calls for each seed, and on an x86-64
// Linux host the same run natively, call by call. The CI test
// (packages/kernel/test/syscall-fuzz.test.ts) does one short seed.
//
//   npx tsx --conditions=@probekit/source tools/fuzz/syscalls.ts [--count N] [--no-native] SEED...
//
// Defaults: 100000 calls, seeds 1 2 3. Per seed it prints the time, how the
// run ended (a host exception names the call being served), the fuzzer's
// summary (counts per errno, canary, witness), the unimplemented calls met,
// and the calls answered differently from Linux, grouped per system call.
// Exit status 1 if any run ended otherwise than by the fuzzer's exit 0.

import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kernel, PERCPU_TOP_OF_STACK, PT_REGS_SIZE, syscallName } from '../../packages/kernel/src/index.js'

const root = new URL('../../packages/kernel/', import.meta.url)
const fuzzer = new URL('fixtures/bin/syscallfuzz', root)
const image = new Uint8Array(readFileSync(new URL('guest/vmlinux', root)))

const argv = process.argv.slice(2)
let count = 100_000
let native = process.platform === 'linux' && process.arch === 'x64'
const seeds: string[] = []
for (let k = 0; k < argv.length; k++) {
  if (argv[k] === '--count') count = Number(argv[++k])
  else if (argv[k] === '--no-native') native = false
  else seeds.push(argv[k])
}
if (seeds.length === 0) seeds.push('1', '2', '3')

/** "I NR A0..A5 = RESULT" lines of `syscallfuzz -v`: number and result per call. */
function results(out: string): { nr: number; result: string }[] {
  const r: { nr: number; result: string }[] = []
  for (const m of out.matchAll(/^\d+ (-?\d+) (?:[0-9a-f]+ ){5}[0-9a-f]+ = (\S+)$/gm))
    r.push({ nr: Number(m[1]), result: m[2] })
  return r
}

function emulate(seed: string, scratch: string): { out: string; ended: string; ok: boolean; kernel: Kernel } {
  let out = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image,
    cpus: 1,
    memorySize: 128 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
    stderr: (d) => {
      out += dec.decode(d)
    },
  })
  kernel.vfs.writeFile('/bin/syscallfuzz', new Uint8Array(readFileSync(fuzzer)))
  kernel.vfs.mkdirp(scratch)
  kernel.boot()
  kernel.spawn('/bin/syscallfuzz', ['syscallfuzz', '-v', seed, String(count), scratch], [])
  try {
    const { result, exit } = kernel.run(Number.POSITIVE_INFINITY)
    return { out, ended: `${result.reason}: ${result.detail}`, ok: exit?.status === 0, kernel }
  } catch (e) {
    const rq = kernel.sched.rq[0]
    const f = kernel.frame(kernel.readKernel64(rq.percpu + PERCPU_TOP_OF_STACK) - PT_REGS_SIZE)
    const args = (['di', 'si', 'dx', 'r10', 'r8', 'r9'] as const).map(
      (r) => `0x${BigInt.asUintN(64, BigInt(f.get(r))).toString(16)}`,
    )
    const what = `${syscallName(f.get('orig_ax'))}(${args.join(', ')})`
    return { out, ended: `HOST EXCEPTION in ${what}: ${(e as Error).stack}`, ok: false, kernel }
  }
}

let failed = false
for (const seed of seeds) {
  const scratch = mkdtempSync(join(tmpdir(), 'probekit-fuzz-'))
  try {
    const t0 = performance.now()
    const run = emulate(seed, scratch)
    const secs = ((performance.now() - t0) / 1000).toFixed(1)
    console.log(`seed ${seed}: ${count} calls in ${secs} s emulated; ${run.ended}`)
    console.log(
      run.out
        .split('\n')
        .filter((l) => !/ = \S+$/.test(l) && l !== '')
        .join(' | '),
    )
    const unimpl = [...run.kernel.unimplemented.keys()].filter((nr) => nr >= 0 && nr < 470)
    console.log(`unimplemented (${unimpl.length}): ${unimpl.map((nr) => syscallName(nr)).join(' ')}`)
    if (!run.ok) failed = true
    if (!native) continue
    // The same path natively (getcwd's length is an answer too), empty again.
    rmSync(scratch, { recursive: true, force: true })
    mkdirSync(scratch)
    const n = spawnSync(fuzzer.pathname, ['-v', seed, String(count), scratch], {
      cwd: scratch,
      env: {},
      encoding: 'utf8',
      maxBuffer: 1 << 30,
      timeout: 600_000,
      killSignal: 'SIGKILL',
    })
    const theirs = results(n.stdout)
    const ours = results(run.out)
    const differ = new Map<string, number>()
    for (const [k, t] of theirs.entries()) {
      const o = ours[k]
      if (!o || o.result === t.result) continue
      if (o.result === 'ENOSYS' && run.kernel.unimplemented.has(t.nr)) continue
      const key = `${syscallName(Number(BigInt.asIntN(32, BigInt(t.nr))))}: Linux ${t.result}, probekit ${o.result}`
      differ.set(key, (differ.get(key) ?? 0) + 1)
    }
    console.log(`native: exit ${n.status ?? n.signal}; ${differ.size} kinds of different answers`)
    for (const [k, v] of [...differ].sort((a, b) => b[1] - a[1])) console.log(`  ${v}× ${k}`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
process.exit(failed ? 1 : 0)
