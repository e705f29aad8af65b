// One kind of probe's overhead on `uprobed loop N`, measured in a process of
// its own (run by index.ts as `overhead.ts <kind>`; prints JSON), as kprobes'
// bench does: a fresh process per kind keeps one kind's V8 state out of the
// next kind's figure. Kinds:
//   loop   no probe: `uprobed loop LOOP_ITERATIONS` paired with `uprobed loop 0`,
//          the difference per iteration (the program's start and exit cancel)
//   u      a uprobe on ufunc (register_uprobe)
//   r      a uretprobe on ufunc (register_uretprobe)
//   ur     both on ufunc (one hit = the entry and the return of one call)
//   inode  uprobe_register('/bin/uprobed', ufunc's file offset, { handler, ret_handler })
//          (one hit = the entry and the return of one call)
// Each probed run is paired with an unprobed run of the same N; per hit =
// (probed - unprobed) / hits, and a run whose probe did not fire exactly N
// times (on entry and on return, for the pairs) fails the bench.

import { fileURLToPath } from 'node:url'
import { median, settledMemory } from '@probekit/bench'
import type { Kernel } from '@probekit/kernel'
import { type Uprobe, type UprobeConsumer, type Uretprobe, uprobesOf } from '../src/index.js'
import { loopKernel, loopOutput, UFUNC, UFUNC_OFFSET, UPROBED_GUEST } from './programs.js'

/** Calls of ufunc in a probed run (each one hit). */
export const ITERATIONS = 10_000
/** Iterations of the unprobed loop run (kind loop): enough for the loop to dwarf the noise of a run. */
export const LOOP_ITERATIONS = 1_000_000
const WARMUP_PAIRS = 2
const PAIRS = 7
const MAX_INSTRUCTIONS = 2_000_000_000

export type Kind = 'loop' | 'u' | 'r' | 'ur' | 'inode'
export const KINDS: readonly Kind[] = ['loop', 'u', 'r', 'ur', 'inode']

/** Attach the probes of this kind to the spawned, not yet run, loop; returns its entry and return counts. */
function attach(k: Kernel, pid: number, kind: Kind): () => { entries: number; returns: number } {
  const up = uprobesOf(k)
  let entries = 0
  let returns = 0
  const check = (what: string, r: number) => {
    if (r !== 0) throw new Error(`${what}: ${r}`)
  }
  if (kind === 'u' || kind === 'ur') {
    const u: Uprobe = { pid, vaddr: UFUNC, handler: () => void entries++ }
    check('register_uprobe', up.register_uprobe(u))
  }
  if (kind === 'r' || kind === 'ur') {
    const rp: Uretprobe = { u: { pid, vaddr: UFUNC }, handler: () => void returns++ }
    check('register_uretprobe', up.register_uretprobe(rp))
  }
  if (kind === 'inode') {
    const uc: UprobeConsumer = {
      handler: () => {
        entries++
        return 0
      },
      ret_handler: () => {
        returns++
        return 0
      },
    }
    check('uprobe_register', up.uprobe_register(UPROBED_GUEST, UFUNC_OFFSET, uc))
  }
  return () => {
    if (up.warnings.length > 0) throw new Error(`uprobes warnings: ${up.warnings.join('; ')}`)
    return { entries, returns }
  }
}

interface Sample {
  ms: number
  cycles: number
  instructions: number
  /** Hits: probe firings per call of ufunc, counted as the kind counts them. */
  hits: number
}

function runOnce(n: number, kind: Kind | null): Sample {
  const { k, task, out } = loopKernel(n)
  const counts = kind === null || kind === 'loop' ? null : attach(k, task.pid, kind)
  const m = k.machine
  const c0 = m.cycles(0)
  const i0 = m.totalInstructions()
  // The garbage of earlier runs (their kernels, the guest memory) is collected before the timing.
  settledMemory()
  // CPU time, not wall time: the machine is shared, and a run that waits for a core is not slower.
  const t0 = process.cpuUsage()
  const r = k.run(MAX_INSTRUCTIONS)
  const used = process.cpuUsage(t0)
  const ms = (used.user + used.system) / 1000
  if (r.exit?.status !== 0) throw new Error(`uprobed loop ${n} did not exit cleanly: ${r.result.detail}`)
  if (out() !== loopOutput(n)) throw new Error(`uprobed loop ${n} printed ${JSON.stringify(out())}`)
  let hits = 0
  if (counts !== null) {
    const { entries, returns } = counts()
    const wantEntries = kind === 'r' ? 0 : n
    const wantReturns = kind === 'u' ? 0 : n
    // The number below is per hit: it is honest only if every call was a hit (and nothing else was).
    if (entries !== wantEntries || returns !== wantReturns)
      throw new Error(`${kind}: ${entries} entry and ${returns} return hits for ${n} calls`)
    hits = n
  }
  return { ms, cycles: m.cycles(0) - c0, instructions: m.totalInstructions() - i0, hits }
}

export interface Overhead {
  /** loop: per iteration of the unprobed loop; the others: per hit (probed - unprobed). */
  ns: number
  cycles: number
  instructions: number
  /** The lowest and highest of the pairs' host ns (how noisy the machine was). */
  nsMin: number
  nsMax: number
  /** Hits per probed run (0 for loop). */
  hits: number
}

/**
 * Warm-up pairs, then PAIRS pairs, the order alternating from pair to pair (V8 keeps optimising
 * the emulator, so a later run tends to be faster: alternating keeps that drift from favouring
 * one side); medians over the pairs.
 */
function measure(kind: Kind): Overhead {
  const pair = (i: number) => {
    const a = () => (kind === 'loop' ? runOnce(LOOP_ITERATIONS, null) : runOnce(ITERATIONS, kind))
    const b = () => (kind === 'loop' ? runOnce(0, null) : runOnce(ITERATIONS, null))
    if (i % 2 === 0) {
      const base = b()
      return { base, probed: a() }
    }
    const probed = a()
    return { base: b(), probed }
  }
  for (let w = 0; w < WARMUP_PAIRS; w++) pair(w)
  const pairs = Array.from({ length: PAIRS }, (_, i) => pair(i))
  const per = kind === 'loop' ? LOOP_ITERATIONS : ITERATIONS
  const ns = pairs.map((p) => ((p.probed.ms - p.base.ms) * 1e6) / per)
  const med = (f: (p: { base: Sample; probed: Sample }) => number) => median(pairs.map(f))
  return {
    ns: median(ns),
    cycles: med((p) => (p.probed.cycles - p.base.cycles) / per),
    instructions: med((p) => (p.probed.instructions - p.base.instructions) / per),
    nsMin: Math.min(...ns),
    nsMax: Math.max(...ns),
    hits: med((p) => p.probed.hits),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2] as Kind
  if (!KINDS.includes(kind)) throw new Error(`usage: overhead.ts ${KINDS.join('|')}`)
  process.stdout.write(`${JSON.stringify(measure(kind))}\n`)
}
