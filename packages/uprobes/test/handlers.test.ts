// [Un]registration from a handler (the seed's 1.5 and 4.4): the call
// returns -EINPROGRESS, the operation runs after all handlers of that
// probepoint have run, and registration_callback(u, reg, result) says how
// it went - only for such delayed operations.

import { EINPROGRESS, EINVAL } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fileBytesAt, fixture, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')
const MAIN = symbol(MYPROG, 'main')
/** main's `call myfunc` (main+0x2d in `objdump -d`): hit once per loop iteration, before myfunc. */
const CALL_MYFUNC = MAIN + 0x2d

describe('registration from a handler', () => {
  it('register from a handler: -EINPROGRESS, done after the handlers, the callback gets (u, 1, 0)', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const log: string[] = []
    const inner: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (_u, regs) => log.push(`inner ${regs.get('di')}`),
      registration_callback: (u, reg, result) => log.push(`callback ${u === inner} ${reg} ${result}`),
    }
    let n = 0
    const outer: Uprobe = {
      pid: t.pid,
      vaddr: CALL_MYFUNC,
      handler: () => {
        n++
        log.push(`outer ${n}`)
        // In the second iteration, probe myfunc: it is hit from this very call on.
        if (n === 2) log.push(`register ${up.register_uprobe(inner)}`)
        // Registering it again once it is: the delayed result is -EINVAL.
        if (n === 3) log.push(`again ${up.register_uprobe(inner)}`)
      },
      registration_callback: () => log.push('outer callback (never: not delayed)'),
    }
    expect(up.register_uprobe(outer)).toBe(0)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toContain('calls: 5, sum: 184')
    expect(log).toEqual([
      'outer 1',
      'outer 2',
      `register ${-EINPROGRESS}`,
      'callback true 1 0',
      'inner 2',
      'outer 3',
      `again ${-EINPROGRESS}`,
      `callback true 1 ${-EINVAL}`,
      'inner 5',
      'outer 4',
      'inner 10',
      'outer 5',
      'inner -4',
    ])
  })

  it('a handler unregisters its own uprobe: it runs no more, the callback gets (u, 0, 0), the text is the file again', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const log: string[] = []
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (self, regs) => {
        log.push(`hit ${regs.get('di')}`)
        if (regs.get('di') === 5) {
          up.unregister_uprobe(self)
          log.push('unregistered (delayed)')
        }
      },
      registration_callback: (_u, reg, result) => log.push(`callback ${reg} ${result}`),
    }
    expect(up.register_uprobe(u)).toBe(0)
    let done = false
    for (let i = 0; i < 100_000 && !done; i++) done = k.run(2_000).exit !== null
    expect(out()).toContain('calls: 5, sum: 184')
    expect(log).toEqual(['hit 1', 'hit 2', 'hit 5', 'unregistered (delayed)', 'callback 0 0'])
    expect(up.isProbed(t.tgid)).toBe(false)
    up.unregister_uprobe(u) // a no-op now
  })

  it('the unregister of the last uprobe from its handler restores the text before the program goes on', () => {
    const { k } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    let restored: boolean | null = null
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (self) => up.unregister_uprobe(self),
      registration_callback: () => {
        restored = textOf(t, MYFUNC, 16).every((b, i) => b === fileBytesAt(MYPROG, MYFUNC, 16)[i])
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(restored).toBe(true)
  })
})
