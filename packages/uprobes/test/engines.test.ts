// Uprobes beside other utrace clients. Its engine is one of a thread's
// engines like any other: a report pass calls them in attach order, each
// with the signal action and resume action chosen so far, so an engine
// attached before the uprobe sees the raw SIGTRAP (UTRACE_SIGNAL_CORE) and
// one attached after it sees Uprobes' decision (UTRACE_SIGNAL_IGN, with
// UTRACE_SINGLESTEP for the trap of the int3 and UTRACE_RESUME for the trap
// that ends the step); the last engine has the last word (one that answers
// UTRACE_SIGNAL_DELIVER gives the program its SIGTRAP). Several uprobes in
// several processes at once: each process has its own breakpoints (its
// private copy of the text page) and each uprobe hears only the hits of its
// own process.

import { SIGTRAP, type Task } from '@probekit/kernel'
import {
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_RESUME,
  UTRACE_RESUME_MASK,
  UTRACE_SIGNAL_CORE,
  UTRACE_SIGNAL_DELIVER,
  UTRACE_SIGNAL_IGN,
  UTRACE_SIGNAL_MASK,
  UTRACE_SINGLESTEP,
  type UtraceEngineOps,
  utraceOf,
} from '@probekit/utrace'
import { describe, expect, it } from 'vitest'
import { engineOf } from '../../utrace/test/support/kernel.js'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fixture, runUntilDead, symbol } from './support/kernel.js'

const UPROBED = fixture('uprobed')
const UFUNC = symbol(UPROBED, 'ufunc')

const SIGNAL_NAMES: Record<number, string> = {
  [UTRACE_SIGNAL_DELIVER]: 'DELIVER',
  [UTRACE_SIGNAL_IGN]: 'IGN',
  [UTRACE_SIGNAL_CORE]: 'CORE',
}
const RESUME_NAMES: Record<number, string> = { [UTRACE_SINGLESTEP]: 'SINGLESTEP', [UTRACE_RESUME]: 'RESUME' }
/** A report_signal action as "SIGNAL|RESUME" (e.g. "CORE|RESUME"). */
const actionName = (a: number): string =>
  `${SIGNAL_NAMES[a & UTRACE_SIGNAL_MASK] ?? `0x${(a & UTRACE_SIGNAL_MASK).toString(16)}`}|${RESUME_NAMES[a & UTRACE_RESUME_MASK] ?? a & UTRACE_RESUME_MASK}`

/** `uprobed loop N` unprobed, on its own kernel: what the program prints. */
function unprobedLoop(n: number): string {
  const plain = boot({ '/bin/uprobed': UPROBED })
  plain.k.spawn('/bin/uprobed', ['uprobed', 'loop', String(n)])
  expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)
  return plain.out()
}

describe('utrace engines beside uprobes', () => {
  it("engines attached before and after the uprobe are called in attach order around Uprobes' own; the later one sees UTRACE_SIGNAL_IGN", () => {
    const N = 3
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'loop', String(N)])
    const utrace = utraceOf(k)
    const up = uprobesOf(k)
    const log: string[] = []
    let xol = -1
    // Where an ip is: in the XOL area (its offset there) or around ufunc.
    const where = (ip: number) =>
      xol >= 0 && ip >= xol && ip < xol + 4096 ? `xol+${ip - xol}` : `ufunc+${ip - UFUNC}`
    // An engine that watches SIGTRAPs and leaves every decision as it found it (it returns the action
    // it was given: the signal action of the engines before it, and no constraint of its own).
    const watcher = (name: string): UtraceEngineOps => ({
      report_signal: (action, _e, regs, info, _ka, _rka, task) => {
        if (info.signo === SIGTRAP && task === t)
          log.push(`${name} trapno ${info.trapno} at ${where(regs.get('ip'))} ${actionName(action)}`)
        return action
      },
    })
    const before = engineOf(utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, watcher('before'), null))
    expect(utrace.utrace_set_events(t, before, UTRACE_EVENT.SIGNAL_CORE)).toBe(0)
    const u: Uprobe = {
      pid: t.pid,
      vaddr: UFUNC,
      handler: (_u, regs) => log.push(`uprobe handler at ${where(regs.get('ip'))}`),
    }
    expect(up.register_uprobe(u)).toBe(0)
    xol = up.xolAreaOf(t.tgid) ?? -1
    expect(xol).toBeGreaterThan(0)
    const after = engineOf(utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, watcher('after'), null))
    expect(utrace.utrace_set_events(t, after, UTRACE_EVENT.SIGNAL_CORE)).toBe(0)

    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // Per call of ufunc, two report passes. The int3's trap: the earlier engine sees the raw SIGTRAP
    // (CORE) with ip just past the int3; Uprobes' handler runs next, with ip set back to ufunc; the
    // later engine sees what Uprobes decided: ignore the signal and step, ip in the XOL slot. The
    // step's trap: the earlier engine sees ip past the copy in the slot; the later engine sees it
    // after Uprobes' fix-up, past the original instruction, and Uprobes' IGN with RESUME.
    const perHit = log.slice(0, 5)
    const at = perHit.map((l) => l.split(' at ')[1]?.split(' ')[0] ?? '')
    const slot = Number(at[2].replace('xol+', ''))
    const len = Number(at[4].replace('ufunc+', ''))
    expect(len).toBeGreaterThan(0)
    expect(len).toBeLessThan(16)
    expect(perHit).toEqual([
      'before trapno 3 at ufunc+1 CORE|RESUME',
      'uprobe handler at ufunc+0',
      `after trapno 3 at xol+${slot} IGN|SINGLESTEP`,
      `before trapno 1 at xol+${slot + len} CORE|RESUME`,
      `after trapno 1 at ufunc+${len} IGN|RESUME`,
    ])
    // N calls, the same five reports each, and nothing else.
    expect(log.length).toBe(5 * N)
    for (let i = 0; i < N; i++) expect(log.slice(5 * i, 5 * i + 5)).toEqual(perHit)
    // The program never saw a SIGTRAP: it ran to its end and printed what it prints unprobed.
    expect(out()).toBe(unprobedLoop(N))
    expect(out()).toBe(`loop ${N}: sum ${N * N}\n`)
    expect(up.warnings).toEqual([])
  })

  it('the engine after Uprobes has the last word: its UTRACE_SIGNAL_DELIVER hands the SIGTRAP to the program', () => {
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const t = k.spawn('/bin/uprobed', ['uprobed', 'loop', '3'])
    const utrace = utraceOf(k)
    const up = uprobesOf(k)
    let hits = 0
    const seen: string[] = []
    expect(up.register_uprobe({ pid: t.pid, vaddr: UFUNC, handler: () => hits++ })).toBe(0)
    const after = engineOf(
      utrace.utrace_attach_task(
        t,
        UTRACE_ATTACH_CREATE,
        {
          report_signal: (action, _e, _regs, info) => {
            if (info.signo !== SIGTRAP) return action
            seen.push(actionName(action))
            // Overrule Uprobes' IGN: deliver the signal (SIGTRAP's default: the program dumps core).
            return UTRACE_SIGNAL_DELIVER | (action & UTRACE_RESUME_MASK)
          },
        },
        null,
      ),
    )
    expect(utrace.utrace_set_events(t, after, UTRACE_EVENT.SIGNAL_CORE)).toBe(0)
    const r = k.run(2_000_000_000)
    // It saw Uprobes' decision for the first hit, overruled it, and the program died of the SIGTRAP
    // before printing anything; Uprobes let go of the dead process.
    expect(hits).toBe(1)
    expect(seen).toEqual(['IGN|SINGLESTEP'])
    expect(r.exit?.signal).toBe(SIGTRAP)
    expect(out()).toBe('')
    expect(up.isProbed(t.tgid)).toBe(false)
    expect(up.warnings).toEqual([])
  })

  it('several uprobes in several processes at once: each counts only the hits of its own process', () => {
    // A: `loop 300` (300 calls in its main thread); B: `threads 2 200` (400 calls in two threads);
    // C: `loop 100`, not probed. Two uprobes on each probed process, at the same address (ufunc); two
    // vCPUs, so the processes' hits interleave.
    const { k, out } = boot({ '/bin/uprobed': UPROBED }, 2)
    const up = uprobesOf(k)
    const seen = new Map<string, Map<number, number>>()
    const probe = (name: string, t: Task): Uprobe => {
      const tgids = new Map<number, number>()
      seen.set(name, tgids)
      return {
        pid: t.pid,
        vaddr: UFUNC,
        handler: () => {
          const tgid = up.current?.tgid ?? -1
          tgids.set(tgid, (tgids.get(tgid) ?? 0) + 1)
        },
      }
    }
    // Each process's uprobes are registered as soon as it is spawned: a registration's quiesce runs the
    // machine (every process in it) until the probed process is stopped, so a process spawned earlier
    // would make calls before its own uprobes are in.
    const a = k.spawn('/bin/uprobed', ['uprobed', 'loop', '300'])
    const a1 = probe('a1', a)
    const a2 = probe('a2', a)
    expect(up.register_uprobe(a1)).toBe(0)
    expect(up.register_uprobe(a2)).toBe(0)
    const b = k.spawn('/bin/uprobed', ['uprobed', 'threads', '2', '200'])
    const b1 = probe('b1', b)
    const b2 = probe('b2', b)
    expect(up.register_uprobe(b1)).toBe(0)
    expect(up.register_uprobe(b2)).toBe(0)
    const c = k.spawn('/bin/uprobed', ['uprobed', 'loop', '100'])
    // Each process has its own XOL area; C has none.
    expect(up.xolAreaOf(a.tgid)).not.toBeNull()
    expect(up.xolAreaOf(b.tgid)).not.toBeNull()
    expect(up.isProbed(c.tgid)).toBe(false)
    // Until a1 has heard some of A's calls, then a1 goes: a2 (the same probepoint) stays, B is untouched.
    for (let i = 0; i < 10_000 && (seen.get('a1')?.get(a.tgid) ?? 0) < 100; i++) k.run(1_000)
    const a1Hits = seen.get('a1')?.get(a.tgid) ?? 0
    expect(a1Hits).toBeGreaterThanOrEqual(100)
    expect(a1Hits).toBeLessThan(300)
    up.unregister_uprobe(a1)
    runUntilDead(k, [a, b, c])
    for (const t of [a, b, c]) expect(t.exitCode).toBe(0)
    expect(Object.fromEntries([...seen].map(([name, m]) => [name, Object.fromEntries(m)]))).toEqual({
      a1: { [a.tgid]: a1Hits },
      a2: { [a.tgid]: 300 },
      b1: { [b.tgid]: 400 },
      b2: { [b.tgid]: 400 },
    })
    // Every program printed what it prints unprobed (the three lines, in whichever order they finished).
    expect(out().split('\n').sort()).toEqual(
      ['', 'loop 100: sum 10000', 'loop 300: sum 90000', 'threads 2 x 200: sum 80000'].sort(),
    )
    expect(up.warnings).toEqual([])
  })
})
