// The peers, on the host itself: the native fixture binary `uprobed loop N`
// unprobed (the host baseline of one loop iteration), and with the host
// kernel's own uprobes (tracefs uprobe_events: `p:GROUP/EVENT PATH:OFFSET`
// on ufunc's file offset, the event enabled in a trace instance of our own)
// for the cost of a real uprobe hit on this machine. Either may be missing
// (not Linux x86-64, tracefs not mountable, uprobe_events not writable):
// then `unavailable` says why and the bench goes on without the row.
//
// tracefs: /sys/kernel/tracing or /sys/kernel/debug/tracing where mounted;
// else a tracefs mounted for the run on a temporary directory, unmounted
// after. The event, the instance and the mount are all removed in the end
// (uprobe_events is appended to, never truncated: other users' probes stay).

import { spawnSync } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from '@probekit/bench'
import { loopOutput, UFUNC_OFFSET, UPROBED_HOST } from './programs.js'

/** Iterations of the native unprobed loop (about 1.5 ns each: enough to dwarf a process start). */
export const NATIVE_LOOP_ITERATIONS = 100_000_000
/** Calls (hits) of the native loop under the host kernel's uprobe. */
export const NATIVE_ITERATIONS = 10_000
const WARMUP_PAIRS = 1
const PAIRS = 7

export const canRunNative = process.platform === 'linux' && process.arch === 'x64'

/** Wall-clock ms of one native `uprobed loop n`, process start to exit. */
function runNative(n: number): number {
  const t0 = performance.now()
  const r = spawnSync(UPROBED_HOST, ['loop', String(n)], { encoding: 'utf8' })
  const ms = performance.now() - t0
  if (r.status !== 0 || r.stdout !== loopOutput(n))
    throw new Error(`native uprobed loop ${n}: status ${r.status}, ${r.error ?? r.stdout}`)
  return ms
}

/** Pairs of b and a (order alternating), medians of (a - b) / per. */
function paired(a: () => number, b: () => number, per: number): { ns: number; nsMin: number; nsMax: number } {
  const pair = (i: number) => {
    if (i % 2 === 0) {
      const base = b()
      return (a() - base) / per
    }
    const probed = a()
    return (probed - b()) / per
  }
  for (let w = 0; w < WARMUP_PAIRS; w++) pair(w)
  const ns = Array.from({ length: PAIRS }, (_, i) => pair(i) * 1e6)
  return { ns: median(ns), nsMin: Math.min(...ns), nsMax: Math.max(...ns) }
}

/** Host ns per iteration of the native loop: `loop NATIVE_LOOP_ITERATIONS` minus `loop 0`. */
export function nativeLoopNs(): number {
  return paired(
    () => runNative(NATIVE_LOOP_ITERATIONS),
    () => runNative(0),
    NATIVE_LOOP_ITERATIONS,
  ).ns
}

export type RealUprobes =
  | { ns: number; nsMin: number; nsMax: number; hits: number; tracefs: string }
  | { unavailable: string }

interface Tracefs {
  dir: string
  /** Unmount and remove it, if we mounted it. */
  release(): void
}

function firstLine(s: string): string {
  return s.trim().split('\n')[0] ?? ''
}

/** A tracefs with uprobe_events, or why there is none. */
function findTracefs(): Tracefs | string {
  for (const dir of ['/sys/kernel/tracing', '/sys/kernel/debug/tracing'])
    if (existsSync(join(dir, 'uprobe_events'))) return { dir, release: () => {} }
  if (!readFileSync('/proc/filesystems', 'utf8').includes('tracefs'))
    return 'the host kernel has no tracefs (/proc/filesystems)'
  const dir = mkdtempSync(join(tmpdir(), 'probekit-tracefs-'))
  const m = spawnSync('mount', ['-t', 'tracefs', 'nodev', dir], { encoding: 'utf8' })
  if (m.status !== 0) {
    rmdirSync(dir)
    return `tracefs is not mounted and mounting it failed: ${firstLine(m.stderr || String(m.error))}`
  }
  const release = () => {
    spawnSync('umount', [dir])
    try {
      rmdirSync(dir)
    } catch {}
  }
  if (!existsSync(join(dir, 'uprobe_events'))) {
    release()
    return 'tracefs has no uprobe_events (a kernel without CONFIG_UPROBE_EVENTS)'
  }
  return { dir, release }
}

/**
 * The host kernel's uprobe on ufunc (file offset) of the native binary: host ns per hit, the
 * probed run minus an unprobed run of the same N, over the hits uprobe_profile counted (which
 * must be N per run).
 */
export function realKernelUprobes(): RealUprobes {
  if (!canRunNative) return { unavailable: `not Linux x86-64 (${process.platform} ${process.arch})` }
  const fs = findTracefs()
  if (typeof fs === 'string') return { unavailable: fs }
  const group = `probekit_bench_${process.pid}`
  const event = 'ufunc'
  const instance = join(fs.dir, 'instances', group)
  const events = join(fs.dir, 'uprobe_events')
  const cleanup: (() => void)[] = [fs.release]
  try {
    try {
      appendFileSync(events, `p:${group}/${event} ${UPROBED_HOST}:0x${UFUNC_OFFSET.toString(16)}\n`)
    } catch (e) {
      return { unavailable: `${events} is not writable: ${(e as Error).message}` }
    }
    cleanup.unshift(() => appendFileSync(events, `-:${group}/${event}\n`))
    // The event goes to an instance of our own, not to the global trace buffer.
    mkdirSync(instance)
    cleanup.unshift(() => rmdirSync(instance))
    const enable = join(instance, 'events', group, event, 'enable')
    writeFileSync(enable, '1')
    cleanup.unshift(() => writeFileSync(enable, '0'))

    const profile = () => {
      const line = readFileSync(join(fs.dir, 'uprobe_profile'), 'utf8')
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .find((f) => f[0] === UPROBED_HOST && f[1] === event)
      if (!line) throw new Error(`no ${event} line in uprobe_profile`)
      return Number(line[2])
    }
    const probed = () => {
      const h0 = profile()
      const ms = runNative(NATIVE_ITERATIONS)
      const hits = profile() - h0
      if (hits !== NATIVE_ITERATIONS)
        throw new Error(`real kernel uprobe: ${hits} hits for ${NATIVE_ITERATIONS} calls`)
      return ms
    }
    // The unprobed side runs while the event is disabled (its breakpoint is out of the text).
    const unprobed = () => {
      writeFileSync(enable, '0')
      try {
        return runNative(NATIVE_ITERATIONS)
      } finally {
        writeFileSync(enable, '1')
      }
    }
    const r = paired(probed, unprobed, NATIVE_ITERATIONS)
    return { ...r, hits: NATIVE_ITERATIONS, tracefs: fs.dir }
  } catch (e) {
    return { unavailable: `uprobe_events failed: ${(e as Error).message}` }
  } finally {
    for (const c of cleanup)
      try {
        c()
      } catch {}
  }
}
