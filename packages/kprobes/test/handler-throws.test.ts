// A handler that throws (issue 17) is a module that oopsed in the kernel: the kernel log gets the
// report (the probe, which of its functions and its name, CPU/PID/Comm, the probed context's
// registers, the JavaScript stack as the Call Trace), the run returns reason 'oops' (and every later
// run too: the machine stopped for good, as with panic_on_oops), no host exception escapes, what the
// guest wrote before is all there, and the probes can still be unregistered: kernel text is then
// byte-identical to the original. Also: kretprobe instances that ran out are counted in nmissed.

import * as assert from 'node:assert'
import { readFileSync } from 'node:fs'
import { Kernel, oopsReports } from '@probekit/kernel'
import { formatLinear } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { type Jprobe, type Kprobe, Kprobes, type Kretprobe } from '../src/index.js'
import { guestImage, SPINNER, textByte, textSnapshot } from './support/kernel.js'
import { syscall, TINY_BASE, tinyElf } from './support/tiny-elf.js'

const imm32 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff]
const BEFORE = 'before the probe\n'
const PATH = '/no/such/file'
/** write(1, BEFORE) once, then open(PATH, O_RDONLY) in a loop: do_sys_open(AT_FDCWD, PATH, 0, 0) each time. */
// biome-ignore format: one instruction per line
const OPENER = tinyElf([
  0x48, 0x8d, 0x35, ...imm32(42 - 7), // lea rsi, [rip → BEFORE]
  0xbf, ...imm32(1), // mov edi, 1
  0xba, ...imm32(BEFORE.length), // mov edx, len
  ...syscall(1),
  0x48, 0x8d, 0x3d, ...imm32(42 + BEFORE.length - 31), // 24: lea rdi, [rip → PATH]
  0x31, 0xf6, // xor esi, esi
  ...syscall(2),
  0xeb, 24 - 42, // jmp 24
  ...new TextEncoder().encode(BEFORE), // 42
  ...new TextEncoder().encode(PATH), 0,
])
const AT_FDCWD = -100
/** Where PATH is in the guest: after the ELF and program headers (120 bytes), the code and BEFORE. */
const PATH_ADDR = TINY_BASE + 120 + 42 + BEFORE.length

const PINGPONG = new Uint8Array(readFileSync(new URL('../../kernel/fixtures/bin/pingpong', import.meta.url)))

interface Booted {
  k: Kernel
  kp: Kprobes
  out: () => string
}

/** A kernel running OPENER as "opener" (and SPINNER on a second vCPU if asked), its stdout collected. */
function boot(cpus = 1): Booted {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    cpus,
    memorySize: 64 * 1024 * 1024,
    tickCycles: 20_000,
    stdout: (d) => {
      out += dec.decode(d)
    },
  })
  k.vfs.writeFile('/bin/opener', OPENER)
  k.vfs.writeFile('/bin/spinner', SPINNER)
  k.boot()
  k.spawn('/bin/opener', ['opener'])
  if (cpus > 1) k.spawn('/bin/spinner', ['spinner'])
  return { k, kp: new Kprobes(k), out: () => out }
}

/** The BUG line the report starts with, for a probe at symbol+0 (do_sys_open's entry by default). */
function bugLine(k: Kernel, what: string, error: string, symbol = 'do_sys_open'): string {
  const addr = k.symbol(symbol)
  return `BUG: ${what} for ${k.kallsyms.format(addr)} [at ${formatLinear(addr)}] raised ${error}`
}

/** The lines of the kernel log, without their timestamps. */
const logLines = (k: Kernel): string[] => k.printk.lines.map((r) => r.text)

/** The run stopped with the oops, for good; the report is in the log; the guest's output is intact. */
function expectOopsed(b: Booted, bug: string, result: { reason: string; detail: string }): string[] {
  expect(result.reason).toBe('oops')
  expect(result.detail).toBe(bug)
  const log = logLines(b.k)
  const at = log.indexOf(bug)
  expect(at, b.k.printk.text()).toBeGreaterThanOrEqual(0)
  const report = log.slice(at)
  expect(report[1]).toBe('Oops: 0000 [#1] SMP')
  expect(report).toContain('Call Trace:')
  expect(report.at(-1)).toBe('Kernel panic - not syncing: Fatal exception')
  // The report as a front end gets it (probekit run prints it on stderr).
  expect(oopsReports(b.k)).toEqual([report])
  expect(b.out()).toBe(BEFORE)
  // Stopped for good: every vCPU halted, a later run ends at once with the same oops.
  expect(b.k.machine.cpus.every((c) => c.halted)).toBe(true)
  const again = b.k.run(1_000_000).result
  expect(again).toEqual({ reason: 'oops', detail: bug, instructions: 0 })
  return report
}

describe('a handler that throws is an oops', () => {
  it('pre_handler: the report names the probe, the handler, the task and the registers; text comes back on unregister', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    let hits = 0
    const p: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: function handler_pre() {
        hits++
        throw new TypeError('boom')
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    const addr = p.addr as number
    const { result } = k.run(5_000_000)
    const report = expectOopsed(b, bugLine(k, 'kprobe pre_handler', 'TypeError: boom'), result)
    expect(hits).toBe(1)
    expect(report[2]).toBe('CPU: 0 PID: 1 Comm: opener')
    expect(report[3]).toBe('Handler: handler_pre')
    // show_regs of the probed context: just past the int3, do_sys_open(AT_FDCWD, PATH, O_RDONLY, 0).
    expect(report[4]).toBe(`RIP: 0010:${k.kallsyms.format(addr + 1)}`)
    expect(report.find((l) => l.startsWith('RDX:'))).toBe(
      // rdx: flags, O_RDONLY | O_LARGEFILE (force_o_largefile).
      `RDX: ${(0x8000).toString(16).padStart(16, '0')} RSI: ${formatLinear(PATH_ADDR).slice(2)} RDI: ${formatLinear(AT_FDCWD >>> 0).slice(2)}`,
    )
    // The Call Trace is the exception's JavaScript stack: it starts in the handler.
    expect(report[report.indexOf('Call Trace:') + 1]).toMatch(
      /^ \S*handler_pre \(.*handler-throws\.test\.ts:\d+:\d+\)$/,
    )
    // Linux disables nothing: the probe is still registered and armed until it is unregistered.
    expect(kp.probes()).toEqual([p])
    expect(textByte(k, addr)).toBe(0xcc)
    kp.unregister_kprobe(p)
    expect(kp.get_kprobe(addr)).toBeUndefined()
    expect(textSnapshot(k)).toEqual(before)
  })

  it('post_handler (the instruction was just single-stepped out of line): the same, and the text comes back', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    let pres = 0
    const p: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: () => {
        pres++
        return 0
      },
      post_handler: function handler_post() {
        throw new RangeError('post')
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'kprobe post_handler', 'RangeError: post'),
      k.run(5_000_000).result,
    )
    expect(pres).toBe(1)
    expect(report).toContain('Handler: handler_post')
    kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('fault_handler, asked about a fault in its pre_handler, throws: reported as the fault_handler', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    let afterPeek = 0
    const p: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: () => {
        kp.peek(0)
        afterPeek++
        return 0
      },
      fault_handler: function on_fault(_p, _regs, trapnr) {
        throw new Error(`trap ${trapnr}`)
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'kprobe fault_handler', 'Error: trap 14'),
      k.run(5_000_000).result,
    )
    expect(afterPeek).toBe(0)
    expect(report).toContain('Handler: on_fault')
    expect(p.nmissed).toBe(1)
    kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('kretprobe handler: reported as the kretprobe; its instance is not lost; the text comes back', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      maxactive: 1,
      handler: function ret_handler() {
        throw new Error('at return')
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'kretprobe handler', 'Error: at return'),
      k.run(5_000_000).result,
    )
    expect(report).toContain('Handler: ret_handler')
    expect(rp.nmissed).toBe(0)
    kp.unregister_kretprobe(rp)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('kretprobe entry_handler: reported as such; no instance taken, nothing counted as missed', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    let returns = 0
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      entry_handler: function entry() {
        throw new Error('at entry')
      },
      handler: () => {
        returns++
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'kretprobe entry_handler', 'Error: at entry'),
      k.run(5_000_000).result,
    )
    expect(report).toContain('Handler: entry')
    expect(returns).toBe(0)
    expect(rp.nmissed).toBe(0)
    kp.unregister_kretprobe(rp)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('jprobe entry: reported as the jprobe; the text comes back', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    const seen: number[] = []
    const jp: Jprobe = {
      kp: { symbol_name: 'do_sys_open' },
      entry: function mirror(dfd: number) {
        seen.push(dfd | 0) // an int: the upper half of rdi is not part of it
        throw new TypeError('in the mirror')
      },
    }
    expect(kp.register_jprobe(jp)).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'jprobe entry', 'TypeError: in the mirror'),
      k.run(5_000_000).result,
    )
    expect(seen).toEqual([AT_FDCWD])
    expect(report).toContain('Handler: mirror')
    // The registers are the stub's pt_regs: the probed function's arguments, ip in jprobe_entry_stub.
    expect(report.find((l) => l.startsWith('RIP:'))).toMatch(/^RIP: 0010:jprobe_entry_stub\+/)
    kp.unregister_jprobe(jp)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('in an aggregate the report names the child whose handler threw; a thrown non-Error is printed as it is', () => {
    const b = boot()
    const { k, kp } = b
    const before = textSnapshot(k)
    let firstRan = 0
    const first: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: () => {
        firstRan++
        return 0
      },
    }
    const second: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: function second_pre() {
        throw 'not an Error'
      },
    }
    expect(kp.register_kprobes([first, second])).toBe(0)
    const report = expectOopsed(
      b,
      bugLine(k, 'kprobe pre_handler', '"not an Error"'),
      k.run(5_000_000).result,
    )
    // Newest first: the second ran (and threw) before the first, which did not run at that hit.
    expect(firstRan).toBe(0)
    expect(report).toContain('Handler: second_pre')
    expect(report[report.indexOf('Call Trace:') + 1]).toBe(' <no JavaScript stack>')
    kp.unregister_kprobes([first, second])
    expect(textSnapshot(k)).toEqual(before)
  })

  it('on 2 vCPUs: the other CPU stops too; every probe unregisters and the text is the original', () => {
    const b = boot(2)
    const { k, kp } = b
    const before = textSnapshot(k)
    let hits = 0
    // getpid (the spinner, CPU 1) and open (the opener) both enter do_syscall_64.
    const p: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        if (++hits === 40) throw new Error('the 40th syscall')
        return 0
      },
    }
    const q: Kprobe = { symbol_name: 'do_sys_open', pre_handler: () => 0, post_handler: () => undefined }
    expect(kp.register_kprobes([p, q])).toBe(0)
    const bug = bugLine(k, 'kprobe pre_handler', 'Error: the 40th syscall', 'do_syscall_64')
    const { result } = k.run(50_000_000)
    expect(result.reason).toBe('oops')
    expect(result.detail).toBe(bug)
    expect(hits).toBe(40)
    expect(k.machine.cpus.every((c) => c.halted)).toBe(true)
    expect(k.run(1_000).result.instructions).toBe(0)
    kp.unregister_kprobes([p, q])
    expect(textSnapshot(k)).toEqual(before)
  })

  it("the host's own assertion failing in a handler (a test's expect, node:assert) is not an oops: it fails the run", () => {
    const { k, kp } = boot()
    const p: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: () => {
        assert.strictEqual(1, 2)
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    expect(() => k.run(5_000_000)).toThrow(/Expected values to be strictly equal/)
    expect(k.printk.text()).not.toMatch(/BUG:|Oops/)
  })
})

describe('nothing lost: kretprobe instances that run out are missed, and counted', () => {
  // pingpong pipe N: parent and child take turns sleeping in read(2) (vfs_read) on one vCPU, so two
  // calls of vfs_read are in flight at once: one instance (maxactive 1) runs out, two do not.
  function pingpong(maxactive: number) {
    const k = new Kernel({ image: guestImage(), cpus: 1, memorySize: 64 * 1024 * 1024, tickCycles: 20_000 })
    k.vfs.writeFile('/bin/pingpong', PINGPONG)
    k.boot()
    k.spawn('/bin/pingpong', ['pingpong', 'pipe', '20'])
    const kp = new Kprobes(k)
    let entries = 0
    let returns = 0
    const count: Kprobe = {
      symbol_name: 'vfs_read',
      pre_handler: () => {
        entries++
        return 0
      },
    }
    const rp: Kretprobe = {
      kp: { symbol_name: 'vfs_read' },
      maxactive,
      handler: () => {
        returns++
        return 0
      },
    }
    expect(kp.register_kprobe(count)).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(0)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    kp.unregister_kretprobe(rp)
    kp.unregister_kprobe(count)
    return { entries, returns, nmissed: rp.nmissed as number }
  }

  it('maxactive 1 with two sleepers: every entry is either returned through the handler or missed', () => {
    const one = pingpong(1)
    expect(one.entries).toBeGreaterThanOrEqual(40)
    expect(one.nmissed).toBeGreaterThan(0)
    // Every call has returned by the exit: none is outstanding, none is lost.
    expect(one.returns + one.nmissed).toBe(one.entries)
    // Two instances are enough for two tasks: nothing missed, the same calls.
    const two = pingpong(2)
    expect(two).toEqual({ entries: one.entries, returns: one.entries, nmissed: 0 })
  })
})
