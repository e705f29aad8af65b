// The syscall fuzzer (fixtures/syscallfuzz.c, issue 17): a guest program that
// makes random system calls with random and boundary arguments. Under the
// kernel it must end with its own exit (a host exception out of the kernel
// fails the test and names the call), its witness child must come out
// intact (no call corrupted another process), and, where the host is x86-64
// Linux, each call must get the answer Linux gives it natively (the same
// seed, the same scratch path), except for the differences listed in
// ALLOWED (support/syscall-fuzz.ts). The long runs are tools/fuzz/syscalls.ts.

import { readFileSync, rmSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Kernel, PERCPU_TOP_OF_STACK, PT_REGS_SIZE, SYSCALL_NAMES_64, syscallName } from '../src/index.js'
import { guestImage } from './support/run.js'
import { compareCalls, makeScratch, parseCalls, runNative } from './support/syscall-fuzz.js'

const FUZZER = new URL('../fixtures/bin/syscallfuzz', import.meta.url)
const onHost = process.platform === 'linux' && process.arch === 'x64'
const SEED = 1
/** About 8 s emulated on a loaded 2-core machine. */
const COUNT = 2000

interface EmulatedRun {
  out: string
  status: number | null
  detail: string
  kernel: Kernel
}

/** Run the fuzzer under the kernel; a host exception is rethrown naming the call being served. */
function runEmulated(args: string[], scratch: string): EmulatedRun {
  let out = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image: guestImage(),
    cpus: 1,
    memorySize: 128 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
    stderr: (d) => {
      out += dec.decode(d)
    },
  })
  kernel.vfs.writeFile('/bin/syscallfuzz', new Uint8Array(readFileSync(FUZZER)))
  // Its first process runs the fuzzer as a child: not pid 1 nor a session leader, as natively.
  kernel.vfs.writeFile('/bin/fuzzinit', new Uint8Array(readFileSync(new URL('fuzzinit', FUZZER))))
  kernel.vfs.mkdirp(scratch)
  kernel.boot()
  kernel.spawn('/bin/fuzzinit', ['fuzzinit', '/bin/syscallfuzz', ...args, scratch], [])
  try {
    const { result, exit } = kernel.run(20_000_000_000)
    return { out, status: exit ? exit.status : null, detail: `${result.reason}: ${result.detail}`, kernel }
  } catch (e) {
    // The call being served: the pt_regs at the top of current's kernel stack.
    const rq = kernel.sched.rq[0]
    const regs = kernel.readKernel64(rq.percpu + PERCPU_TOP_OF_STACK) - PT_REGS_SIZE
    const f = kernel.frame(regs)
    const nr = f.get('orig_ax')
    const args = (['di', 'si', 'dx', 'r10', 'r8', 'r9'] as const).map(
      (r) => `0x${BigInt.asUintN(64, BigInt(f.get(r))).toString(16)}`,
    )
    throw new Error(
      `host exception in ${syscallName(nr)}(${args.join(', ')}) of pid ${rq.current.pid}: ${(e as Error).stack}`,
    )
  }
}

describe('syscall fuzzer', () => {
  const scratch = onHost ? makeScratch() : '/tmp/probekit-fuzz'
  const args = ['-v', String(SEED), String(COUNT)]
  let emulated: EmulatedRun

  it(`makes ${COUNT} calls under the kernel and exits by itself, its witness intact`, () => {
    emulated = runEmulated(args, scratch)
    const { out, status, detail, kernel } = emulated
    const names = [...kernel.unimplemented.entries()]
      .filter(([nr]) => nr in SYSCALL_NAMES_64) // assigned numbers only
      .map(([nr, n]) => `${syscallName(nr)}×${n}`)
    console.info(`unimplemented system calls met (${names.length}): ${names.join(' ')}`)
    expect(detail).toMatch(/init exited/)
    expect(parseCalls(out)).toHaveLength(COUNT)
    expect(out).toMatch(/^canary intact$/m)
    expect(out).toMatch(/^witness intact$/m)
    expect(status).toBe(0)
  }, 300_000)

  it.runIf(onHost)(
    'answers each call as Linux does, but for the listed differences',
    () => {
      try {
        const native = runNative(FUZZER.pathname, args, scratch, 120_000)
        expect(native.status, native.stderr).toBe(0)
        const theirs = parseCalls(native.stdout)
        const ours = parseCalls(emulated.out)
        expect(theirs).toHaveLength(COUNT)
        expect(ours).toHaveLength(COUNT)
        const differ = compareCalls(theirs, ours, new Set(emulated.kernel.unimplemented.keys()))
          .filter((d) => !d.allowed)
          .map((d) => `#${d.i} ${d.name}(${d.args}): Linux ${d.linux}, probekit ${d.probekit}`)
        expect(differ).toEqual([])
      } finally {
        rmSync(scratch, { recursive: true, force: true })
      }
    },
    300_000,
  )
})
