// The uprobes seed's example (uprobe_example.c) on its target: myprog,
// with vaddr = myfunc's address from the symbol table (the seed's `nm -p
// myprog | awk '$3=="myfunc"'`). One "Hit #N" line per call, the total at
// unload, and the program's output as it is without the probe. With an
// engine watching its signals, the breakpoint traps leave no "unhandled
// signal" line in dmesg.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { uprobeExample, uprobesOf } from '../src/index.js'
import { boot, fixture, symbol } from './support/kernel.js'

const expected = readFileSync(
  new URL('../../kernel/fixtures/expected/myprog.stdout', import.meta.url),
  'utf8',
)

describe("the seed's uprobe example", () => {
  it('counts the calls of myfunc in myprog, reporting each (verbose), the total at unload', () => {
    const myprog = fixture('myprog')
    const { k, out } = boot({ '/bin/myprog': myprog })
    const task = k.spawn('/bin/myprog', ['myprog'])
    const vaddr = symbol(myprog, 'myfunc')
    const from = k.printk.lines.length
    const mod = uprobeExample(k, uprobesOf(k), { pid: task.pid, vaddr })
    expect(mod.init_module()).toBe(0)
    expect(k.run(500_000_000).exit?.status).toBe(0)
    mod.cleanup_module()
    const hex = `0x${vaddr.toString(16)}`
    expect(k.printk.lines.slice(from).map((l) => l.text)).toEqual([
      `Registering uprobe on pid ${task.pid}, vaddr ${hex}`,
      ...[1, 2, 3, 4, 5].map((n) => `Hit #${n} on probepoint at ${hex}`),
      `Unregistering uprobe on pid ${task.pid}, vaddr ${hex}`,
      'Probepoint was hit 5 times',
    ])
    expect(out()).toBe(expected)
  })

  it('verbose=0 reports only the total; a process that is not there: the error, as the module prints it', () => {
    const myprog = fixture('myprog')
    const { k } = boot({ '/bin/myprog': myprog })
    const task = k.spawn('/bin/myprog', ['myprog'])
    const quiet = uprobeExample(k, uprobesOf(k), {
      pid: task.pid,
      vaddr: symbol(myprog, 'myfunc'),
      verbose: 0,
    })
    expect(quiet.init_module()).toBe(0)
    k.run(500_000_000)
    quiet.cleanup_module()
    expect(k.printk.lines.filter((l) => l.text.startsWith('Hit #'))).toEqual([])
    expect(quiet.nhits).toBe(5)
    const missing = uprobeExample(k, uprobesOf(k), { pid: 4242, vaddr: 0x401000 })
    expect(missing.init_module()).toBe(-3) // -ESRCH
    expect(k.printk.lines.at(-1)?.text).toBe('register_uprobe() failed, returned -3')
  })
})
