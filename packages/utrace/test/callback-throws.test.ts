// An engine callback that throws (issue 17) is an oops, as a probe handler's is: the kernel log
// names the callback and the thread (and the function, if it has a name of its own), shows the
// thread's registers and the JavaScript stack; the run returns reason 'oops', for good; no host
// exception escapes; what the program wrote before is all there; no callback runs after it, and the
// engine can still be detached.

import { readFileSync } from 'node:fs'
import { Kernel } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  UTRACE_ATTACH_CREATE,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_RESUME,
  type UtraceEngineOps,
  utraceOf,
} from '../src/index.js'
import { boot, engineOf, fixture, syscall, tinyElf } from './support/kernel.js'

const guestImage = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url)))

/** What myprog prints, one line per write on a terminal. */
const MYPROG_LINES = [
  'myfunc(1, 2) = 8\n',
  'myfunc(2, 3) = 14\n',
  'myfunc(5, -1) = 23\n',
  'myfunc(10, 7) = 122\n',
  'myfunc(-4, 0) = 17\n',
]
/** fork(), then both exit(0). */
const FORK_EXIT = tinyElf([...syscall(57), 0x31, 0xff, ...syscall(60)])

const logLines = (k: Kernel): string[] => k.printk.lines.map((r) => r.text)
const hex16 = (v: number) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0')

/** The run stopped with the oops (for good); the report starting with bug is in the log. */
function oopsReport(k: Kernel, bug: string, result: { reason: string; detail: string }): string[] {
  expect(result.reason).toBe('oops')
  expect(result.detail).toBe(bug)
  const log = logLines(k)
  const at = log.indexOf(bug)
  expect(at, k.printk.text()).toBeGreaterThanOrEqual(0)
  const report = log.slice(at)
  expect(report[1]).toBe('Oops: 0000 [#1] SMP')
  expect(report).toContain('Call Trace:')
  expect(report).toContain('Kernel panic - not syncing: Fatal exception')
  expect(k.run(1_000_000).result).toEqual({ reason: 'oops', detail: bug, instructions: 0 })
  return report
}

describe('an engine callback that throws is an oops', () => {
  it('report_syscall_exit: the report has the callback, its name, the thread and the registers at the exit', () => {
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
    k.vfs.writeFile('/bin/myprog', fixture('myprog'), 0o755)
    k.boot()
    const task = k.spawn('/bin/myprog', ['myprog'])
    const utrace = utraceOf(k)
    const writes: number[] = []
    let after = 0
    const ops: UtraceEngineOps = {
      report_syscall_exit: function on_exit(action, _e, regs) {
        if (writes.length === 3) after++
        // write(1, ...) or writev(1, ...): libc's line-buffered stdout, one line each.
        const nr = regs.get('orig_ax')
        if ((nr === 1 || nr === 20) && regs.get('di') === 1) {
          writes.push(regs.get('ax'))
          if (writes.length === 3) throw new TypeError('after the third line')
        }
        return action
      },
    }
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.SYSCALL_EXIT)).toBe(0)
    const { result, exit } = k.run(200_000_000)
    expect(exit).toBeNull()
    const bug = `BUG: utrace engine report_syscall_exit for pid ${task.pid} (myprog) raised TypeError: after the third line`
    const report = oopsReport(k, bug, result)
    // The third write had been made: its line is out, and it is what the registers show.
    expect(out).toBe(MYPROG_LINES.slice(0, 3).join(''))
    expect(writes).toEqual(MYPROG_LINES.slice(0, 3).map((l) => l.length))
    expect(after).toBe(0)
    expect(report[2]).toBe(`CPU: 0 PID: ${task.pid} Comm: myprog`)
    expect(report[3]).toBe('Handler: on_exit')
    expect(report[4]).toMatch(/^RIP: 0033:0x[0-9a-f]+$/)
    expect(report[5]).toMatch(/^RSP: 002b:[0-9a-f]{16} EFLAGS: [0-9a-f]{8} ORIG_RAX: 00000000000000(01|14)$/)
    expect(report[6]).toMatch(new RegExp(`^RAX: ${hex16(MYPROG_LINES[2].length)} `))
    expect(report[report.indexOf('Call Trace:') + 1]).toMatch(
      /on_exit .*callback-throws\.test\.ts:\d+:\d+\)$/,
    )
    // The engine can still be let go of; nothing more is reported to it.
    expect(utrace.utrace_control(task, e, UTRACE_DETACH)).toBe(0)
    expect(k.run(1_000_000).result.reason).toBe('oops')
    expect(after).toBe(0)
  })

  it('report_clone, an arrow named after its field: no Handler line; the other engine is not called after the oops', () => {
    const { k } = boot({ '/bin/t': FORK_EXIT })
    const task = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const seen: string[] = []
    const first: UtraceEngineOps = {
      report_clone: () => {
        seen.push('first')
        throw new Error('in report_clone')
      },
    }
    const second: UtraceEngineOps = {
      report_clone: () => {
        seen.push('second')
        return UTRACE_RESUME
      },
    }
    for (const ops of [first, second]) {
      const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
      expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.CLONE)).toBe(0)
    }
    const bug = `BUG: utrace engine report_clone for pid ${task.pid} (t) raised Error: in report_clone`
    const report = oopsReport(k, bug, k.run(10_000_000).result)
    expect(seen).toEqual(['first'])
    expect(report[3]).toMatch(/^RIP: 0033:/) // no Handler line: the function is only "report_clone"
    // The registers are the parent's at its fork: orig_ax 57.
    expect(report[4]).toMatch(/ ORIG_RAX: 0000000000000039$/)
  })

  it('report_quiesce (before the event callback): reported as report_quiesce; the event callback is not made', () => {
    const { k } = boot({ '/bin/t': FORK_EXIT })
    const task = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    let clones = 0
    const ops: UtraceEngineOps = {
      report_quiesce: function quiesce_hook() {
        throw new RangeError('quiesce')
      },
      report_clone: () => {
        clones++
        return UTRACE_RESUME
      },
    }
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.CLONE | UTRACE_EVENT.QUIESCE)).toBe(0)
    const bug = `BUG: utrace engine report_quiesce for pid ${task.pid} (t) raised RangeError: quiesce`
    const report = oopsReport(k, bug, k.run(10_000_000).result)
    expect(report).toContain('Handler: quiesce_hook')
    expect(clones).toBe(0)
  })
})
