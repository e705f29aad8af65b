// (a) The cost of a tracer on a getpid loop, in a process of its own (run by index.ts as
// `syscalls.ts <control|idle|syscall|hook>`; prints JSON): untraced runs paired with runs under
// one engine with no events (idle), one with SYSCALL_ENTRY | SYSCALL_EXIT (syscall), or, for
// comparison, a bare kernel tracehook with syscall callbacks and no utrace (hook), or nothing at
// all (control: untraced against untraced, the noise of the difference on this machine). A fresh process
// per tracer keeps one tracer's V8 state (call sites made polymorphic, code optimised for other
// reports) out of the other's figure, as kprobes' bench does.

import { fileURLToPath } from 'node:url'
import { median, settledMemory, measure as timeIt } from '@probekit/bench'
import { bareTracehook, idleEngine, syscallEngine, type TracerSetup } from './engines.js'
import { getpidKernel, getpidLoop } from './programs.js'

export const ITERATIONS = 50_000
/** Syscalls of one run: ITERATIONS + 1 getpid and exit. */
export const SYSCALLS = ITERATIONS + 2
const WARMUP_PAIRS = 2
const PAIRS = 15
const program = getpidLoop(ITERATIONS)

export type TracerKind = 'control' | 'idle' | 'syscall' | 'hook'
/** No tracer on either side of a pair: the noise floor of the paired difference. */
const nothing: TracerSetup = () => ({ attach: () => {}, syscalls: () => 0 })
const setups: Record<TracerKind, TracerSetup> = {
  control: nothing,
  idle: idleEngine,
  syscall: syscallEngine(false),
  hook: bareTracehook,
}

interface Sample {
  ms: number
  cycles: number
  instructions: number
  hypercalls: number
  reported: number
}

function runOnce(setup: TracerSetup | null): Sample {
  const k = getpidKernel(program)
  const task = k.init
  if (!task) throw new Error('no task spawned')
  const traced = setup?.(k)
  traced?.attach(task)
  const m = k.machine
  const c0 = m.cycles(0)
  const i0 = m.totalInstructions()
  const h0 = m.counters[0].hypercalls
  // The garbage of earlier runs (their kernels, the guest memory) is collected before the timing.
  settledMemory()
  const t0 = performance.now()
  const r = k.run()
  const ms = performance.now() - t0
  if (r.exit?.status !== 0) throw new Error(`getpid loop did not exit cleanly: ${r.result.detail}`)
  return {
    ms,
    cycles: m.cycles(0) - c0,
    instructions: m.totalInstructions() - i0,
    hypercalls: m.counters[0].hypercalls - h0,
    reported: traced?.syscalls() ?? 0,
  }
}

/**
 * The kernel's calls into the tracer (its TaskTracer on the tracehooks) in one untimed run, per
 * syscall, by callback: what the tracer costs the host beyond the guest's own work.
 */
function tracerCalls(setup: TracerSetup): Record<string, number> {
  const k = getpidKernel(program)
  const task = k.init
  if (!task) throw new Error('no task spawned')
  setup(k).attach(task)
  const calls: Record<string, number> = {}
  for (const tracer of k.tracehooks.tracersOf(task)) {
    const t = tracer as Record<string, unknown>
    for (const [name, f] of Object.entries(t)) {
      if (typeof f !== 'function') continue
      t[name] = (...args: unknown[]) => {
        calls[name] = (calls[name] ?? 0) + 1
        return f(...args)
      }
    }
  }
  if (k.run().exit?.status !== 0) throw new Error('getpid loop did not exit cleanly')
  for (const name of Object.keys(calls)) calls[name] /= SYSCALLS
  return calls
}

/**
 * Host ns of the one tracehook the kernel calls per syscall for a task whose engines want no event
 * (Tracehooks.sigpendingForced, from recalc_sigpending), with the idle engine attached minus
 * without: a hot loop, so a floor rather than the figure in situ.
 */
function sigpendingForcedNs(): number {
  const M = 1_000_000
  const ns = (setup: TracerSetup | null) => {
    const k = getpidKernel(program)
    const task = k.init
    if (!task) throw new Error('no task spawned')
    setup?.(k).attach(task)
    let forced = 0
    const ms = timeIt(() => {
      for (let i = 0; i < M; i++) if (k.tracehooks.sigpendingForced(task)) forced++
    })
    if (forced !== 0) throw new Error('sigpendingForced: forced with no engine asking')
    return (ms * 1e6) / M
  }
  const pairs = Array.from({ length: 5 }, () => ns(idleEngine) - ns(null))
  return median(pairs)
}

/** Per syscall of the loop (medians over the pairs), and the traced run against the untraced one. */
export interface TracerCost {
  untracedNs: number
  untracedCycles: number
  tracedNs: number
  tracedCycles: number
  /** Median of the pairs' differences (traced - untraced), per syscall. */
  diffNs: number
  diffCycles: number
  diffInstructions: number
  diffHypercalls: number
  /** Median of the pairs' host time ratios (traced / untraced). */
  timeRatio: number
  /** Syscall entries the tracer reported in a run. */
  reported: number
  /** The kernel's calls into the tracer per syscall, by callback, and in all. */
  calls: Record<string, number>
  callsPerSyscall: number
  /** idle only: sigpendingForcedNs (else 0). */
  sigpendingForcedNs: number
}

/**
 * Warm-up pairs, then PAIRS pairs of an untraced run and a traced one, the order alternating from
 * pair to pair (V8 keeps optimising the emulator, so a later run tends to be faster: alternating
 * keeps that drift from favouring one side); medians over the pairs.
 */
function measure(kind: TracerKind): TracerCost {
  const setup = setups[kind]
  const pair = (i: number) => {
    if (i % 2 === 0) {
      const none = runOnce(null)
      return { none, traced: runOnce(setup) }
    }
    const traced = runOnce(setup)
    return { none: runOnce(null), traced }
  }
  for (let w = 0; w < WARMUP_PAIRS; w++) pair(w)
  const pairs = Array.from({ length: PAIRS }, (_, i) => pair(i))
  const med = (f: (p: { none: Sample; traced: Sample }) => number) => median(pairs.map(f))
  const calls = tracerCalls(setup)
  return {
    untracedNs: med((p) => (p.none.ms * 1e6) / SYSCALLS),
    untracedCycles: med((p) => p.none.cycles / SYSCALLS),
    tracedNs: med((p) => (p.traced.ms * 1e6) / SYSCALLS),
    tracedCycles: med((p) => p.traced.cycles / SYSCALLS),
    diffNs: med((p) => ((p.traced.ms - p.none.ms) * 1e6) / SYSCALLS),
    diffCycles: med((p) => (p.traced.cycles - p.none.cycles) / SYSCALLS),
    diffInstructions: med((p) => (p.traced.instructions - p.none.instructions) / SYSCALLS),
    diffHypercalls: med((p) => (p.traced.hypercalls - p.none.hypercalls) / SYSCALLS),
    timeRatio: med((p) => p.traced.ms / p.none.ms),
    reported: med((p) => p.traced.reported),
    calls,
    callsPerSyscall: Object.values(calls).reduce((a, b) => a + b, 0),
    sigpendingForcedNs: kind === 'idle' ? sigpendingForcedNs() : 0,
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2]
  if (kind !== 'control' && kind !== 'idle' && kind !== 'syscall' && kind !== 'hook')
    throw new Error('usage: syscalls.ts control|idle|syscall|hook')
  process.stdout.write(`${JSON.stringify(measure(kind))}\n`)
}
