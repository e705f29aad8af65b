// A probed process's exec or exit drops its uprobes (the seed's section
// 5: "Uprobes automatically unregisters all uprobes associated with that
// process. Subsequent attempts to unregister these probes will be treated
// as no-ops."); a vfork child, which runs on the parent's text until it
// execs or exits, is handled like one of its threads.

import { EINPROGRESS, ESRCH, SIGKILL } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { syscall, TINY_BASE, tinyElf } from '../../kernel/test/support/tiny-elf.js'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fixture, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYPROG_MYFUNC = symbol(MYPROG, 'myfunc')
const HDR = 64 + 56

/** nop; lea path(%rip), %rdi; push 0; push %rdi; mov %rsp, %rsi; xor %edx, %edx; execve; exit(1). */
function execer(path: string): Uint8Array {
  const head = [0x90, 0x48, 0x8d, 0x3d, 0, 0, 0, 0]
  const rest = [
    0x6a,
    0x00,
    0x57,
    0x48,
    0x89,
    0xe6,
    0x31,
    0xd2,
    ...syscall(59),
    0xbf,
    1,
    0,
    0,
    0,
    ...syscall(60),
  ]
  const code = [...head, ...rest, ...new TextEncoder().encode(path), 0]
  const disp = rest.length // path starts right after the code that follows the lea
  code[4] = disp & 0xff
  code[5] = (disp >> 8) & 0xff
  return tinyElf(code)
}

describe('exec and exit', () => {
  it('exec drops every uprobe of the process: the new image runs unprobed, unregister is a no-op', () => {
    const { k, out } = boot({ '/bin/execer': execer('/bin/myprog'), '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/execer', ['execer'])
    const up = uprobesOf(k)
    const log: string[] = []
    const nop: Uprobe = { pid: t.pid, vaddr: TINY_BASE + HDR, handler: () => log.push('nop') }
    const lea: Uprobe = { pid: t.pid, vaddr: TINY_BASE + HDR + 1, handler: () => log.push('lea') }
    expect(up.register_uprobe(nop)).toBe(0)
    expect(up.register_uprobe(lea)).toBe(0)
    for (let i = 0; i < 10_000 && t.comm !== 'myprog'; i++) k.run(1_000)
    expect(t.comm).toBe('myprog')
    expect(up.isProbed(t.tgid)).toBe(false)
    // The new image's text at the old addresses is myprog's own.
    expect(textOf(t, symbol(MYPROG, 'myfunc'), 1)[0]).not.toBe(0xcc)
    up.unregister_uprobe(nop)
    up.unregister_uprobe(lea)
    expect(k.run(200_000_000).exit?.status).toBe(0)
    expect(out()).toContain('calls: 5, sum: 184')
    expect(log).toEqual(['nop', 'lea'])
    expect(up.warnings).toEqual([])
  })

  it('a vfork child runs on the probed text and hits like a thread; fork children do not (proctree)', () => {
    const proctree = fixture('proctree')
    const plain = boot({ '/bin/proctree': proctree })
    plain.k.spawn('/bin/proctree', ['/bin/proctree'])
    expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)

    const { k, out } = boot({ '/bin/proctree': proctree })
    const t = k.spawn('/bin/proctree', ['/bin/proctree'])
    const up = uprobesOf(k)
    const by: number[] = []
    // _exit: called by the children (pid-check, _exit 7, vfork's _exit 5, ...), never by the parent.
    const u: Uprobe = {
      pid: t.pid,
      vaddr: symbol(proctree, '_exit'),
      handler: () => by.push(up.current?.pid ?? -1),
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(plain.out())
    // Only the vfork child, which shares the parent's text (and int3), hit it.
    expect(by.length).toBe(1)
    expect(by[0]).not.toBe(t.pid)
  })

  it("killed between its hit and the end of its step: the handler's delayed registration is answered -ESRCH, its callback runs", () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const calls: string[] = []
    const later: Uprobe = {
      pid: t.pid,
      vaddr: symbol(MYPROG, 'main'),
      handler: () => {},
      registration_callback: (_u, reg, result) => calls.push(`${reg} ${result}`),
    }
    let tries = 0
    const u: Uprobe = {
      pid: t.pid,
      vaddr: MYPROG_MYFUNC,
      handler: () => {
        if (tries++ > 0) return
        calls.push(`register ${up.register_uprobe(later)}`)
        // SIGKILL to itself from the handler: it dies before the step ends, its delayed call unmade.
        k.signals.sendSignal(k.machine.current!, up.current!, { signo: SIGKILL, code: 0 })
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    k.run(200_000_000)
    expect(t.state).toBe('zombie')
    expect(calls).toEqual([`register ${-EINPROGRESS}`, `1 ${-ESRCH}`])
    expect(out()).toBe('')
    expect(up.isProbed(t.tgid)).toBe(false)
    up.unregister_uprobe(u) // a no-op
  })

  it('munmap of probed text drops its uprobes: a later unregister is a no-op and writes nothing into what is mapped there now', () => {
    const { k } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const u: Uprobe = { pid: t.pid, vaddr: MYPROG_MYFUNC, handler: () => {} }
    expect(up.register_uprobe(u)).toBe(0)
    expect(textOf(t, MYPROG_MYFUNC, 1)[0]).toBe(0xcc)
    // The page goes (as munmap does), and anonymous memory is mapped in its place (mmap MAP_FIXED).
    const page = MYPROG_MYFUNC - (MYPROG_MYFUNC % 4096)
    t.mm.unmapRange(page, page + 4096)
    t.mm.addVma({ start: page, end: page + 4096, prot: 3, kind: 'anon', name: '', shared: false })
    expect(up.isRegistered(u)).toBe(false)
    up.unregister_uprobe(u)
    // The new page is untouched: zeros, no saved opcode written into it.
    expect(textOf(t, MYPROG_MYFUNC, 1)[0]).toBe(0)
    expect(up.warnings).toEqual([])
  })
})
