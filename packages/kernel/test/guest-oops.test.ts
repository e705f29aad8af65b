// An oops of the guest kernel's own code (issue 17): a kernel-mode fault with no exception-table
// fixup is reported as Linux reports it - the guest's die() prints the BUG line, "Oops: ... [#1]" and
// the registers; the host adds CPU/PID/Comm, RIP as a symbol, the Call Trace walked up the guest's
// frame pointers and CR2 - then, as a probe handler's oops does (panic_on_oops), every vCPU stops:
// the run returns reason 'oops', and so does every later run. The bug is made by patching a kernel
// function's first instruction, as a broken kernel would have it.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Kernel, oopsReports } from '../src/index.js'
import { guestImage } from './support/run.js'

const HELLO = new Uint8Array(readFileSync(new URL('../fixtures/bin/hello', import.meta.url)))

/** hello run with do_group_exit's first instruction replaced by bytes: what it printed and the run's end. */
function brokenExit(bytes: number[], cpus = 1) {
  let stdout = ''
  const k = new Kernel({
    image: guestImage(),
    cpus,
    stdout: (d) => void (stdout += new TextDecoder().decode(d)),
  })
  k.vfs.writeFile('/bin/hello', HELLO)
  k.boot()
  k.services.textPoke(k.symbol('do_group_exit'), bytes)
  k.spawn('/bin/hello', ['hello'], [])
  const { result, exit } = k.run(50_000_000)
  return { k, result, exit, stdout: () => stdout }
}

/** The report's lines from "CPU:" on, checked as far as they are the same for every oops in hello's exit_group. */
function expectTail(report: readonly string[], cpuLine: number) {
  expect(report[cpuLine]).toBe('CPU: 0 PID: 1 Comm: hello')
  expect(report[cpuLine + 1]).toMatch(/^RIP: 0010:do_group_exit\+0x0\/0x[0-9a-f]+$/)
  const trace = report.slice(report.indexOf('Call Trace:') + 1, report.indexOf(' </TASK>'))
  expect(trace[0]).toBe(' <TASK>')
  // The guest's own callers, innermost first, as %pB shows return addresses (a noreturn call that
  // ends its caller is shown in the caller, at its end).
  const fn = String.raw`\+0x[0-9a-f]+\/0x[0-9a-f]+`
  expect(trace.slice(1)).toEqual([
    expect.stringMatching(new RegExp(`^ sys_exit_group${fn}$`)),
    expect.stringMatching(new RegExp(`^ __x64_sys_exit_group${fn}$`)),
    expect.stringMatching(new RegExp(`^ do_syscall_64${fn}$`)),
    expect.stringMatching(new RegExp(`^ entry_SYSCALL_64${fn}$`)),
  ])
  expect(report.at(-2)).toBe('---[ end trace 0000000000000000 ]---')
  expect(report.at(-1)).toBe('Kernel panic - not syncing: Fatal exception')
}

describe('an oops of the guest kernel', () => {
  it('a #PF on an unmapped kernel address: BUG line, Oops, registers, Call Trace, CR2; the run stops with reason oops', () => {
    // mov rax, [0xffffffffc0000000]: nothing is mapped there.
    const { k, result, exit, stdout } = brokenExit([0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0xc0])
    expect(result.reason).toBe('oops')
    expect(result.detail).toMatch(
      /^BUG: unable to handle page fault for address: ffffffffc0000000; IP: do_group_exit\+0x0\/0x[0-9a-f]+$/,
    )
    expect(exit).toBeNull() // nobody exited: the machine stopped in exit_group
    expect(stdout()).toBe('hello, world\n') // what the program wrote before is out
    const [report] = oopsReports(k)
    expect(oopsReports(k)).toHaveLength(1)
    expect(report[0]).toBe('BUG: unable to handle page fault for address: ffffffffc0000000')
    // Not present, read, kernel mode: error code 0.
    expect(report[1]).toBe('Oops: 0000 [#1] CPU: 0')
    expect(report[2]).toMatch(/^RIP: 0010:ffffffff81[0-9a-f]{6} EFLAGS: [0-9a-f]{8}$/)
    expect(report.slice(3, 9).join('\n')).toMatch(
      /^RSP: 0018:[0-9a-f]{16} .*\nRAX: [\s\S]*R13: [0-9a-f]{16} R14/,
    )
    expectTail(report, 9)
    expect(report).toContain('CR2: ffffffffc0000000')
    // The whole report is in the kernel log, in order.
    const log = k.printk.lines.map((l) => l.text)
    const at = log.indexOf(report[0])
    expect(log.slice(at, at + report.length)).toEqual(report)
    // Stopped for good: every vCPU halted, a later run ends at once with the same oops.
    expect(k.machine.cpus.every((c) => c.halted)).toBe(true)
    expect(k.run(1_000_000).result).toEqual({ reason: 'oops', detail: result.detail, instructions: 0 })
  })

  it('an invalid opcode (ud2) in kernel mode on a 2-vCPU machine: die("invalid opcode"), no BUG line, no CR2; both vCPUs stop', () => {
    const { k, result } = brokenExit([0x0f, 0x0b], 2)
    expect(result.reason).toBe('oops')
    expect(result.detail).toMatch(/^invalid opcode: 0000 \[#1\]; IP: do_group_exit\+0x0\/0x[0-9a-f]+$/)
    const [report] = oopsReports(k)
    expect(report[0]).toMatch(/^invalid opcode: 0000 \[#1\] CPU: 0$/)
    expectTail(report, 8)
    expect(report.some((l) => l.startsWith('CR2:'))).toBe(false)
    expect(k.machine.cpus.map((c) => c.halted)).toEqual([true, true])
  })
})
