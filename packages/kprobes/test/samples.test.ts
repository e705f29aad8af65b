// The seeds' three examples (kprobes.txt sections 8-10) as runnable host
// modules, on the bundled programs: their log lines are the documented ones.

import { readFileSync } from 'node:fs'
import { Kernel } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { jprobeExample, Kprobes, kprobeExample, kretprobeExample } from '../src/index.js'

const image = () => new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url)))
const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../kernel/fixtures/bin/${name}`, import.meta.url)))

function boot(program: string, argv: string[]) {
  const k = new Kernel({ image: image(), cpus: 2, memorySize: 64 * 1024 * 1024 })
  k.vfs.writeFile(`/bin/${program}`, fixture(program))
  k.boot()
  const run = () => {
    k.spawn(`/bin/${program}`, argv)
    return k.run(500_000_000)
  }
  return { k, run }
}

describe("the seeds' examples", () => {
  it('kprobe on do_fork: pre_handler with registers and a stack dump, post_handler; jprobe prints do_fork arguments', () => {
    const { k, run } = boot('proctree', ['/bin/proctree'])
    const kprobes = new Kprobes(k)
    const kp = kprobeExample(k, kprobes)
    const jp = jprobeExample(k, kprobes)
    expect(kp.init_module()).toBe(0)
    expect(jp.init_module()).toBe(0)
    const { exit } = run()
    kp.cleanup_module()
    jp.cleanup_module()
    expect(exit?.status).toBe(0)
    const log = k.printk.text()
    const doFork = BigInt.asUintN(64, BigInt(k.symbol('do_fork'))).toString(16)
    expect(log).toContain('kprobe registered')
    expect(log).toMatch(
      new RegExp(
        `pre_handler: p->addr=0x${doFork}, rip=${(BigInt(`0x${doFork}`) + 1n).toString(16)}, rflags=0x[0-9a-f]+`,
      ),
    )
    expect(log).toMatch(
      /Call Trace:\n.* \[<[0-9a-f]{16}>\] do_fork\+0x1\/0x[0-9a-f]+\n.* \[<[0-9a-f]{16}>\] sys_(fork|clone|vfork)\+/,
    )
    expect(log).toMatch(new RegExp(`post_handler: p->addr=0x${doFork}, rflags=0x`))
    expect(log).toMatch(/jprobe: clone_flags=0x11, stack_size=0x0, regs=0xffff888[0-9a-f]+/)
    expect(log).toMatch(/jprobe: clone_flags=0x4111,/) // the vfork
    expect(log.match(/pre_handler:/g)?.length).toBe(8) // every fork, vfork and clone passes through do_fork
    expect(log).toContain('kprobe unregistered')
    expect(log).toContain('jprobe unregistered')
  })

  it('kretprobe on sys_open reports failed calls, with maxactive 20 and nmissed at unload', () => {
    const { k, run } = boot('fileio', ['/bin/fileio', '/tmp'])
    const kprobes = new Kprobes(k)
    const rp = kretprobeExample(k, kprobes)
    expect(rp.init_module()).toBe(0)
    expect(rp.kretprobe.maxactive).toBe(20)
    run()
    rp.cleanup_module()
    const log = k.printk.text()
    expect(log).toMatch(/Planted return probe at 0xffffffff81[0-9a-f]+/)
    // fileio opens a missing file (ENOENT), a path through a file (ENOTDIR), "." for writing (EISDIR), an existing O_EXCL (EEXIST).
    for (const e of [-2, -20, -21, -17]) expect(log).toContain(`sys_open returns ${e}`)
    expect(log).toContain('kretprobe unregistered')
    expect(log).toContain('Missed probing 0 instances of sys_open')
  })
})
