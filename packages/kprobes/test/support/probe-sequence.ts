// The probe-sequence fuzzer (issue 17): a seeded random sequence of
// register / unregister / disable / enable of kprobes, kretprobes (small
// maxactive) and jprobes, interleaved with machine runs of random lengths,
// on a kernel with several vCPUs while a multi-threaded program makes
// syscalls. Extensions (jump optimization, uprobes) add their own actions.
//
// Every hit is accounted for against a count that does not come from the
// probes themselves: a syscall tracer (tracehooks) counts the workload's
// syscalls, and two anchors live through the whole run - a kprobe at
// tracehook_report_syscall_entry (reached once per traced syscall) and a
// kretprobe at do_syscall_64 (entered once per syscall) - so hits + nmissed
// must equal that count. A random probe at an anchor's address must then
// have seen exactly the anchor's hits while it was enabled (bounds, not an
// equality, only where an operation itself ran the machine). When every
// probe is gone kernel text must be byte-identical to the original.
//
// No vitest here: the long runs (tools/fuzz/probe-sequences.ts) use it too.
// A failed check throws an Error naming the seed.

import { readFileSync } from 'node:fs'
import { exitStatus, imagePhys, Kernel, type Task, type TaskTracer } from '@probekit/kernel'
import { decode } from '@probekit/x86-emu'
import { prng } from '../../../kernel/test/support/prng.js'
import { EEXIST, EILSEQ, EINVAL, type Jprobe, type Kprobe, Kprobes, type Kretprobe } from '../../src/index.js'
import { guestImage } from './kernel.js'

export { prng }

export const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../../kernel/fixtures/bin/${name}`, import.meta.url)))

/** A program to run as the workload (it becomes init; the run ends when it exits). */
export interface Workload {
  path: string
  bytes: Uint8Array
  argv: string[]
  /** What its stdout must end with (it ran correctly under the probes). */
  expectStdout?: RegExp
}

export interface SequenceContext {
  readonly seed: number
  readonly k: Kernel
  readonly kp: Kprobes
  readonly rnd: () => number
  readonly workload: Task
  check(cond: boolean, what: string): void
}

export interface SequenceExtension {
  /** The share of the steps given to act (the top of the random range). */
  share: number
  act(action: number): void
  /** After each step's run. */
  afterRun?(): void
  /** The workload has exited and every kernel probe is gone: final checks. */
  finish?(): void
  /** Counters for the report (non-vacuity is each extension's own check). */
  summary?(): Record<string, number>
}

export interface SequenceOptions {
  seed: number
  /** vCPUs (default 2-4, from the seed). */
  cpus?: number
  workload: Workload
  extensions?: ((ctx: SequenceContext) => SequenceExtension)[]
  /** Instructions per run: random in [minRun, maxRun). */
  minRun?: number
  maxRun?: number
  /** Random probes registered at one time, at most (default 24). */
  maxProbes?: number
  /** A bound on the steps (the workload must exit before). */
  maxSteps?: number
  /** Each action, and each syscall of the workload (to replay a failing seed with tools/fuzz). */
  trace?: (line: string) => void
}

export interface SequenceReport {
  seed: number
  cpus: number
  steps: number
  syscalls: number
  registered: number
  refused: number
  accounted: number
  hits: number
  [key: string]: number
}

type Kind = 'kprobe' | 'kretprobe' | 'jprobe'

/** One random probe and what it saw. */
interface Rec {
  kind: Kind
  kp: Kprobe
  rp?: Kretprobe
  jp?: Jprobe
  addr: number
  name: string
  enabled: boolean
  /** From just before it is armed to just after it is disarmed: a handler may run only then. */
  live: boolean
  /** Handler returns, after unregister, are a bug; before it they are fine even when disabled. */
  registered: boolean
  /** The step whose run follows the last disable, and the handler calls it made late. */
  disabledAt: number
  late: number
  /** Pre-handler (kprobe), entry (kretprobe, an instance taken) or trap (jprobe) calls. */
  calls: number
  /** kretprobe handler calls (returns). */
  returns: number
  /** jprobe entry calls. */
  entries: number
  /** The anchor whose count is this probe's reference (probes at an anchor's address). */
  anchor: Anchor | null
  /** Reference hits while enabled: [lower, upper] and the open window's start. */
  lo: number
  hi: number
  openLo: number
  openHi: number
  violations: string[]
}

interface Anchor {
  addr: number
  /** Hits + misses at its address so far. */
  count(): number
}

/** Hot functions: reached on every syscall (or often), so random probes there are hit. */
const HOT = [
  'do_syscall_64',
  'tracehook_report_syscall_entry',
  'tracehook_report_syscall_exit',
  'syscall_trace_enter',
  'syscall_exit_work',
  'sys_ni_host',
  '__x64_sys_futex',
  'syscall_exit_to_user_mode',
]

export function probeSequence(options: SequenceOptions): SequenceReport {
  const { seed } = options
  const rnd = prng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
  const check = (cond: boolean, what: string): void => {
    if (!cond) throw new Error(`probe-sequence seed ${seed}: ${what}`)
  }
  const cpus = options.cpus ?? 2 + Math.floor(rnd() * 3)
  const minRun = options.minRun ?? 2_000
  const maxRun = options.maxRun ?? 60_000

  let stdout = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image: guestImage(),
    cpus,
    memorySize: 64 * 1024 * 1024,
    tickCycles: 20_000,
    stdout: (d: Uint8Array) => {
      stdout += dec.decode(d, { stream: true })
    },
  })
  const w = options.workload
  kernel.vfs.writeFile(w.path, w.bytes, 0o755)
  kernel.boot()
  const kp = new Kprobes(kernel)
  const original = textSnapshot(kernel)
  const { textStart, textEnd } = kernel.image
  const sym = (name: string) => kernel.symbol(name)

  // The independent count: a tracer on every task of the workload counts its syscall entries.
  let syscalls = 0
  // The tasks that died (in do_syscall_64: exit, exit_group, a fatal signal on the way out).
  const died = new Set<Task>()
  const tracer: TaskTracer = {
    reportSyscallEntry: (t, regs) => {
      syscalls++
      const args = (['di', 'si', 'dx'] as const).map((r) => regs.get(r).toString(16))
      options.trace?.(`  pid ${t.pid} syscall ${regs.get('orig_ax')}(${args.join(', ')})`)
    },
    reportSyscallExit: (t, regs) => {
      options.trace?.(`  pid ${t.pid} returns ${regs.get('ax')}`)
    },
    reportDeath: (t, _groupDead, signal) => {
      died.add(t)
      options.trace?.(`  pid ${t.pid} dies: code ${t.exitCode} signal ${signal}`)
    },
    reportClone: (_parent, child) => kernel.tracehooks.attach(child, tracer),
  }

  // Anchor A: a kprobe at tracehook_report_syscall_entry, for the whole run.
  const aProbe: Kprobe = {
    addr: sym('tracehook_report_syscall_entry'),
    pre_handler: () => {
      aHits++
      return 0
    },
  }
  let aHits = 0
  check(kp.register_kprobe(aProbe) === 0, 'anchor kprobe at tracehook_report_syscall_entry refused')
  const anchorA: Anchor = { addr: aProbe.addr as number, count: () => aHits + (aProbe.nmissed ?? 0) }

  // Anchor K: a kretprobe at do_syscall_64 with 2 instances (tasks sleep in the kernel: entries
  // are missed). Each instance taken returns, unless its task dies inside the call.
  let kEntries = 0
  let kReturns = 0
  const kPending = new Map<Task, number>()
  const kRet: Kretprobe = {
    kp: { symbol_name: 'do_syscall_64' },
    maxactive: 2,
    entry_handler: (ri) => {
      kEntries++
      if (ri.task) kPending.set(ri.task, (kPending.get(ri.task) ?? 0) + 1)
      return 0
    },
    handler: (ri) => {
      kReturns++
      if (ri.task) kPending.set(ri.task, (kPending.get(ri.task) ?? 0) - 1)
      return 0
    },
  }
  check(kp.register_kretprobe(kRet) === 0, 'anchor kretprobe at do_syscall_64 refused')
  const anchorK: Anchor = {
    addr: kRet.kp.addr as number,
    count: () => kEntries + (kRet.nmissed ?? 0) + (kRet.kp.nmissed ?? 0),
  }
  const anchors = [anchorA, anchorK]

  const task = kernel.spawn(w.path, w.argv)
  kernel.tracehooks.attach(task, tracer)

  const ctx: SequenceContext = { seed, k: kernel, kp, rnd, workload: task, check }
  const exts = (options.extensions ?? []).map((make) => make(ctx))
  const extShare = exts.reduce((s, e) => s + e.share, 0)

  // Candidate addresses: instruction boundaries of hot functions (decoded from the original text),
  // and anywhere in other text functions (most refused: blacklist, not a boundary).
  const fns = kernel.kallsyms
    .all()
    .filter(
      (s) =>
        (s.type === 't' || s.type === 'T') &&
        s.size > 0 &&
        s.address >= textStart &&
        s.address + s.size <= textEnd &&
        !kp.within_kprobe_blacklist(s.address),
    )
  const hot = fns.filter((s) => HOT.includes(s.name))
  check(hot.length >= 6, `hot functions missing: ${hot.map((s) => s.name)}`)
  const boundariesOf = (addr: number, size: number): number[] => {
    const b: number[] = []
    for (let a = addr; a < addr + size; ) {
      b.push(a)
      try {
        a += decode(original.subarray(a - textStart, a - textStart + 16), a).length
      } catch {
        break
      }
    }
    return b
  }
  const hotBoundaries = new Map(hot.map((s) => [s, boundariesOf(s.address, s.size)]))

  const recs: Rec[] = []
  let steps = 0
  const codes = new Map<number, number>()
  let registered = 0
  let refused = 0
  const live = () => recs.filter((r) => r.registered)

  const anchorAt = (addr: number) => anchors.find((a) => a.addr === addr) ?? null
  const newRec = (kind: Kind, p: Kprobe, addr: number): Rec => ({
    kind,
    kp: p,
    addr,
    name: kernel.kallsyms.format(addr),
    enabled: false,
    live: false,
    registered: false,
    disabledAt: -1,
    late: 0,
    calls: 0,
    returns: 0,
    entries: 0,
    anchor: anchorAt(addr),
    lo: 0,
    hi: 0,
    openLo: 0,
    openHi: 0,
    violations: [],
  })
  // disable_kprobe does not wait for a grace period (Linux's arch_disarm_kprobe is a plain
  // text_poke): a CPU that took the int3 (or is stepping the copy) before it may still run the
  // handlers once, in the run right after. Once unregister returns, never.
  const hit = (r: Rec, what: string) => {
    if (r.live) return
    if (r.registered && steps === r.disabledAt && r.late < 2 * cpus) {
      r.late++
      return
    }
    r.violations.push(`${what} while disabled or unregistered`)
    options.trace?.(`    VIOLATION ${r.kind} at ${r.name}: ${what}`)
  }
  // Windows: the reference count before an operation and after it (it may run the machine).
  const opened = (r: Rec, before: number) => {
    r.openHi = before
    r.openLo = r.anchor?.count() ?? 0
  }
  const closed = (r: Rec, before: number) => {
    const after = r.anchor?.count() ?? 0
    r.lo += before - r.openLo
    r.hi += after - r.openHi
  }
  const refNow = (addr: number) => anchorAt(addr)?.count() ?? 0

  const targetAddr = (entryOnly: boolean): number => {
    const x = rnd()
    if (x < 0.4) return pick(anchors).addr
    if (x < 0.8) {
      const fn = pick(hot)
      return entryOnly ? fn.address : pick(hotBoundaries.get(fn) ?? [fn.address])
    }
    const fn = pick(fns)
    return entryOnly || rnd() < 0.5 ? fn.address : fn.address + Math.floor(rnd() * fn.size)
  }

  const note = (r: number, rec: Rec, ok: number[]) => {
    options.trace?.(`register ${rec.kind} at ${rec.name}: ${r}`)
    codes.set(r, (codes.get(r) ?? 0) + 1)
    check(ok.includes(r), `${rec.kind} at ${rec.name}: unexpected ${r}`)
    if (r === 0) {
      registered++
      rec.registered = true
      rec.enabled = true
      recs.push(rec)
    } else {
      refused++
      rec.live = false
    }
  }

  const registerKprobe = () => {
    const addr = targetAddr(false)
    const p: Kprobe = { addr }
    const rec = newRec('kprobe', p, addr)
    p.pre_handler = () => {
      rec.calls++
      hit(rec, 'pre_handler')
      return 0
    }
    if (rnd() < 0.3) p.post_handler = () => hit(rec, 'post_handler')
    const onBoundary = [...hotBoundaries.values()].some((b) => b.includes(addr))
    rec.live = true
    const before = refNow(addr)
    const r = kp.register_kprobe(p)
    note(r, rec, onBoundary ? [0] : [0, -EINVAL, -EILSEQ])
    if (r === 0) opened(rec, before)
  }

  const registerKretprobe = () => {
    const addr = targetAddr(true)
    const rp: Kretprobe = { kp: { addr }, maxactive: 1 + Math.floor(rnd() * 3) }
    const rec = newRec('kretprobe', rp.kp, addr)
    rec.rp = rp
    rp.entry_handler = () => {
      rec.calls++
      hit(rec, 'entry_handler')
      return 0
    }
    rp.handler = (_ri, regs) => {
      rec.returns++
      if (!rec.registered) rec.violations.push('handler after unregister_kretprobe')
      // The trampoline sent it back to the real return address, in kernel text.
      const ip = regs.get('ip')
      if (ip < textStart || ip >= textEnd) rec.violations.push(`returned to ${ip.toString(16)}`)
      return 0
    }
    rec.live = true
    const before = refNow(addr)
    const r = kp.register_kretprobe(rp)
    note(r, rec, [0, -EINVAL])
    if (r === 0) opened(rec, before)
  }

  const registerJprobe = () => {
    const addr = targetAddr(true)
    const rec = newRec('jprobe', { addr }, addr)
    const jp: Jprobe = {
      kp: rec.kp,
      entry: (a0: number) => {
        void a0
        rec.entries++
        options.trace?.(`    jprobe ${rec.name} entry: cpu ${kp.smp_processor_id()}`)
      },
    }
    rec.jp = jp
    rec.live = true
    const before = refNow(addr)
    const r = kp.register_jprobe(jp)
    // -EEXIST: a second jprobe at one address.
    note(r, rec, [0, -EINVAL, -EILSEQ, -EEXIST])
    if (r !== 0) return
    // Count at the trap (setjmp_pre_handler), not in the entry, which runs a little later in the stub.
    const setjmp = jp.kp.pre_handler
    jp.kp.pre_handler = (p, regs) => {
      rec.calls++
      hit(rec, 'setjmp_pre_handler')
      if (options.trace) {
        const cpu = kernel.machine.cpus[kp.smp_processor_id()]
        options.trace(`    jprobe ${rec.name} trap: cpu ${cpu.id} pid ${kernel.current(cpu).pid}`)
      }
      return setjmp ? setjmp(p, regs) : 0
    }
    opened(rec, before)
  }

  const unregister = (rec: Rec) => {
    options.trace?.(`unregister ${rec.kind} at ${rec.name}`)
    const before = refNow(rec.addr)
    if (rec.kind === 'kprobe') kp.unregister_kprobe(rec.kp)
    else if (rec.kind === 'kretprobe') kp.unregister_kretprobe(rec.rp as Kretprobe)
    else kp.unregister_jprobe(rec.jp as Jprobe)
    if (rec.enabled) closed(rec, before)
    rec.registered = false
    rec.enabled = false
    rec.live = false
  }

  const disable = (rec: Rec) => {
    options.trace?.(`disable ${rec.kind} at ${rec.name}`)
    const before = refNow(rec.addr)
    check(kp.disable_kprobe(rec.kp) === 0, `disable_kprobe ${rec.name}`)
    rec.disabledAt = steps
    rec.late = 0
    if (rec.enabled) closed(rec, before)
    rec.enabled = false
    rec.live = false
  }

  const enable = (rec: Rec) => {
    options.trace?.(`enable ${rec.kind} at ${rec.name}`)
    rec.live = true
    const before = refNow(rec.addr)
    check(kp.enable_kprobe(rec.kp) === 0, `enable_kprobe ${rec.name}`)
    if (!rec.enabled) opened(rec, before)
    rec.enabled = true
  }

  // What every task and CPU is doing (for a failure's message).
  const where = () =>
    [
      ...[...kernel.tasks.values()].map((t) => `pid ${t.pid} ${t.comm}: ${t.state}`),
      ...kernel.machine.cpus.map((c) => `cpu ${c.id}: ${kernel.kallsyms.format(c.rip)}`),
      `probes: ${kp.probes().length}`,
      `printk:\n${kernel.printk
        .text()
        .split('\n')
        .filter((l) => !l.includes('jump-optimization'))
        .slice(-20)
        .join('\n')}`,
    ].join('\n')
  const maxSteps = options.maxSteps ?? 5_000
  const maxProbes = options.maxProbes ?? 24
  const workloadAlive = () => task.state !== 'zombie'
  while (workloadAlive()) {
    check(
      steps < maxSteps,
      `the workload did not exit within ${maxSteps} steps\n${where()}\nstdout:\n${stdout}`,
    )
    let action = rnd()
    const ours = live()
    // At most maxProbes at a time (each hit costs every probe at the address): register turns unregister.
    if (action < 0.33 && ours.length >= maxProbes) action = 0.33 + action * (0.15 / 0.33)
    if (action < 0.2) registerKprobe()
    else if (action < 0.28) registerKretprobe()
    else if (action < 0.33) registerJprobe()
    else if (action < 0.48) {
      if (ours.length > 0) unregister(pick(ours))
    } else if (action < 0.6) {
      const on = ours.filter((r) => r.enabled)
      if (on.length > 0) disable(pick(on))
    } else if (action < 1 - extShare) {
      const off = ours.filter((r) => !r.enabled)
      if (off.length > 0) enable(pick(off))
    } else {
      let x = action - (1 - extShare)
      for (const e of exts) {
        if (x < e.share) {
          e.act(x / e.share)
          break
        }
        x -= e.share
      }
    }
    const budget = minRun + Math.floor(rnd() * (maxRun - minRun))
    options.trace?.(`run ${budget}`)
    const r = kernel.run(budget)
    check(
      r.result.reason === 'budget' || (r.result.reason === 'stopped' && !workloadAlive()),
      `run ended: ${r.result.reason}: ${r.result.detail}`,
    )
    for (const e of exts) e.afterRun?.()
    steps++
  }
  const status = exitStatus(task)
  check(status.status === 0, `workload exit status ${status.status}`)
  if (w.expectStdout) check(w.expectStdout.test(stdout), `workload output:\n${stdout}`)

  // Every random probe goes, then the anchors: the text must be the original again.
  for (const rec of live()) unregister(rec)
  kp.unregister_kprobe(aProbe)
  kp.unregister_kretprobe(kRet)
  check(kp.probes().length === 0, 'probes left registered')
  check(kp.slots.usedSlots === 0, `${kp.slots.usedSlots} insn slots still in use`)
  const text = textSnapshot(kernel)
  const diff = firstDifference(text, original)
  check(diff < 0, `kernel text differs at ${kernel.kallsyms.format(textStart + diff)}`)
  check(!/oops|BUG|Unrecoverable/i.test(kernel.printk.text()), `printk:\n${kernel.printk.text()}`)

  // The anchors saw every syscall, as a hit or a miss.
  check(syscalls > 100, `only ${syscalls} syscalls`)
  check(
    anchorA.count() === syscalls,
    `anchor kprobe: ${aHits} hits + ${aProbe.nmissed} missed != ${syscalls}`,
  )
  check(
    anchorK.count() === syscalls,
    `anchor kretprobe: ${kEntries} entries + ${kRet.nmissed} + ${kRet.kp.nmissed} missed != ${syscalls}`,
  )
  for (const [t, n] of kPending) {
    const why = `anchor kretprobe: pid ${t.pid} has ${n} instances left`
    check(n === 0 || (n === 1 && died.has(t)), why)
  }
  check(kReturns <= kEntries, `anchor kretprobe: ${kReturns} returns of ${kEntries} entries`)

  // Each random probe at an anchor's address saw the anchor's hits while it was enabled.
  let accounted = 0
  let hits = 0
  for (const rec of recs) {
    check(rec.violations.length === 0, `${rec.kind} at ${rec.name}: ${rec.violations[0]}`)
    hits += rec.calls
    if (rec.kind === 'kretprobe') check(rec.returns <= rec.calls, `${rec.name}: more returns than entries`)
    if (rec.kind === 'jprobe')
      check(rec.entries === rec.calls, `jprobe ${rec.name}: ${rec.entries} entries of ${rec.calls} traps`)
    if (!rec.anchor) continue
    const seen = rec.calls + (rec.kp.nmissed ?? 0) + (rec.rp?.nmissed ?? 0)
    check(
      seen >= rec.lo && seen <= rec.hi,
      `${rec.kind} at ${rec.name}: ${seen} hits+missed, the anchor says ${rec.lo}..${rec.hi}`,
    )
    accounted++
  }
  for (const e of exts) e.finish?.()

  const report: SequenceReport = {
    seed,
    cpus,
    steps,
    syscalls,
    registered,
    refused,
    accounted,
    hits,
    anchorHits: aHits,
    anchorMissed: (kRet.nmissed ?? 0) + (kRet.kp.nmissed ?? 0) + (aProbe.nmissed ?? 0),
  }
  for (const e of exts) Object.assign(report, e.summary?.() ?? {})
  // Not vacuous: probes were placed, hit and accounted for, instances ran out.
  check(registered >= 8 && hits > 50 && accounted >= 2, `vacuous run: ${JSON.stringify(report)}`)
  check((kRet.nmissed ?? 0) > 0, 'the anchor kretprobe never ran out of instances')
  return report
}

/** The whole of kernel text as it is in memory now. */
function textSnapshot(k: Kernel): Uint8Array {
  return k.machine.memory.readBytes(imagePhys(k.image.textStart), k.image.textEnd - k.image.textStart)
}

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length)
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i
  return -1
}
