// Threads: engines are per thread. One engine per thread of a pthreads
// program on two vCPUs, attached from report_clone as each thread is made
// (CLONE_THREAD tells it from a process): every thread's system calls are
// reported to its own engine, and two runs give the same reports in the
// same order - the vCPUs interleave deterministically, so callbacks that
// run "concurrently" on two CPUs still come in one reproducible order.

import type { Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_RESUME,
  type UtraceEngine,
  type UtraceEngineOps,
  utrace_engine_put,
  utraceOf,
} from '../src/index.js'
import { boot, fixture } from './support/kernel.js'

const CLONE_THREAD = 0x10000

function traceThreads(cpus: number) {
  const { k, out } = boot({ '/bin/threads': fixture('threads-glibc-O2') }, cpus)
  const utrace = utraceOf(k)
  const log: string[] = []
  const cpusSeen = new Set<number>()
  const engines = new Map<Task, UtraceEngine>()
  const attach = (t: Task) => {
    const e = utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, ops, t.pid)
    if (IS_ERR(e)) throw new Error(`attach: ${e}`)
    utrace.utrace_set_events(t, e, UTRACE_EVENT.CLONE | UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.DEATH)
    engines.set(t, e)
    utrace_engine_put(e)
  }
  const ops: UtraceEngineOps = {
    report_clone: (action, _e, flags, child, task) => {
      log.push(`${task.pid} clone ${child.pid} ${flags & CLONE_THREAD ? 'thread' : 'process'}`)
      attach(child)
      return action
    },
    report_syscall_entry: (action, engine, regs, task) => {
      // Each engine hears only its own thread.
      expect(engine.data).toBe(task.pid)
      cpusSeen.add(task.cpu)
      log.push(`${task.pid} ${regs.get('orig_ax')}`)
      return action
    },
    report_death: (_engine, _groupDead, _signal, task) => {
      log.push(`${task.pid} death`)
      return UTRACE_RESUME
    },
  }
  const main = k.spawn('/bin/threads', ['threads'])
  attach(main)
  const r = k.run(4_000_000_000)
  return {
    status: r.exit?.status,
    out: out(),
    log,
    cpusSeen,
    instructions: k.machine.cpus.reduce((n, c) => n + c.instructions, 0),
  }
}

describe('engines on the threads of one process', () => {
  it('each thread has its own engine, attached at clone; two runs on two vCPUs report the same calls in the same order', () => {
    const a = traceThreads(2)
    expect(a.status).toBe(0)
    const threads = a.log.filter((l) => l.endsWith(' thread'))
    expect(threads.length).toBeGreaterThanOrEqual(2)
    for (const t of threads) {
      const tid = t.split(' ')[2]
      // The new thread's own calls, and its death, came to its engine.
      expect(a.log.some((l) => l.startsWith(`${tid} `) && /^\d+ \d+$/.test(l))).toBe(true)
      expect(a.log).toContain(`${tid} death`)
    }
    expect(a.cpusSeen.size).toBe(2)
    const b = traceThreads(2)
    expect(b.out).toBe(a.out)
    expect(b.log).toEqual(a.log)
    expect(b.instructions).toBe(a.instructions)
  })
})
