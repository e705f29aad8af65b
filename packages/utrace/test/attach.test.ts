// utrace_attach_task/pid, utrace_set_events, utrace_control and the engine
// references: the return codes utrace gives (shared/research/kernel-reference.md
// section 5), on a real guest thread.

import { EALREADY, EEXIST, EINVAL, ENOENT, EPERM, ERESTARTSYS, ESRCH, type Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_ATTACH_EXCLUSIVE,
  UTRACE_ATTACH_MATCH_DATA,
  UTRACE_ATTACH_MATCH_OPS,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_INTERRUPT,
  UTRACE_REPORT,
  UTRACE_RESUME,
  UTRACE_SINGLESTEP,
  UTRACE_STOP,
  type UtraceEngineOps,
  utrace_engine_get,
  utrace_engine_put,
  utraceOf,
} from '../src/index.js'
import { boot, engineOf, fixture } from './support/kernel.js'

function started() {
  const { k } = boot({ '/bin/pingpong': fixture('pingpong') })
  const task = k.spawn('/bin/pingpong', ['pingpong', 'pipe', '50'])
  return { k, task, utrace: utraceOf(k) }
}

describe('utrace_attach_task', () => {
  it('looks up before any engine: -ENOENT; creates; looks up by ops, by data, or the first', () => {
    const { task, utrace } = started()
    const opsA: UtraceEngineOps = {}
    const opsB: UtraceEngineOps = {}
    expect(utrace.utrace_attach_task(task, 0, opsA, null)).toBe(-ENOENT)
    const a = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, opsA, 'a'))
    const b = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, opsB, 'b'))
    expect(a.refcount).toBe(2) // one for the caller, one for being attached
    expect(utrace.utrace_attach_task(task, UTRACE_ATTACH_MATCH_OPS, opsB, null)).toBe(b)
    expect(utrace.utrace_attach_task(task, UTRACE_ATTACH_MATCH_DATA, null, 'a')).toBe(a)
    expect(
      utrace.utrace_attach_task(task, UTRACE_ATTACH_MATCH_OPS | UTRACE_ATTACH_MATCH_DATA, opsB, 'a'),
    ).toBe(-ENOENT)
    // Neither MATCH flag: the first engine attached.
    expect(utrace.utrace_attach_task(task, 0, null, null)).toBe(a)
    // Each successful look-up took a reference.
    expect(a.refcount).toBe(4)
  })

  it('EXCLUSIVE: -EEXIST when a matching engine exists (any engine at all without MATCH flags)', () => {
    const { task, utrace } = started()
    const ops: UtraceEngineOps = {}
    engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, 1))
    const excl = UTRACE_ATTACH_CREATE | UTRACE_ATTACH_EXCLUSIVE
    expect(utrace.utrace_attach_task(task, excl | UTRACE_ATTACH_MATCH_OPS, ops, null)).toBe(-EEXIST)
    expect(utrace.utrace_attach_task(task, excl, {}, 2)).toBe(-EEXIST)
    expect(IS_ERR(utrace.utrace_attach_task(task, excl | UTRACE_ATTACH_MATCH_DATA, ops, 2))).toBe(false)
  })

  it('-EINVAL without ops, -EPERM for a kernel thread, -ESRCH for a pid that is not there', () => {
    const { k, task, utrace } = started()
    expect(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, null, null)).toBe(-EINVAL)
    expect(utrace.utrace_attach_task(k.sched.rq[0].idle, UTRACE_ATTACH_CREATE, {}, null)).toBe(-EPERM)
    expect(utrace.utrace_attach_pid(4242, UTRACE_ATTACH_CREATE, {}, null)).toBe(-ESRCH)
    expect(IS_ERR(utrace.utrace_attach_pid(task.pid, UTRACE_ATTACH_CREATE, {}, null))).toBe(false)
  })

  it('a reaped thread: attach_pid -ESRCH, attach_task -ESRCH; its engines were released exactly once, after report_reap', () => {
    const { k, task, utrace } = started()
    const events: string[] = []
    const ops: UtraceEngineOps = {
      report_death: () => {
        events.push('death')
        return UTRACE_RESUME
      },
      report_reap: () => void events.push('reap'),
      release: (data) => void events.push(`release ${data}`),
    }
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, 'x'))
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.DEATH | UTRACE_EVENT.REAP)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // init was reaped by nobody here: its death is reported; reap comes only with release_task.
    expect(events).toEqual(['death'])
    utrace_engine_put(e) // the caller's reference: the attached one keeps it alive
    expect(events).toEqual(['death'])
    k.exit.reap(task)
    expect(events).toEqual(['death', 'reap', 'release x'])
    expect(utrace.utrace_attach_pid(task.pid, UTRACE_ATTACH_CREATE, ops, null)).toBe(-ESRCH)
    expect(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null)).toBe(-ESRCH)
    expect(utrace.utrace_control(task, e, UTRACE_RESUME)).toBe(-ESRCH)
  })
})

describe('utrace_set_events and utrace_control', () => {
  it('-EINVAL for an action past UTRACE_DETACH, and for REPORT, SINGLESTEP, BLOCKSTEP without QUIESCE (INTERRUPT needs none: report_signal comes)', () => {
    const { task, utrace } = started()
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, {}, null))
    expect(utrace.utrace_control(task, e, 7)).toBe(-EINVAL)
    for (const a of [UTRACE_REPORT, UTRACE_SINGLESTEP, 4])
      expect(utrace.utrace_control(task, e, a)).toBe(-EINVAL)
    expect(utrace.warnings).toHaveLength(4)
    expect(utrace.utrace_control(task, e, UTRACE_INTERRUPT)).toBe(0)
    utrace.utrace_set_events(task, e, UTRACE_EVENT.QUIESCE)
    expect(utrace.utrace_control(task, e, UTRACE_REPORT)).toBe(0)
  })

  it('a detached engine: -ESRCH for control and set_events; release runs when the last reference goes', () => {
    const { task, utrace } = started()
    let released = 0
    const e = engineOf(
      utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, { release: () => void released++ }, null),
    )
    utrace_engine_get(e)
    // The task is not stopped: it makes a pass soon and lets go of the engine then.
    expect(utrace.utrace_control(task, e, UTRACE_DETACH)).toBe(0)
    expect(utrace.utrace_control(task, e, UTRACE_STOP)).toBe(-ESRCH)
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.EXEC)).toBe(-ESRCH)
    expect(utrace.utrace_attach_task(task, 0, null, null)).toBe(-ENOENT) // detached engines never match
    expect(released).toBe(0)
    utrace_engine_put(e)
    utrace_engine_put(e)
    expect(released).toBe(0) // still on the list until the thread's next pass
  })

  it('a dead thread: only DETACH, -EALREADY for new death events; -ESRCH for everything else', () => {
    const { k, task, utrace } = started()
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, {}, null))
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.EXEC)).toBe(0)
    k.run(2_000_000_000)
    expect((task as Task).state).toBe('zombie')
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.DEATH)).toBe(-EALREADY)
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.QUIESCE)).toBe(-EALREADY)
    expect(utrace.utrace_control(task, e, UTRACE_STOP)).toBe(-ESRCH)
    expect(utrace.utrace_control(task, e, UTRACE_RESUME)).toBe(-ESRCH)
    expect(utrace.utrace_control(task, e, UTRACE_DETACH)).toBe(0)
  })
})

describe('utrace_barrier', () => {
  it('0 while attached and no callback runs; -ERESTARTSYS marked detached until the next pass; -ESRCH once gone', () => {
    const { k, task, utrace } = started()
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, {}, null))
    utrace_engine_get(e) // keep it to ask after the detach
    expect(utrace.utrace_barrier(task, e)).toBe(0)
    expect(utrace.utrace_control(task, e, UTRACE_DETACH)).toBe(0)
    // Still on the thread's list: the thread lets go of it at its next report pass.
    expect(utrace.utrace_barrier(task, e)).toBe(-ERESTARTSYS)
    k.run(1_000_000)
    expect(utrace.utrace_barrier(task, e)).toBe(-ESRCH)
  })
})
