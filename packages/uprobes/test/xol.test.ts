// Single-stepping out of line: instructions whose effect depends on where
// they run behave as in place. Picked from myprog's `objdump -d` (and
// checked here with the emulator's decoder): a RIP-relative lea in printf,
// main's `call myfunc` (relative; the pushed return address is fixed up),
// myfunc's `ret`, main's loop `jne` (taken four times, then not), and the
// RIP-relative `cmpb $0,...(%rip)` + `movb` pair of __do_global_dtors_aux.

import { decode } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { syscall, TINY_BASE, tinyElf } from '../../kernel/test/support/tiny-elf.js'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fileBytesAt, fixture, symbol, textOf } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MAIN = symbol(MYPROG, 'main')
const MYFUNC = symbol(MYPROG, 'myfunc')
const PRINTF = symbol(MYPROG, 'printf')
const EXPECTED =
  'myfunc(1, 2) = 8\nmyfunc(2, 3) = 14\nmyfunc(5, -1) = 23\nmyfunc(10, 7) = 122\nmyfunc(-4, 0) = 17\ncalls: 5, sum: 184\n'

const insnAt = (vaddr: number) => decode(fileBytesAt(MYPROG, vaddr, 15), vaddr)

/** Probe each of vaddrs in myprog, run it: its status, output, and the hits at each address. */
function probeRun(vaddrs: number[]) {
  const { k, out } = boot({ '/bin/myprog': MYPROG })
  const t = k.spawn('/bin/myprog', ['myprog'])
  const up = uprobesOf(k)
  const hits = new Map<number, number>()
  for (const vaddr of vaddrs) {
    const u: Uprobe = { pid: t.pid, vaddr, handler: (p) => hits.set(p.vaddr, (hits.get(p.vaddr) ?? 0) + 1) }
    expect(up.register_uprobe(u)).toBe(0)
  }
  const status = k.run(500_000_000).exit?.status
  return { status, out: out(), hits: vaddrs.map((v) => hits.get(v) ?? 0), warnings: up.warnings }
}

describe('out-of-line single-step fix-ups', () => {
  it("a RIP-relative lea (printf's stdout FILE) computes the same address from the XOL slot", () => {
    const lea = PRINTF + 0x81
    const insn = insnAt(lea)
    expect(insn.mnemonic).toBe('lea')
    expect(insn.ripRelative).toBe(true)
    expect(probeRun([lea])).toEqual({ status: 0, out: EXPECTED, hits: [6], warnings: [] })
  })

  it('a relative call: it reaches myfunc and returns after the original call (the pushed address fixed up)', () => {
    const call = MAIN + 0x2d
    const insn = insnAt(call)
    expect(insn.mnemonic).toBe('call')
    expect(insn.branchTarget).toBe(MYFUNC)
    // myfunc probed too: it is reached through the stepped call.
    expect(probeRun([call, MYFUNC])).toEqual({ status: 0, out: EXPECTED, hits: [5, 5], warnings: [] })
  })

  it('ret (ip from the stack) and jne (taken 4 times, then not) go where they would have', () => {
    const ret = MYFUNC + 0xd
    const jne = MAIN + 0x50
    expect(insnAt(ret).mnemonic).toBe('ret')
    expect(insnAt(jne).mnemonic).toBe('jne')
    expect(probeRun([ret, jne])).toEqual({ status: 0, out: EXPECTED, hits: [5, 5], warnings: [] })
  })

  it('RIP-relative compare and store (__do_global_dtors_aux at exit) read and write the original data', () => {
    const dtors = symbol(MYPROG, '__do_global_dtors_aux')
    const COMPLETED = symbol(MYPROG, 'completed.0')
    const cmpb = dtors + 4
    const movb = dtors + 0x2c
    const pop = dtors + 0x33
    expect(insnAt(cmpb).mnemonic).toBe('cmp')
    expect(insnAt(cmpb).ripRelative).toBe(true)
    expect(insnAt(movb).mnemonic).toBe('mov')
    expect(insnAt(movb).ripRelative).toBe(true)
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const seen: string[] = []
    const at = (vaddr: number, name: string): Uprobe => ({
      pid: t.pid,
      vaddr,
      // completed.0 as the program sees it.
      handler: () => seen.push(`${name} completed=${textOf(t, COMPLETED, 1)[0]}`),
    })
    for (const u of [at(cmpb, 'cmpb'), at(movb, 'movb'), at(pop, 'pop')])
      expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(500_000_000).exit?.status).toBe(0)
    expect(out()).toBe(EXPECTED)
    // The stepped cmpb read 0 (jne not taken: movb reached); the stepped movb stored 1 at completed.0.
    expect(seen).toEqual(['cmpb completed=0', 'movb completed=0', 'pop completed=1'])
    expect(up.warnings).toEqual([])
  })

  it('pushf stepped with TF: the pushed flags do not carry our TF (the program sees TF clear)', () => {
    // pushf; pop %rdi; shr $8, %edi; and $1, %edi; exit(edi): exits with the TF bit it pushed.
    const prog = tinyElf([0x9c, 0x5f, 0xc1, 0xef, 0x08, 0x83, 0xe7, 0x01, ...syscall(60)])
    const { k } = boot({ '/bin/t': prog })
    const t = k.spawn('/bin/t', ['t'])
    const up = uprobesOf(k)
    let hits = 0
    expect(up.register_uprobe({ pid: t.pid, vaddr: TINY_BASE + 64 + 56, handler: () => hits++ })).toBe(0)
    expect(k.run(10_000_000).exit?.status).toBe(0)
    expect(hits).toBe(1)
  })
})
