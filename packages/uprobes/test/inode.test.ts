// The inode API (uprobe_register(inode, offset, consumer)): a probe on a
// file offset is in every process that maps the file, including processes
// started after registration, with entry and return handlers, filters and
// UPROBE_HANDLER_REMOVE; unregister takes it out of all of them. And the
// CoW property for a shared library: a uprobe in one process's copy of
// libc is not in another's.

import { existsSync, readFileSync } from 'node:fs'
import { copyFromUser, Kernel, PT_LOAD, parseElf, readDynamicSymbols, type Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { nodeHostDirectory } from '../../kernel/test/support/host-directory.js'
import { UPROBE_HANDLER_REMOVE, type Uprobe, type UprobeConsumer, uprobesOf } from '../src/index.js'
import {
  boot,
  fileBytesAt,
  fileOffset,
  fixture,
  frameOf,
  runUntilDead,
  symbol,
  textOf,
} from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')

const MYFUNC_OFF = fileOffset(MYPROG, MYFUNC)

describe('uprobe_register on a file', () => {
  it('every process running the file hits, including those started after registration; ret_handler gets the value', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const up = uprobesOf(k)
    const hits: string[] = []
    const rets: string[] = []
    const uc: UprobeConsumer = {
      handler: (_self, regs) => {
        hits.push(`${up.current?.pid}:${regs.get('di')}`)
        return 0
      },
      ret_handler: (_self, func, regs) => {
        expect(func).toBe(MYFUNC)
        rets.push(`${up.current?.pid}:${regs.get('ax')}`)
        return 0
      },
    }
    expect(up.uprobe_register('/bin/myprog', MYFUNC_OFF, uc)).toBe(0)
    // Nothing runs myprog yet; both processes come after.
    const a = k.spawn('/bin/myprog', ['myprog'])
    const b = k.spawn('/bin/myprog', ['myprog'])
    runUntilDead(k, [a, b])
    const calls = ['1', '2', '5', '10', '-4']
    const values = ['8', '14', '23', '122', '17']
    expect(hits.filter((h) => h.startsWith(`${a.pid}:`)).map((h) => h.split(':')[1])).toEqual(calls)
    expect(hits.filter((h) => h.startsWith(`${b.pid}:`)).map((h) => h.split(':')[1])).toEqual(calls)
    expect(rets.filter((h) => h.startsWith(`${a.pid}:`)).map((h) => h.split(':')[1])).toEqual(values)
    expect(rets.filter((h) => h.startsWith(`${b.pid}:`)).map((h) => h.split(':')[1])).toEqual(values)
    expect(out().split('calls: 5, sum: 184\n').length).toBe(3)
    expect(up.warnings).toEqual([])
  })

  it('registered while a process runs the file: it gets the breakpoint now; unregister takes it out of every process', () => {
    const { k } = boot({ '/bin/uprobed': fixture('uprobed') })
    const UPROBED = fixture('uprobed')
    const ufunc = symbol(UPROBED, 'ufunc')
    const a = k.spawn('/bin/uprobed', ['uprobed', 'loop', '2000000'])
    const b = k.spawn('/bin/uprobed', ['uprobed', 'loop', '2000000'])
    k.run(2_000_000)
    const up = uprobesOf(k)
    const by = new Map<number, number>()
    const uc: UprobeConsumer = {
      handler: () => {
        const pid = up.current!.pid
        by.set(pid, (by.get(pid) ?? 0) + 1)
        return 0
      },
    }
    expect(up.uprobe_register('/bin/uprobed', fileOffset(UPROBED, ufunc), uc)).toBe(0)
    expect(textOf(a, ufunc, 1)[0]).toBe(0xcc)
    expect(textOf(b, ufunc, 1)[0]).toBe(0xcc)
    k.run(3_000_000)
    expect(by.get(a.pid)).toBeGreaterThan(0)
    expect(by.get(b.pid)).toBeGreaterThan(0)
    up.uprobe_unregister('/bin/uprobed', fileOffset(UPROBED, ufunc), uc)
    const orig = fileBytesAt(UPROBED, ufunc, 1)
    expect(textOf(a, ufunc, 1)).toEqual(orig)
    expect(textOf(b, ufunc, 1)).toEqual(orig)
    const total = [...by.values()].reduce((x, y) => x + y, 0)
    runUntilDead(k, [a, b])
    expect([...by.values()].reduce((x, y) => x + y, 0)).toBe(total)
  })

  it('filter: only the address spaces it accepts get the breakpoint; UPROBE_HANDLER_REMOVE takes it out after a hit', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const up = uprobesOf(k)
    // The first process to map the file is accepted, the second refused.
    let accepted: unknown = null
    const hits: number[] = []
    const filtered: UprobeConsumer = {
      handler: () => {
        hits.push(up.current!.pid)
        return 0
      },
      filter: (_self, _ctx, mm) => {
        accepted ??= mm
        return mm === accepted
      },
    }
    expect(up.uprobe_register('/bin/myprog', MYFUNC_OFF, filtered)).toBe(0)
    const a = k.spawn('/bin/myprog', ['myprog'])
    const b = k.spawn('/bin/myprog', ['myprog'])
    k.run(2000)
    runUntilDead(k, [a, b])
    expect(hits).toEqual([a.pid, a.pid, a.pid, a.pid, a.pid])
    up.uprobe_unregister('/bin/myprog', MYFUNC_OFF, filtered)

    // A handler that asks to be removed: one hit, then the text is the file's again.
    let once = 0
    const remover: UprobeConsumer = {
      handler: () => {
        once++
        return UPROBE_HANDLER_REMOVE
      },
    }
    expect(up.uprobe_register('/bin/myprog', MYFUNC_OFF, remover)).toBe(0)
    const c = k.spawn('/bin/myprog', ['myprog'])
    let textAfter: Uint8Array | null = null
    const alive = (t: Task) => t.state !== 'zombie'
    for (let i = 0; i < 100_000 && alive(c); i++) {
      k.run(1000)
      // The text as it is last seen alive (the process exits after its four other calls).
      if (alive(c)) textAfter = textOf(c, MYFUNC, 1)
    }
    expect(once).toBe(1)
    expect(textAfter).toEqual(fileBytesAt(MYPROG, MYFUNC, 1))
    expect(out().split('calls: 5, sum: 184\n').length).toBe(4)
  })

  it('errors: no such file, not a regular file, offset past the end, an instruction it cannot step, a consumer twice', () => {
    const { k } = boot({ '/bin/myprog': MYPROG })
    const up = uprobesOf(k)
    const uc: UprobeConsumer = { handler: () => 0 }
    expect(up.uprobe_register('/no/such', 0, uc)).toBe(-2)
    expect(up.uprobe_register('/bin', 0, uc)).toBe(-22)
    expect(up.uprobe_register('/bin/myprog', MYPROG.length + 10, uc)).toBe(-22)
    // The ELF header's first byte (0x7f: jg rel8 with a missing byte? no: 7f 45 is jg; take a syscall instead).
    const text = parseElf(MYPROG).programHeaders.find((p) => p.type === PT_LOAD && p.flags & 1)!
    const bytes = MYPROG.subarray(text.offset, text.offset + text.filesz)
    let sys = -1
    for (let i = 0; i + 1 < bytes.length; i++)
      if (bytes[i] === 0x0f && bytes[i + 1] === 0x05) {
        sys = text.offset + i
        break
      }
    expect(sys).toBeGreaterThan(0)
    expect(up.uprobe_register('/bin/myprog', sys, uc)).toBe(-22)
    expect(up.uprobe_register('/bin/myprog', MYFUNC_OFF, uc)).toBe(0)
    expect(up.uprobe_register('/bin/myprog', MYFUNC_OFF, uc)).toBe(-22)
    up.uprobe_unregister('/bin/myprog', MYFUNC_OFF, uc)
    up.uprobe_unregister('/bin/myprog', MYFUNC_OFF, uc) // a no-op
  })
})

// Shared libraries: the host's libc, mapped by ld.so, in two dynamic processes.
const LIBC = '/lib/x86_64-linux-gnu/libc.so.6'
const ECHO = '/bin/echo'
const dynamic = process.platform === 'linux' && process.arch === 'x64' && existsSync(LIBC) && existsSync(ECHO)

/** A defined .dynsym symbol (libc's .symtab is stripped). */
function dynsym(elf: Uint8Array, name: string): number {
  const s = readDynamicSymbols(parseElf(elf)).find((x) => x.name === name && x.value !== 0)
  if (!s) throw new Error(`no ${name} in .dynsym`)
  return s.value
}

function bootHost() {
  let stdout = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url))),
    memorySize: 256 * 1024 * 1024,
    stdout: (d) => {
      stdout += dec.decode(d)
    },
  })
  k.vfs.mountHost('/', nodeHostDirectory('/'), { readOnly: false, hide: ['/dev', '/proc', '/sys'] })
  k.boot()
  return { k, out: () => stdout }
}

const libcBase = (t: Task): number | null => {
  const v = t.mm.vmas.find((x) => x.name.endsWith('libc.so.6') && x.pgoff === 0)
  return v ? v.start : null
}

describe.skipIf(!dynamic)('shared libraries (the host libc)', () => {
  const libc = dynamic ? new Uint8Array(readFileSync(LIBC)) : new Uint8Array()
  it("a uprobe in one process's libc: that process hits, another running the same libc keeps the page cache page", () => {
    const { k, out } = bootHost()
    const a = k.spawn(ECHO, ['echo', 'one'], ['PATH=/bin'])
    const b = k.spawn(ECHO, ['echo', 'two'], ['PATH=/bin'])
    for (let i = 0; i < 200_000 && (libcBase(a) === null || libcBase(b) === null); i++) k.run(1000)
    const writeOff = fileOffset(libc, dynsym(libc, 'write'))
    const textVma = (t: Task) =>
      t.mm.vmas.find(
        (v) =>
          v.name.endsWith('libc.so.6') &&
          v.prot & 4 &&
          v.pgoff !== undefined &&
          writeOff >= v.pgoff &&
          writeOff < v.pgoff + v.end - v.start,
      )!
    const at = (t: Task) => textVma(t).start + writeOff - (textVma(t).pgoff as number)
    const before = frameOf(b, at(b))
    expect(frameOf(a, at(a))).toBe(before) // one libc page, shared from the page cache
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: a.pid, vaddr: at(a), handler: () => hits++ }
    expect(up.register_uprobe(u)).toBe(0)
    expect(textOf(a, at(a), 1)[0]).toBe(0xcc)
    expect(textOf(b, at(b), 1)).toEqual(libc.subarray(writeOff, writeOff + 1))
    expect(frameOf(b, at(b))).toBe(before)
    expect(frameOf(a, at(a))).not.toBe(before)
    runUntilDead(k, [a, b])
    expect(hits).toBe(1)
    expect(out().split('\n').sort()).toEqual(['', 'one', 'two'])
  })

  it("uprobe_register on libc's file offset: every dynamic process started later hits it", () => {
    const { k, out } = bootHost()
    const up = uprobesOf(k)
    const pids: number[] = []
    const writeOff = fileOffset(libc, dynsym(libc, 'write'))
    const uc: UprobeConsumer = {
      handler: (_s, regs) => {
        pids.push(up.current!.pid)
        // write(1, buf, len): the bytes echo writes.
        expect(regs.get('di')).toBe(1)
        const text = new TextDecoder().decode(copyFromUser(up.current!.mm, regs.get('si'), regs.get('dx')))
        expect(['one\n', 'two\n']).toContain(text)
        return 0
      },
    }
    expect(up.uprobe_register(LIBC, writeOff, uc)).toBe(0)
    const a = k.spawn(ECHO, ['echo', 'one'], ['PATH=/bin'])
    const b = k.spawn(ECHO, ['echo', 'two'], ['PATH=/bin'])
    runUntilDead(k, [a, b])
    expect(pids.sort()).toEqual([a.pid, b.pid].sort())
    expect(out().split('\n').sort()).toEqual(['', 'one', 'two'])
    expect(up.warnings).toEqual([])
  })
})
