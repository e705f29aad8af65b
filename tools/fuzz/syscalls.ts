// The long syscall-fuzzing run (issue 17): packages/kernel/fixtures/bin/syscallfuzz
// under the probekit kernel, COUNT calls for each seed, and on an x86-64
// Linux host the same run natively, call by call. The CI test
// (packages/kernel/test/syscall-fuzz.test.ts) does one short seed.
//
//   npx tsx --conditions=@probekit/source tools/fuzz/syscalls.ts [--count N] [--no-native] [--list] [--save DIR] SEED...
//
// Defaults: 100000 calls, seeds 1 2 3. Per seed it prints the time, how the
// run ended (a host exception names the call being served), the fuzzer's
// summary (counts per errno, canary, witness), the unimplemented calls met,
// and the calls answered differently from Linux, grouped per system call,
// those the test's allow-list (test/support/syscall-fuzz.ts) does not let
// pass first (NEW); --list prints each difference with its arguments, --save DIR
// writes both runs' -v output (DIR/probekit-SEED.txt, DIR/linux-SEED.txt). Then
// the scratch directories as the two runs left them, name by name: a call
// answered alike but done otherwise shows there first. Exit status 1
// if any run ended otherwise than by the fuzzer's exit 0, or answered a call
// otherwise than Linux where the allow-list does not say why.

import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  Directory,
  type Inode,
  Kernel,
  PERCPU_TOP_OF_STACK,
  PT_REGS_SIZE,
  Symlink,
  syscallName,
} from '../../packages/kernel/src/index.js'
import {
  compareCalls,
  makeScratch,
  parseCalls,
  runNative,
} from '../../packages/kernel/test/support/syscall-fuzz.js'
import { optionChecks } from './options.js'

const root = new URL('../../packages/kernel/', import.meta.url)
const fuzzer = new URL('fixtures/bin/syscallfuzz', root)
const image = new Uint8Array(readFileSync(new URL('guest/vmlinux', root)))

const { fail, integer } = optionChecks('syscalls')
const argv = process.argv.slice(2)
let count = 100_000
let native = process.platform === 'linux' && process.arch === 'x64'
let list = false
let save = ''
const seeds: string[] = []
for (let k = 0; k < argv.length; k++) {
  if (argv[k] === '--count') count = integer('count', argv[++k], count)
  else if (argv[k] === '--no-native') native = false
  else if (argv[k] === '--list') list = true
  else if (argv[k] === '--save') save = argv[++k] ?? fail('--save wants a directory')
  else if (/^\d+$/.test(argv[k])) seeds.push(argv[k])
  else fail(`unknown argument '${argv[k]}' (--count N, --no-native, --list, --save DIR, SEED...)`)
}
if (seeds.length === 0) seeds.push('1', '2', '3')

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
  // Its first process runs the fuzzer as a child: not pid 1 nor a session leader, as natively.
  kernel.vfs.writeFile('/bin/fuzzinit', new Uint8Array(readFileSync(new URL('fuzzinit', fuzzer))))
  kernel.vfs.mkdirp(scratch)
  kernel.boot()
  kernel.spawn('/bin/fuzzinit', ['fuzzinit', '/bin/syscallfuzz', '-v', seed, String(count), scratch], [])
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

// The scratch directory as each run left it, one line per name (type, permissions, owner, size or
// link target): a call answered alike but done otherwise shows here, where later calls would only
// show it by answering differently in turn.
function describe(rel: string, mode: number, uid: number, gid: number, size: string): string {
  return `${rel} ${'?pc?d?b?f?l?s??'[(mode >> 12) & 15]} ${(mode & 0o7777).toString(8)} ${uid}:${gid} ${size}`
}
function emulatedTree(dir: Directory, rel = ''): string[] {
  const out: string[] = []
  for (const [name, node] of [...dir.children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const r = `${rel}${name}`
    const n = node as Inode
    const size = n instanceof Symlink ? `-> ${n.target}` : n instanceof Directory ? '' : String(n.size())
    out.push(describe(r, n.mode, n.uid ?? 0, n.gid ?? 0, size))
    if (n instanceof Directory) out.push(...emulatedTree(n, `${r}/`))
  }
  return out
}
function nativeTree(dir: string, rel = ''): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const r = `${rel}${name}`
    const st = lstatSync(join(dir, name))
    const size = st.isSymbolicLink()
      ? `-> ${readlinkSync(join(dir, name))}`
      : st.isDirectory()
        ? ''
        : String(st.size)
    out.push(describe(r, st.mode, st.uid, st.gid, size))
    if (st.isDirectory()) out.push(...nativeTree(join(dir, name), `${r}/`))
  }
  return out
}

let failed = false
for (const seed of seeds) {
  const scratch = makeScratch()
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
    const scratchDir = run.kernel.vfs.lookup(scratch)
    const ours = scratchDir instanceof Directory ? emulatedTree(scratchDir) : []
    if (!native) continue
    // The same path natively (getcwd's length is an answer too), empty again.
    rmSync(scratch, { recursive: true, force: true })
    mkdirSync(scratch)
    const n = runNative(fuzzer.pathname, ['-v', seed, String(count)], scratch, 600_000)
    if (save) {
      writeFileSync(join(save, `probekit-${seed}.txt`), run.out)
      writeFileSync(join(save, `linux-${seed}.txt`), n.stdout)
    }
    const theirs = nativeTree(scratch)
    const only = (a: string[], b: string[]) => a.filter((l) => !b.includes(l))
    const treeDiff = [
      ...only(theirs, ours).map((l) => `Linux    ${l}`),
      ...only(ours, theirs).map((l) => `probekit ${l}`),
    ]
    console.log(
      treeDiff.length === 0
        ? `scratch directories alike (${ours.length} names)`
        : `scratch directories differ:\n  ${treeDiff.join('\n  ')}`,
    )
    const differ = compareCalls(
      parseCalls(n.stdout),
      parseCalls(run.out),
      new Set(run.kernel.unimplemented.keys()),
    )
    const groups = new Map<string, { n: number; allowed: boolean }>()
    for (const d of differ) {
      const key = `${d.name}: Linux ${d.linux}, probekit ${d.probekit}`
      const g = groups.get(key) ?? { n: 0, allowed: d.allowed !== undefined }
      g.n++
      groups.set(key, g)
    }
    const open = differ.filter((d) => !d.allowed)
    if (open.length > 0) failed = true
    console.log(
      `native: exit ${n.status ?? n.signal}; ${groups.size} kinds of different answers, ${open.length} calls not allowed`,
    )
    for (const [k, g] of [...groups].sort(
      (a, b) => Number(a[1].allowed) - Number(b[1].allowed) || b[1].n - a[1].n,
    ))
      console.log(`  ${g.allowed ? '   ' : 'NEW'} ${g.n}× ${k}`)
    if (list)
      for (const d of differ)
        console.log(
          `  ${d.allowed ? '   ' : 'NEW'} #${d.i} ${d.name}(${d.args}): Linux ${d.linux}, probekit ${d.probekit}`,
        )
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
process.exit(failed ? 1 : 0)
