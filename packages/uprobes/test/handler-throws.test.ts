// A uprobe handler, a uretprobe handler or an inode consumer's handler that throws (issue 17) is
// an oops, as for kprobes: the kernel log names the probe (FILE:0xOFFSET and the address), which
// function and its name, the thread, its user registers and the JavaScript stack; the run returns
// reason 'oops' for good; no host exception escapes; what the program printed before is all there;
// unregistering afterwards puts the original bytes back in the process's text. Also: return probes
// nested deeper than MAX_URETPROBE_DEPTH are missed, and counted in nmissed.

import { readFileSync } from 'node:fs'
import { Kernel } from '@probekit/kernel'
import { formatLinear } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import {
  MAX_URETPROBE_DEPTH,
  type Uprobe,
  type UprobeConsumer,
  type Uretprobe,
  uprobesOf,
} from '../src/index.js'
import { boot, fileBytesAt, fileOffset, fixture, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')
const UPROBED = fixture('uprobed')
const UFACT = symbol(UPROBED, 'ufact')
/** myprog's first lines: printed (line-buffered, on a terminal) before the third call of myfunc. */
const FIRST_TWO = 'myfunc(1, 2) = 8\nmyfunc(2, 3) = 14\n'

const guestImage = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url)))

/** myprog as pid 1 on a terminal (so libc writes each line as it is printed). */
function bootMyprog() {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    cpus: 1,
    memorySize: 128 * 1024 * 1024,
    consoleIsTty: true,
    stdout: (d) => {
      out += dec.decode(d)
    },
  })
  k.vfs.writeFile('/bin/myprog', MYPROG, 0o755)
  k.boot()
  const t = k.spawn('/bin/myprog', ['myprog'])
  return { k, t, up: uprobesOf(k), out: () => out }
}

const logLines = (k: Kernel): string[] => k.printk.lines.map((r) => r.text)

/** The report that starts with bug, checked as far as it is the same for every uprobe oops. */
function oopsReport(k: Kernel, bug: string, result: { reason: string; detail: string }): string[] {
  expect(result.reason).toBe('oops')
  expect(result.detail).toBe(bug)
  const log = logLines(k)
  const at = log.indexOf(bug)
  expect(at, k.printk.text()).toBeGreaterThanOrEqual(0)
  const report = log.slice(at)
  expect(report[1]).toBe('Oops: 0000 [#1] SMP')
  expect(report[2]).toBe('CPU: 0 PID: 1 Comm: myprog')
  expect(report).toContain('Call Trace:')
  expect(report).toContain('Kernel panic - not syncing: Fatal exception')
  // For good: a later run ends at once with the same oops.
  expect(k.run(1_000_000).result).toEqual({ reason: 'oops', detail: bug, instructions: 0 })
  return report
}

const hex16 = (v: number) => formatLinear(v).slice(2)
const myfuncBug = (what: string, error: string) =>
  `BUG: ${what} for /bin/myprog:0x${fileOffset(MYPROG, MYFUNC).toString(16)} [at ${formatLinear(MYFUNC)}] raised ${error}`

describe('a uprobe handler that throws is an oops', () => {
  it('uprobe handler: the report has the probe, the handler, the thread and its user registers; unregister restores the text', () => {
    const { k, t, up, out } = bootMyprog()
    const calls: number[] = []
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: function on_myfunc(_u, regs) {
        calls.push(regs.get('di'))
        if (calls.length === 3) throw new TypeError('the third call')
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(textOf(t, MYFUNC, 1)).toEqual(Uint8Array.of(0xcc))
    const { result, exit } = k.run(200_000_000)
    expect(exit).toBeNull()
    const report = oopsReport(k, myfuncBug('uprobe handler', 'TypeError: the third call'), result)
    expect(calls).toEqual([1, 2, 5])
    expect(out()).toBe(FIRST_TWO)
    expect(report[3]).toBe('Handler: on_myfunc')
    // The thread's user registers at the breakpoint: myfunc(5, -1).
    expect(report[4]).toBe(`RIP: 0033:0x${MYFUNC.toString(16)}`)
    expect(report.find((l) => l.startsWith('RDX:'))).toMatch(
      new RegExp(`RSI: ${hex16(-1)} RDI: ${hex16(5)}$`),
    )
    expect(report[report.indexOf('Call Trace:') + 1]).toMatch(
      /on_myfunc (\[as handler\] )?\(.*handler-throws\.test\.ts:\d+:\d+\)$/,
    )
    expect(up.warnings).toEqual([])
    // Still registered (nothing is disabled); unregistering puts the file's bytes back.
    expect(up.isRegistered(u)).toBe(true)
    up.unregister_uprobe(u)
    expect(up.isRegistered(u)).toBe(false)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    expect(up.warnings).toEqual([])
  })

  it('uretprobe handler: reported as the return probe of the function; unregister restores the text', () => {
    const { k, t, up, out } = bootMyprog()
    const returns: number[] = []
    const rp: Uretprobe = {
      u: { pid: t.pid, vaddr: MYFUNC },
      handler: function on_return(_ri, regs) {
        returns.push(regs.get('ax'))
        if (returns.length === 2) throw new RangeError('the second return')
      },
    }
    expect(up.register_uretprobe(rp)).toBe(0)
    const report = oopsReport(
      k,
      myfuncBug('uretprobe handler', 'RangeError: the second return'),
      k.run(200_000_000).result,
    )
    expect(returns).toEqual([8, 14])
    // The second line was not printed yet: the oops came as myfunc returned its value.
    expect(out()).toBe('myfunc(1, 2) = 8\n')
    expect(report[3]).toBe('Handler: on_return')
    up.unregister_uretprobe(rp)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    expect(up.warnings).toEqual([])
  })

  it("an inode probe's consumer handler: reported as the consumer's; uprobe_unregister restores the text", () => {
    const { k, t, up, out } = bootMyprog()
    let hits = 0
    const uc: UprobeConsumer = {
      handler: function consumer_handler() {
        if (++hits === 3) throw new Error('consumer')
        return 0
      },
    }
    expect(up.uprobe_register('/bin/myprog', fileOffset(MYPROG, MYFUNC), uc)).toBe(0)
    const report = oopsReport(
      k,
      myfuncBug('uprobe consumer handler', 'Error: consumer'),
      k.run(200_000_000).result,
    )
    expect(hits).toBe(3)
    expect(out()).toBe(FIRST_TWO)
    expect(report[3]).toBe('Handler: consumer_handler')
    up.uprobe_unregister('/bin/myprog', fileOffset(MYPROG, MYFUNC), uc)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
  })
})

describe('an oops outside a run', () => {
  it("a consumer's filter that throws during uprobe_register: the oops is logged, the next run ends at once with it", () => {
    const { k, t, up } = bootMyprog()
    const uc: UprobeConsumer = {
      handler: () => 0,
      filter: function only_some() {
        throw new TypeError('filter')
      },
    }
    // The filter said nothing: no breakpoint goes in (and no host exception comes out).
    expect(up.uprobe_register('/bin/myprog', fileOffset(MYPROG, MYFUNC), uc)).toBe(0)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    const bug = myfuncBug('uprobe consumer filter', 'TypeError: filter')
    expect(k.printk.text()).toContain(bug)
    expect(k.printk.text()).toContain('Handler: only_some')
    expect(k.run(1_000_000).result).toEqual({ reason: 'oops', detail: bug, instructions: 0 })
    up.uprobe_unregister('/bin/myprog', fileOffset(MYPROG, MYFUNC), uc)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
  })
})

describe('nothing lost: uretprobe instances that run out are counted', () => {
  it(`ufact(70): 70 nested calls, the ${MAX_URETPROBE_DEPTH} outermost hooked, the rest in nmissed; the output is unchanged`, () => {
    const plain = boot({ '/bin/uprobed': UPROBED })
    plain.k.spawn('/bin/uprobed', ['uprobed', 'recurse', '70'])
    expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'recurse', '70'])
    const up = uprobesOf(k)
    const args: number[] = []
    const rp: Uretprobe = { u: { pid: t.pid, vaddr: UFACT }, handler: (ri) => args.push(ri.sp) }
    let entries = 0
    const u: Uprobe = { pid: t.pid, vaddr: UFACT, handler: () => void entries++ }
    expect(up.register_uretprobe(rp)).toBe(0)
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(plain.out())
    expect(entries).toBe(70) // ufact(70) down to ufact(1)
    expect(rp.nmissed).toBe(70 - MAX_URETPROBE_DEPTH)
    expect(args).toHaveLength(MAX_URETPROBE_DEPTH)
    // The hooked ones are the outermost: they return last, innermost first (rising sp).
    expect([...args].sort((a, b) => a - b)).toEqual(args)
    expect(up.warnings).toEqual([])
  })
})
