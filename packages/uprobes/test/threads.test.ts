// Multithreaded processes (the seed: "Uprobes is designed to work with
// multithreaded processes: all threads of a process share the same
// probepoints"), on uprobed's `threads T N` mode: T pthreads each call
// ufunc(i) N times and the program prints the total, T*N*N.
//
// - Every thread hits, threads made after the registration included.
// - Two threads on two vCPUs are inside one probepoint's hit at the same
//   time: one runs its handler while the other is single-stepping the copy
//   of the original instruction in the XOL slot, and the breakpoint stays in
//   the text all along. The machine interleaves its vCPUs deterministically,
//   in turns of 2000 instructions (the kernel's default quantum), and a
//   callback runs whole inside its vCPU's turn: "at once" here means that
//   while one thread's handler runs on one vCPU, the other vCPU is stopped
//   at the end of its turn with its thread anywhere in its own hit -
//   including after it was sent to the slot and before its step's trap was
//   reported. That is observed from the handler, in the other thread's user
//   registers.
// - Why Uprobes steps out of line: a minimal in-place prober (built here on
//   utrace, as a ptrace debugger works: put the original byte back, step it
//   where it is, put the int3 back) loses the hits of the threads that run
//   through the function while the byte is back.
// - The last uprobe unregistered from the host while a worker has trapped
//   on the int3 and its report is still to come (a run stopped between the
//   two, as a host driving the machine in slices does). With another
//   probepoint left, the worker reruns the restored instruction; without
//   one as well (Uprobes keeps its engines until that report is seen).

import { type Kernel, SIGTRAP, type Task } from '@probekit/kernel'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_RESUME,
  UTRACE_SIGNAL_HANDLER,
  UTRACE_SIGNAL_IGN,
  UTRACE_SIGNAL_REPORT,
  UTRACE_SINGLESTEP,
  type UtraceEngineOps,
  utrace_signal_action,
  utraceOf,
} from '@probekit/utrace'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fileBytesAt, fixture, symbol, textOf } from './support/kernel.js'

const UPROBED = fixture('uprobed')
const UFUNC = symbol(UPROBED, 'ufunc')
const CLONE_THREAD = 0x10000
const INT3 = 0xcc
const PAGE = 4096

/** The live threads of thread group tgid. */
const threadsOf = (k: Kernel, tgid: number): Task[] =>
  [...k.tasks.values()].filter((x) => x.tgid === tgid && x.state !== 'zombie')

/**
 * A thread's user ip as it stands now: the vCPU's rip if the thread is on a vCPU in user mode, else the
 * ip saved in its pt_regs (the user context it entered the kernel with).
 */
function userIp(k: Kernel, t: Task): number {
  const cpu = k.sched.cpuOf(t)
  if (cpu >= 0 && k.machine.cpus[cpu].cpl === 3) return k.machine.cpus[cpu].rip
  return t.getReg('ip')
}

/** What `uprobed threads T N` prints. */
const threadsLine = (t: number, n: number) => `threads ${t} x ${n}: sum ${t * n * n}\n`

/** `uprobed threads T N` unprobed, on a kernel of its own with the same vCPUs: the oracle for the output. */
function unprobed(t: number, n: number, cpus: number): string {
  const plain = boot({ '/bin/uprobed': UPROBED }, cpus)
  plain.k.spawn('/bin/uprobed', ['uprobed', 'threads', String(t), String(n)])
  expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)
  return plain.out()
}

/** Hits counted per thread id by a uprobe on ufunc in `uprobed threads T N`, registered before any thread is made. */
function probeThreads(t: number, n: number, cpus: number) {
  const { k, out } = boot({ '/bin/uprobed': UPROBED }, cpus)
  const main = k.spawn('/bin/uprobed', ['uprobed', 'threads', String(t), String(n)])
  const up = uprobesOf(k)
  const hitsBy = new Map<number, number>()
  const foreign: number[] = []
  const u: Uprobe = {
    pid: main.pid,
    vaddr: UFUNC,
    handler: () => {
      const cur = up.current
      if (!cur || cur.tgid !== main.tgid) foreign.push(cur?.pid ?? -1)
      else hitsBy.set(cur.pid, (hitsBy.get(cur.pid) ?? 0) + 1)
    },
  }
  const threadsAtRegistration = threadsOf(k, main.tgid).length
  expect(up.register_uprobe(u)).toBe(0)
  const status = k.run(2_000_000_000).exit?.status
  return { main, hitsBy, foreign, threadsAtRegistration, status, out: out(), warnings: up.warnings }
}

/**
 * The in-place way (a ptrace debugger's): an engine on every thread (new ones attached at clone); at the
 * int3's trap the original byte goes back and the thread steps it where it is; at the step's trap the
 * int3 goes back in. While one thread steps, the function has no breakpoint for the others.
 */
function inPlaceProber(k: Kernel, main: Task, vaddr: number) {
  const utrace = utraceOf(k)
  const original = textOf(main, vaddr, 1)[0]
  /** Threads between the int3's trap and the step's trap. */
  const stepping = new Set<Task>()
  const hitsBy = new Map<number, number>()
  const attached: number[] = []
  // A thread in the middle of its step keeps stepping through any other report on the way.
  const resume = (t: Task) => (stepping.has(t) ? UTRACE_SINGLESTEP : UTRACE_RESUME)
  const ops: UtraceEngineOps = {
    report_quiesce: (_action, _engine, _event, task) => resume(task),
    report_signal: (action, _engine, regs, info, _ka, _rka, task) => {
      const signal = utrace_signal_action(action)
      if (signal === UTRACE_SIGNAL_REPORT || signal === UTRACE_SIGNAL_HANDLER) return signal | resume(task)
      if (info.signo === SIGTRAP && info.trapno === 3 && regs.get('ip') - 1 === vaddr) {
        // A thread already stepping met the int3 another thread's step had put back meanwhile: the
        // same call, not a new hit.
        if (!stepping.has(task)) hitsBy.set(task.pid, (hitsBy.get(task.pid) ?? 0) + 1)
        task.mm.write(vaddr, Uint8Array.of(original))
        regs.set('ip', vaddr)
        stepping.add(task)
        return UTRACE_SIGNAL_IGN | UTRACE_SINGLESTEP
      }
      if (info.signo === SIGTRAP && info.trapno === 1 && stepping.has(task)) {
        stepping.delete(task)
        task.mm.write(vaddr, Uint8Array.of(INT3))
        return UTRACE_SIGNAL_IGN | UTRACE_RESUME
      }
      return action
    },
    report_clone: (action, _engine, flags, child) => {
      if (flags & CLONE_THREAD) attach(child)
      return action
    },
  }
  const attach = (t: Task) => {
    const e = utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, ops, null)
    if (IS_ERR(e)) throw new Error(`attach ${t.pid}: ${e}`)
    expect(
      utrace.utrace_set_events(t, e, UTRACE_EVENT.SIGNAL_CORE | UTRACE_EVENT.CLONE | UTRACE_EVENT.QUIESCE),
    ).toBe(0)
    attached.push(t.pid)
  }
  attach(main)
  main.mm.write(vaddr, Uint8Array.of(INT3))
  return { hitsBy, attached }
}

/**
 * `uprobed threads 2 N` on two vCPUs with a uprobe on ufunc, run in slices of 50 instructions (as a host
 * driving the machine does) until, after 100 hits, a slice ends with a worker that has trapped on the
 * int3 (its SIGTRAP queued, trapno 3) and whose report_signal is still to come. alsoAt: a second
 * uprobe's address (another probepoint, left registered).
 */
function stopWithTrapPending(n: number, alsoAt?: number) {
  const { k, out } = boot({ '/bin/uprobed': UPROBED }, 2)
  const main = k.spawn('/bin/uprobed', ['uprobed', 'threads', '2', String(n)])
  const up = uprobesOf(k)
  let hits = 0
  const u: Uprobe = { pid: main.pid, vaddr: UFUNC, handler: () => hits++ }
  expect(up.register_uprobe(u)).toBe(0)
  if (alsoAt !== undefined)
    expect(up.register_uprobe({ pid: main.pid, vaddr: alsoAt, handler: () => {} })).toBe(0)
  const trapped = () => threadsOf(k, main.tgid).find((w) => w.pending.get(SIGTRAP)?.trapno === 3)
  for (let i = 0; i < 100_000 && !(hits >= 100 && trapped()); i++) k.run(50)
  return { k, out, up, u, main, worker: trapped(), hits: () => hits }
}

describe('uprobes in a multithreaded process', () => {
  it('all threads share the probe, threads made after the registration included: 3 x 2000 hits, 2000 in each worker', () => {
    const T = 3
    const N = 2000
    const r = probeThreads(T, N, 2)
    // Registered when the process had only its main thread.
    expect(r.threadsAtRegistration).toBe(1)
    expect(r.status).toBe(0)
    // Every call hit, in the thread that made it: the three workers, 2000 each, none in main, no
    // other process's thread.
    expect(r.foreign).toEqual([])
    expect(r.hitsBy.has(r.main.pid)).toBe(false)
    expect([...r.hitsBy.values()]).toEqual([N, N, N])
    expect(new Set(r.hitsBy.keys()).size).toBe(T)
    // The program computed what it computes unprobed.
    expect(r.out).toBe(threadsLine(T, N))
    expect(r.out).toBe(unprobed(T, N, 2))
    expect(r.warnings).toEqual([])
  })

  it('two threads on two vCPUs are inside the same hit at once: a handler runs while the other thread steps the copy in the XOL slot; the int3 stays in', () => {
    const N = 2000
    const { k, out } = boot({ '/bin/uprobed': UPROBED }, 2)
    const main = k.spawn('/bin/uprobed', ['uprobed', 'threads', '2', String(N)])
    const up = uprobesOf(k)
    let xol = -1
    let hits = 0
    let int3Missing = 0
    const handlerCpus = new Map<number, number>()
    /** Per handler call in which the other worker was mid-step on the other vCPU: its ip's offset in the XOL area. */
    const otherStepping: number[] = []
    const u: Uprobe = {
      pid: main.pid,
      vaddr: UFUNC,
      handler: () => {
        hits++
        const cur = up.current as Task
        handlerCpus.set(cur.cpu, (handlerCpus.get(cur.cpu) ?? 0) + 1)
        // The breakpoint is in the text while any thread is in a hit: no one ever took it out to step.
        if (textOf(cur, UFUNC, 1)[0] !== INT3) int3Missing++
        for (const other of threadsOf(k, main.tgid)) {
          if (other === cur || other === main) continue
          const cpu = k.sched.cpuOf(other)
          const ip = userIp(k, other)
          if (cpu >= 0 && cpu !== cur.cpu && ip >= xol && ip < xol + PAGE) otherStepping.push(ip - xol)
        }
      },
    }
    expect(up.register_uprobe(u)).toBe(0)
    xol = up.xolAreaOf(main.tgid) ?? -1
    expect(xol).toBeGreaterThan(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(hits).toBe(2 * N)
    expect(int3Missing).toBe(0)
    // Both vCPUs ran handlers.
    expect([...handlerCpus.keys()].sort()).toEqual([0, 1])
    // Many times a handler ran while the other worker, on the other vCPU, was between its own hit and
    // the end of its step: its user ip in the slot (sent there, or the copy stepped and its trap on its
    // way to the report). Both were seen: the slot's start (sent there, the copy not yet run) and
    // just past the copy (the copy run in the slot while the original's int3 was in the text).
    expect(otherStepping.length).toBeGreaterThan(0)
    const offsets = [...new Set(otherStepping)].sort((a, b) => a - b)
    expect(offsets.length).toBe(2)
    expect(offsets[1] - offsets[0]).toBeGreaterThan(0)
    expect(offsets[1] - offsets[0]).toBeLessThan(16)
    expect(out()).toBe(threadsLine(2, N))
    expect(up.warnings).toEqual([])
  })

  it('an in-place prober (original byte back, step in place, int3 again) loses hits of the other thread; uprobes counts every one', () => {
    // Two workers on two vCPUs. While one worker steps ufunc's first instruction in place, ufunc has no
    // breakpoint, and the other worker's calls in that time run through it untrapped. The vCPUs take
    // turns of 2000 instructions (a turn ends at the end of a block: 2004 here), so a turn that ends
    // while its worker is between putting the byte back and re-inserting the int3 leaves the function
    // bare for the whole of the other vCPU's next turn, in which the other worker can call ufunc a
    // couple of hundred times (about ten instructions a call). That window is about half of a hit
    // (measured on one vCPU: 248 of the 501 instructions from one int3 trap to the next - back to user
    // mode, the step, the #DB's way into the kernel and to report_signal). Nothing forces the loss: it
    // is the interleaving of two real threads. (With these numbers a busy worker makes exactly four
    // hits a turn, so once its turns end inside the window they all do: the second worker traps a few
    // dozen times, then runs through all its remaining calls untrapped.)
    const N = 1000
    const { k, out } = boot({ '/bin/uprobed': UPROBED }, 2)
    const main = k.spawn('/bin/uprobed', ['uprobed', 'threads', '2', String(N)])
    const inPlace = inPlaceProber(k, main, UFUNC)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // Both workers were followed (attached at clone) and both hit at times...
    expect(inPlace.attached.length).toBe(3)
    const workers = inPlace.attached.filter((pid) => pid !== main.pid)
    for (const w of workers) expect(inPlace.hitsBy.get(w) ?? 0).toBeGreaterThan(0)
    // ...but fewer times than they called ufunc: N calls each (the sum printed says they all ran).
    const inPlaceHits = [...inPlace.hitsBy.values()].reduce((a, b) => a + b, 0)
    expect(out()).toBe(threadsLine(2, N))
    expect(inPlaceHits).toBeLessThan(2 * N)
    expect(workers.some((w) => (inPlace.hitsBy.get(w) ?? 0) < N)).toBe(true)

    // Uprobes on the same program, the same vCPUs and N: the int3 never leaves; every call hits.
    const r = probeThreads(2, N, 2)
    expect(r.status).toBe(0)
    expect(r.foreign).toEqual([])
    expect([...r.hitsBy.values()]).toEqual([N, N])
    expect(r.out).toBe(threadsLine(2, N))
    expect(r.warnings).toEqual([])
  })

  it('the last uprobe unregistered while a worker has trapped on the int3, its report still to come: the int3 goes, Uprobes lets go once that report is seen', () => {
    const r = stopWithTrapPending(1000)
    const w = r.worker as Task
    expect(w).toBeDefined()
    expect(w).not.toBe(r.main)
    // Past the int3, in the kernel with the SIGTRAP queued.
    expect(w.getReg('ip')).toBe(UFUNC + 1)
    const hits = r.hits()
    expect(hits).toBeGreaterThanOrEqual(100)
    r.up.unregister_uprobe(r.u)
    expect(textOf(r.main, UFUNC, 16)).toEqual(fileBytesAt(UPROBED, UFUNC, 16))
    // The engines stay for the queued SIGTRAP's report (it must put ip back on the restored byte)...
    expect(r.up.isProbed(r.main.tgid)).toBe(true)
    r.k.run(2_000_000_000)
    // ...and go with it.
    expect(r.up.isProbed(r.main.tgid)).toBe(false)
    expect(r.hits()).toBe(hits)
  })

  // The quiesce stops the trapped worker with a UTRACE_SIGNAL_REPORT pass (its SIGTRAP stays queued)
  // and the byte goes back. Were the engines detached now (no thread is UPTASK_BP_HIT/SSTEP), the
  // queued SIGTRAP (trapno 3, ip = ufunc + 1) would be dequeued with nobody to see it and kill the
  // process (status 133, no output) - as it did before maybeReleaseUproc waited for such traps.
  it('...and the worker goes on from ufunc: the program never sees the SIGTRAP and prints what it prints unprobed', () => {
    const N = 1000
    const r = stopWithTrapPending(N)
    expect(r.worker).toBeDefined()
    r.up.unregister_uprobe(r.u)
    expect(r.k.run(2_000_000_000).exit).toEqual({ status: 0, code: 0, signal: 0 })
    expect(r.out()).toBe(threadsLine(2, N))
  })

  it('with another probepoint left in the process, the same unregistration is harmless: the worker reruns the restored instruction', () => {
    // uexit_inside: never called in `threads` mode. Uprobes' engines stay, and the worker's report finds
    // the byte at ip - 1 no longer an int3: ip goes back to ufunc and the signal is ignored.
    const N = 1000
    const r = stopWithTrapPending(N, symbol(UPROBED, 'uexit_inside'))
    expect(r.worker?.getReg('ip')).toBe(UFUNC + 1)
    const hits = r.hits()
    r.up.unregister_uprobe(r.u)
    expect(r.k.run(2_000_000_000).exit).toEqual({ status: 0, code: 0, signal: 0 })
    expect(r.out()).toBe(threadsLine(2, N))
    expect(r.hits()).toBe(hits)
    expect(r.up.warnings).toEqual([])
  })
})
