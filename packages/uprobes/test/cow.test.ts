// The breakpoint is in the probed process's own copy of the text page
// (mm.write copies a shared page first, as access_process_vm's forced
// write does): another process running the same program keeps the page
// cache's page and never hits; after unregister the bytes are the file's
// again but the page stays a private copy (the seed: "Uprobes makes no
// attempt to consolidate identical copies"). A forked child gets no
// breakpoints (its copy of the text is written back through its own mm)
// and no XOL area.

import type { Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fileBytesAt, fixture, frameOf, runUntilDead, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')

describe('copy-on-write text', () => {
  it('another process running the same program keeps the original byte and never hits', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const probed = k.spawn('/bin/myprog', ['myprog'])
    const other = k.spawn('/bin/myprog', ['myprog'])
    // Both map the page cache's frame for myfunc's page.
    const shared = frameOf(probed, MYFUNC)
    expect(frameOf(other, MYFUNC)).toBe(shared)
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: probed.pid, vaddr: MYFUNC, handler: () => hits++ }
    expect(up.register_uprobe(u)).toBe(0)
    // The probed process got its own copy of the page; the other still has the shared one, unchanged.
    expect(frameOf(probed, MYFUNC)).not.toBe(shared)
    expect(frameOf(other, MYFUNC)).toBe(shared)
    expect(textOf(probed, MYFUNC, 1)[0]).toBe(0xcc)
    expect(textOf(other, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    runUntilDead(k, [probed, other])
    // Five calls in each process, five hits: all the probed one's.
    expect(hits).toBe(5)
    expect(probed.exitCode).toBe(0)
    expect(other.exitCode).toBe(0)
    expect(out().split('calls: 5, sum: 184\n').length).toBe(3)
  })

  it('after unregister the text is the file bytes again, in a page that stays the private copy', () => {
    const { k } = boot({ '/bin/myprog': MYPROG })
    const probed = k.spawn('/bin/myprog', ['myprog'])
    const other = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const u: Uprobe = { pid: probed.pid, vaddr: MYFUNC, handler: () => undefined }
    expect(up.register_uprobe(u)).toBe(0)
    const copy = frameOf(probed, MYFUNC)
    up.unregister_uprobe(u)
    expect(textOf(probed, MYFUNC, 16)).toEqual(fileBytesAt(MYPROG, MYFUNC, 16))
    expect(frameOf(probed, MYFUNC)).toBe(copy)
    expect(frameOf(probed, MYFUNC)).not.toBe(frameOf(other, MYFUNC))
    // The whole page is the file's.
    const page = MYFUNC - (MYFUNC % 4096)
    expect(textOf(probed, page, 4096)).toEqual(fileBytesAt(MYPROG, page, 4096))
  })

  it("a forked child's text has no int3 and no XOL area; it never hits, the parent does", () => {
    // pingpong pipe N: parent and child each call read() N times after the fork.
    const pingpong = fixture('pingpong')
    const READ = symbol(pingpong, 'read')
    const { k, out } = boot({ '/bin/pingpong': pingpong })
    const parent = k.spawn('/bin/pingpong', ['pingpong', 'pipe', '20'])
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: parent.pid, vaddr: READ, handler: () => hits++ }
    expect(up.register_uprobe(u)).toBe(0)
    const xol = up.xolAreaOf(parent.tgid) as number
    let child: Task | undefined
    for (let i = 0; i < 1000 && !child; i++) {
      k.run(5_000)
      child = [...k.tasks.values()].find((t) => t.parent === parent)
    }
    if (!child) throw new Error('no child')
    expect(textOf(child, READ, 16)).toEqual(fileBytesAt(pingpong, READ, 16))
    expect(textOf(parent, READ, 1)[0]).toBe(0xcc)
    expect(child.mm.findVma(xol)).toBeUndefined()
    expect(parent.mm.findVma(xol)).toBeDefined()
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('pipe 20\n')
    expect(child.exitCode).toBe(0)
    expect(hits).toBe(20)
  })
})
