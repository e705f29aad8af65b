// Return probes (the seed's TODO b): the entry hit swaps the return
// address on the user stack for the XOL area's trampoline; the trampoline's
// int3 runs the handler with the return value and sends the thread on to
// the real return address. Nested and recursive calls return innermost
// first; longjmp past instances drops them without their handlers; a
// thread that exits inside a probed function leaks nothing; a fork child's
// copy of the stack gets the real addresses back.

import { copyFromUser } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Uprobe, type Uretprobe, uprobesOf } from '../src/index.js'
import { boot, fixture, runUntilDead, symbol } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')
const UPROBED = fixture('uprobed')
const at = (name: string) => symbol(UPROBED, name)

/** The program's run without probes (the oracle for its output). */
function plainRun(args: string[]): string {
  const { k, out } = boot({ '/bin/uprobed': UPROBED })
  k.spawn('/bin/uprobed', ['uprobed', ...args])
  expect(k.run(2_000_000_000).exit?.status).toBe(0)
  return out()
}

describe('uretprobes', () => {
  it("myfunc's five returns: the handler sees each return value, at the real return address, on the thread's stack", () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const entries: number[] = []
    const returns: string[] = []
    const u: Uprobe = { pid: t.pid, vaddr: MYFUNC, handler: (_u, regs) => entries.push(regs.get('sp')) }
    const rp: Uretprobe = {
      u: { pid: t.pid, vaddr: MYFUNC },
      handler: (ri, regs) => {
        // ip is already the real return address; sp is just past the slot that held it.
        expect(regs.get('ip')).toBe(ri.ret_addr)
        expect(regs.get('sp')).toBe(ri.sp + 8)
        expect(ri.func).toBe(MYFUNC)
        expect(ri.rp).toBe(rp)
        returns.push(`${regs.get('ax')}`)
      },
    }
    // An entry probe and a return probe on one address share the probepoint.
    expect(up.register_uprobe(u)).toBe(0)
    expect(up.register_uretprobe(rp)).toBe(0)
    expect(up.register_uretprobe(rp)).toBe(-22)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(returns).toEqual(['8', '14', '23', '122', '17'])
    expect(entries).toHaveLength(5)
    expect(out()).toBe(
      'myfunc(1, 2) = 8\nmyfunc(2, 3) = 14\nmyfunc(5, -1) = 23\nmyfunc(10, 7) = 122\nmyfunc(-4, 0) = 17\ncalls: 5, sum: 184\n',
    )
    expect(rp.nmissed).toBe(0)
    expect(up.warnings).toEqual([])
  })

  it('recursion: ufact(10) returns ten times, innermost first, each with its value; the stack holds the trampoline meanwhile', () => {
    const expected = plainRun(['recurse', '10'])
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'recurse', '10'])
    const up = uprobesOf(k)
    const values: number[] = []
    let deepest = 0
    const rp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('ufact') },
      handler: (_ri, regs) => {
        const cur = up.current!
        deepest = Math.max(deepest, up.returnInstancesOf(cur).length + 1)
        values.push(regs.get('ax'))
      },
    }
    let trampolineSeen = false
    const peek: Uprobe = {
      pid: t.pid,
      vaddr: at('ufact'),
      handler: (_u, regs) => {
        // Past the first entry, the caller's return slot (ufact's own call) holds the trampoline.
        const inst = up.returnInstancesOf(up.current!)
        if (inst.length > 0) {
          const slot = inst[inst.length - 1].sp
          const word = new DataView(copyFromUser(t.mm, slot, 8).buffer).getBigUint64(0, true)
          const xol = up.xolAreaOf(t.tgid)!
          if (word >= BigInt(xol) && word < BigInt(xol + 4096)) trampolineSeen = true
          expect(regs.get('sp')).toBeLessThan(slot)
        }
      },
    }
    // peek first: handlers run in registration order, so it looks before this entry's instance is pushed.
    expect(up.register_uprobe(peek)).toBe(0)
    expect(up.register_uretprobe(rp)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(expected)
    expect(values).toEqual([1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800])
    expect(deepest).toBe(10)
    expect(trampolineSeen).toBe(true)
    expect(up.warnings).toEqual([])
  })

  it('longjmp past five probed frames: their handlers never run, the instances go at the next entry, later returns are right', () => {
    const expected = plainRun(['longjmp', '4'])
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'longjmp', '4'])
    const up = uprobesOf(k)
    const seen: string[] = []
    let pendingAtUfunc = -1
    const jumpRp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('ujump') },
      handler: (_ri, regs) => seen.push(`ujump ${regs.get('ax')}`),
    }
    let ujumpEntries = 0
    const ujumpEntry: Uprobe = { pid: t.pid, vaddr: at('ujump'), handler: () => ujumpEntries++ }
    const funcRp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('ufunc') },
      handler: (_ri, regs) => {
        pendingAtUfunc = up.returnInstancesOf(up.current!).length
        seen.push(`ufunc ${regs.get('ax')}`)
      },
    }
    expect(up.register_uretprobe(jumpRp)).toBe(0)
    expect(up.register_uprobe(ujumpEntry)).toBe(0)
    expect(up.register_uretprobe(funcRp)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(expected)
    expect(ujumpEntries).toBe(5)
    // ujump never returned (longjmp); ufunc(20) returned 41; by then the five stale instances were gone.
    expect(seen).toEqual(['ufunc 41'])
    expect(pendingAtUfunc).toBe(0)
    expect(up.warnings).toEqual([])
  })

  it('a thread that exits inside the probed function: no handler, no instance left, the process goes on probed', () => {
    const expected = plainRun(['texit'])
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'texit'])
    const up = uprobesOf(k)
    const seen: string[] = []
    const exitRp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('uexit_inside') },
      handler: () => seen.push('uexit_inside returned'),
    }
    const funcRp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('ufunc') },
      handler: (_ri, regs) => seen.push(`ufunc ${regs.get('ax')} on ${up.current === t ? 'main' : 'other'}`),
    }
    let exiter: import('@probekit/kernel').Task | null = null
    const entry: Uprobe = { pid: t.pid, vaddr: at('uexit_inside'), handler: () => (exiter = up.current) }
    expect(up.register_uretprobe(exitRp)).toBe(0)
    expect(up.register_uprobe(entry)).toBe(0)
    expect(up.register_uretprobe(funcRp)).toBe(0)
    // Run until the thread that entered uexit_inside is dead, while main still runs.
    for (let i = 0; i < 4000 && !(exiter && (exiter as { state: string }).state === 'zombie'); i++)
      k.run(10_000)
    expect(exiter).not.toBeNull()
    expect(exiter).not.toBe(t)
    expect(up.returnInstancesOf(exiter!)).toHaveLength(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(expected)
    expect(seen).toEqual(['ufunc 7 on main'])
    expect(up.warnings).toEqual([])
  })

  it('unregistered while a return is owed: the return goes to the real address without the handler, then the process is released', () => {
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'recurse', '6'])
    const up = uprobesOf(k)
    let calls = 0
    const rp: Uretprobe = { u: { pid: t.pid, vaddr: at('ufact') }, handler: () => calls++ }
    let entries = 0
    const counter: Uprobe = { pid: t.pid, vaddr: at('ufact'), handler: () => entries++ }
    expect(up.register_uretprobe(rp)).toBe(0)
    expect(up.register_uprobe(counter)).toBe(0)
    // Stop in the middle of the recursion: three entries made, three returns owed.
    for (let i = 0; i < 100_000 && entries < 3; i++) k.run(50)
    expect(entries).toBe(3)
    expect(up.returnInstancesOf(t).length).toBeGreaterThanOrEqual(2)
    up.unregister_uretprobe(rp)
    up.unregister_uprobe(counter)
    // The engines stay while the thread owes returns through the trampoline.
    expect(up.isProbed(t.tgid)).toBe(true)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('ufact(6) = 720\n')
    expect(calls).toBe(0)
    expect(up.warnings).toEqual([])
  })

  it('a fork inside a probed function: the child returns through the real address (its stack fixed), the parent through the trampoline', () => {
    const expected = plainRun(['fork'])
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'fork'])
    const up = uprobesOf(k)
    const seen: string[] = []
    const rp: Uretprobe = {
      u: { pid: t.pid, vaddr: at('ufork') },
      handler: (_ri, regs) =>
        seen.push(`${up.current?.pid === t.pid ? 'parent' : 'child'} ${regs.get('ax')}`),
    }
    expect(up.register_uretprobe(rp)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    runUntilDead(k, [...k.tasks.values()])
    expect(out()).toBe(expected)
    expect(seen).toEqual(['parent 1'])
    expect(up.warnings).toEqual([])
  })
})
