// register_uprobe / unregister_uprobe on the seed's example (myprog's
// myfunc): the handler runs once per call, with the registers of the call,
// and the program prints what it prints unprobed; a handler that changes a
// register changes what the program computes (fault injection); several
// uprobes at one address run in registration order; the return codes.

import { EEXIST, EINVAL, ESRCH } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf, XOL_AREA_NAME } from '../src/index.js'
import { boot, fileBytesAt, fixture, runUntilDead, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')
const EXPECTED = [
  'myfunc(1, 2) = 8',
  'myfunc(2, 3) = 14',
  'myfunc(5, -1) = 23',
  'myfunc(10, 7) = 122',
  'myfunc(-4, 0) = 17',
  'calls: 5, sum: 184',
  '',
].join('\n')

describe('register_uprobe on myprog', () => {
  it('the handler runs once per call of myfunc, at its address with its arguments; the output is unchanged', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const seen: string[] = []
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (p, regs) => {
        seen.push(`${regs.get('ip') === p.vaddr} ${regs.get('di')} ${regs.get('si')}`)
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    // The int3 is in this process's text; the copy of the original is in the XOL area.
    expect(textOf(t, MYFUNC, 1)[0]).toBe(0xcc)
    const xol = up.xolAreaOf(t.tgid)
    expect(xol).not.toBeNull()
    const xolVma = t.mm.findVma(xol as number)
    expect(xolVma).toMatchObject({ name: XOL_AREA_NAME, prot: 5, kind: 'anon' })
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toBe(EXPECTED)
    expect(seen).toEqual(['true 1 2', 'true 2 3', 'true 5 -1', 'true 10 7', 'true -4 0'])
    expect(up.warnings).toEqual([])
    // The process exited: its uprobes went with it, and unregister is a no-op.
    expect(up.isProbed(t.tgid)).toBe(false)
    up.unregister_uprobe(u)
  })

  it('/proc/PID/maps shows the XOL area as an r-x anonymous mapping named [uprobes]', () => {
    const procfs = fixture('procfs')
    const { k, out } = boot({ '/bin/myprog': MYPROG, '/bin/procfs': procfs })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    // A handler that keeps myprog calling myfunc (back to the call, the return address popped) while
    // procfs reads its maps.
    let hold = true
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (_p, regs) => {
        if (!hold) return
        const sp = regs.get('sp')
        regs.set('ip', new DataView(textOf(t, sp, 8).buffer).getUint32(0, true) - 5)
        regs.set('sp', sp + 8)
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    const xol = up.xolAreaOf(t.tgid) as number
    const cat = k.spawn('/bin/procfs', ['procfs', 'cat', `/proc/${t.pid}/maps`])
    runUntilDead(k, [cat])
    hold = false
    runUntilDead(k, [t])
    expect(t.state).toBe('zombie')
    const hex = (n: number) => n.toString(16).padStart(8, '0')
    const line = out()
      .split('\n')
      .find((l) => l.endsWith(XOL_AREA_NAME))
    expect(line).toBe(`${hex(xol)}-${hex(xol + 4096)} r-xp 00000000 00:00 0`.padEnd(73) + XOL_AREA_NAME)
  })

  it('fault injection: a handler that changes a register changes what the program computes', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    let n = 0
    // The third call, myfunc(5, -1), computes with x = 0 instead: 0 + 3 * -1 + 1 = -2.
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (_p, regs) => {
        if (++n === 3) regs.set('di', 0)
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toBe(EXPECTED.replace('myfunc(5, -1) = 23', 'myfunc(5, -1) = -2').replace('184', '159'))
  })

  it('a handler that moves ip skips the original instruction (here: returns from myfunc with 42)', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: (_p, regs) => {
        // Emulate `mov $42, %rax; ret`: pop the return address into ip.
        const sp = regs.get('sp')
        const ret = new DataView(textOf(t, sp, 8).buffer).getUint32(0, true)
        regs.set('ax', 42)
        regs.set('sp', sp + 8)
        regs.set('ip', ret)
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toBe(
      ['1, 2', '2, 3', '5, -1', '10, 7', '-4, 0']
        .map((a) => `myfunc(${a}) = 42\n`)
        .join('')
        .concat('calls: 5, sum: 210\n'),
    )
  })

  it('several uprobes at one address run in registration order; unregistering one leaves the others', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const log: string[] = []
    const mk = (name: string): Uprobe => ({ pid: t.pid, vaddr: MYFUNC, handler: () => log.push(name) })
    const [a, b, c] = [mk('a'), mk('b'), mk('c')]
    expect(up.register_uprobe(b)).toBe(0)
    expect(up.register_uprobe(a)).toBe(0)
    expect(up.register_uprobe(c)).toBe(0)
    // Already registered: -EINVAL (Linux's 2010 code said -EBUSY, from u->kdata).
    expect(up.register_uprobe(a)).toBe(-EINVAL)
    up.unregister_uprobe(a)
    up.unregister_uprobe(a) // not registered any more: a no-op
    expect(textOf(t, MYFUNC, 1)[0]).toBe(0xcc) // b and c are still there
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toBe(EXPECTED)
    expect(log).toEqual(Array(5).fill(['b', 'c']).flat())
  })

  it('unregister puts the file bytes back and the probe is gone; the engines detach with the last uprobe', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: t.pid, vaddr: MYFUNC, handler: () => hits++ }
    expect(up.register_uprobe(u)).toBe(0)
    // Run to the second call, then take the probe out.
    for (let i = 0; i < 10_000 && hits < 2; i++) k.run(1_000)
    expect(hits).toBe(2)
    up.unregister_uprobe(u)
    expect(up.isProbed(t.tgid)).toBe(false)
    expect(textOf(t, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(hits).toBe(2)
    expect(out()).toBe(EXPECTED)
  })

  it('return codes: -ESRCH, -EINVAL (no handler, not executable, unmapped, the XOL area, a refused instruction), -EEXIST', () => {
    const { k } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const handler = () => undefined
    expect(up.register_uprobe({ pid: 999, vaddr: MYFUNC, handler })).toBe(-ESRCH)
    expect(up.register_uprobe({ pid: t.pid, vaddr: MYFUNC } as unknown as Uprobe)).toBe(-EINVAL)
    // .data (rw-), and nothing at all.
    expect(up.register_uprobe({ pid: t.pid, vaddr: symbol(MYPROG, '__stdout_FILE'), handler })).toBe(-EINVAL)
    expect(up.register_uprobe({ pid: t.pid, vaddr: 0x1000, handler })).toBe(-EINVAL)
    // syscall (0f 05) cannot be stepped out of line (one in myprog's `objdump -d`).
    const bytes = fileBytesAt(MYPROG, 0x401333, 2)
    expect([...bytes]).toEqual([0x0f, 0x05])
    expect(up.register_uprobe({ pid: t.pid, vaddr: 0x401333, handler })).toBe(-EINVAL)
    // Nothing was left behind by the refusals.
    expect(up.isProbed(t.tgid)).toBe(false)
    // An int3 somebody else put there (a debugger's): -EEXIST.
    t.mm.write(MYFUNC, Uint8Array.of(0xcc))
    expect(up.register_uprobe({ pid: t.pid, vaddr: MYFUNC, handler })).toBe(-EEXIST)
    t.mm.write(MYFUNC, fileBytesAt(MYPROG, MYFUNC, 1))
    // The XOL area is executable but never probed.
    const u: Uprobe = { pid: t.pid, vaddr: MYFUNC, handler }
    expect(up.register_uprobe(u)).toBe(0)
    const xol = up.xolAreaOf(t.tgid) as number
    expect(up.register_uprobe({ pid: t.pid, vaddr: xol, handler })).toBe(-EINVAL)
    // A dead process: -ESRCH; its uprobes are gone.
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(up.register_uprobe({ pid: t.pid, vaddr: MYFUNC, handler })).toBe(-ESRCH)
    up.unregister_uprobe(u)
  })
})
