// Quiesce: UTRACE_STOP on a running thread answers -EINPROGRESS and the
// thread stops at its next safe point, where report_quiesce runs; a stopped
// thread can be examined and changed between utrace_prepare_examine and
// utrace_finish_examine; UTRACE_RESUME lets it go on. STOP does not end a
// sleep (utrace.c: "This does not interrupt system calls in progress");
// UTRACE_INTERRUPT does, and report_signal can then keep the thread stopped,
// its system call restarted when it runs again.

import { EAGAIN, EINPROGRESS, EINVAL, type Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { copyFromUser } from '../../kernel/src/mm/user-memory.js'
import {
  newUtraceExaminer,
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_INTERRUPT,
  UTRACE_RESUME,
  UTRACE_SIGNAL_REPORT,
  UTRACE_STOP,
  type UtraceEngine,
  type UtraceEngineOps,
  utrace_signal_action,
  utraceOf,
} from '../src/index.js'
import { boot, engineOf, fixture, GETPID_EXIT } from './support/kernel.js'

describe('quiesce', () => {
  it('STOP on a running thread: -EINPROGRESS, then report_quiesce(0) at its safe point and TASK_TRACED; STOP again: 0', () => {
    const { k, out } = boot({ '/bin/pingpong': fixture('pingpong') })
    const task = k.spawn('/bin/pingpong', ['pingpong', 'pipe', '200'])
    const utrace = utraceOf(k)
    const quiesce: number[] = []
    const ops: UtraceEngineOps = {
      report_quiesce: (_action, _engine, event) => {
        quiesce.push(event)
        return UTRACE_STOP
      },
    }
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
    expect(utrace.utrace_set_events(task, e, UTRACE_EVENT.QUIESCE)).toBe(0)
    k.run(100_000)
    expect(utrace.utrace_control(task, e, UTRACE_STOP)).toBe(-EINPROGRESS)
    k.run(1_000_000)
    expect(task.state).toBe('traced')
    expect(quiesce).toEqual([0])
    expect(utrace.utrace_control(task, e, UTRACE_STOP)).toBe(0)
    // Held: nothing more happens however long the machine runs.
    const ip = task.getReg('ip')
    expect(k.run(5_000_000).exit).toBeNull()
    expect(task.getReg('ip')).toBe(ip)
    expect(utrace.utrace_control(task, e, UTRACE_RESUME)).toBe(0)
    // It runs on; the engine still wants QUIESCE, so it makes reports at later events and is stopped
    // again only if it says so: detach first so the run ends.
    expect(utrace.utrace_set_events(task, e, 0)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('pipe 200\n')
  })

  it('a stopped thread is examined and changed: registers between prepare_examine and finish_examine; a run between them is -EAGAIN', () => {
    const { k } = boot({ '/bin/t': GETPID_EXIT })
    const task = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const ops: UtraceEngineOps = {
      // Stop after getpid returns (this engine has no QUIESCE: its STOP is kept to the safe point).
      report_syscall_exit: (_action, _engine, regs) =>
        regs.get('orig_ax') === 39 ? UTRACE_STOP : UTRACE_RESUME,
    }
    const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
    utrace.utrace_set_events(task, e, UTRACE_EVENT.SYSCALL_EXIT)
    const exam = newUtraceExaminer()
    // Not stopped by this engine yet: -EINVAL.
    expect(utrace.utrace_prepare_examine(task, e, exam)).toBe(-EINVAL)
    k.run(1_000_000)
    expect(task.state).toBe('traced')
    expect(utrace.utrace_prepare_examine(task, e, exam)).toBe(0)
    expect(task.getReg('ax')).toBe(task.pid) // getpid's result, about to be moved to edi
    task.setReg('ax', 42)
    expect(utrace.utrace_finish_examine(task, e, exam)).toBe(0)
    // Another look, but the thread runs in between: the examination is unreliable.
    expect(utrace.utrace_prepare_examine(task, e, exam)).toBe(0)
    utrace.utrace_control(task, e, UTRACE_RESUME)
    k.run(1)
    utrace.utrace_control(task, e, UTRACE_STOP)
    expect(utrace.utrace_finish_examine(task, e, exam)).toBe(-EAGAIN)
    utrace.utrace_control(task, e, UTRACE_RESUME)
    expect(k.run(10_000_000).exit?.status).toBe(42)
  })

  it('STOP does not end a sleep; INTERRUPT ends it, report_signal (SIGNAL_REPORT) keeps it stopped, and its read restarts', () => {
    const { k, out } = boot({ '/bin/pingpong': fixture('pingpong') })
    const parent = k.spawn('/bin/pingpong', ['pingpong', 'pipe', '300'])
    const utrace = utraceOf(k)
    const log: string[] = []
    let child: Task | null = null
    let childEngine: UtraceEngine | null = null
    let interrupting = false
    const ops: UtraceEngineOps = {
      report_clone: (action, _engine, _flags, c) => {
        child = c
        childEngine = engineOf(utrace.utrace_attach_task(c, UTRACE_ATTACH_CREATE, ops, 'child'))
        utrace.utrace_set_events(c, childEngine, UTRACE_EVENT.QUIESCE)
        return action
      },
      report_quiesce: (_action, engine, event, task) => {
        log.push(`quiesce ${engine.data} ${task.state} ${event}`)
        return engine.wantsStop ? UTRACE_STOP : UTRACE_RESUME
      },
      report_signal: (action, engine, regs, info) => {
        log.push(
          `signal ${engine.data} ${utrace_signal_action(action) === UTRACE_SIGNAL_REPORT ? 'report' : info.signo}`,
        )
        // The interrupted read, as get_signal sees it: -ERESTARTSYS, to be settled after the report.
        log.push(`ax ${regs.get('ax')} orig_ax ${regs.get('orig_ax')}`)
        return interrupting ? UTRACE_STOP : utrace_signal_action(action) | UTRACE_RESUME
      },
    }
    const pe = engineOf(utrace.utrace_attach_task(parent, UTRACE_ATTACH_CREATE, ops, 'parent'))
    utrace.utrace_set_events(parent, pe, UTRACE_EVENT.CLONE)
    let guard = 0
    while (!child && guard++ < 1000) k.run(5_000)
    k.run(200_000)
    const c = child as unknown as Task
    const ce = childEngine as unknown as UtraceEngine
    // Stop the child; the parent then sleeps in read.
    expect(utrace.utrace_control(c, ce, UTRACE_STOP)).toBe(-EINPROGRESS)
    k.run(2_000_000)
    expect(c.state).toBe('traced')
    expect(parent.state).toBe('sleeping')
    // STOP on the sleeper: it stays asleep.
    expect(utrace.utrace_set_events(parent, pe, UTRACE_EVENT.QUIESCE | UTRACE_EVENT.SIGNAL)).toBe(0)
    expect(utrace.utrace_control(parent, pe, UTRACE_STOP)).toBe(-EINPROGRESS)
    k.run(2_000_000)
    expect(parent.state).toBe('sleeping')
    // INTERRUPT: the sleep ends, report_signal comes with no signal, and the engine stops it there.
    interrupting = true
    expect(utrace.utrace_control(parent, pe, UTRACE_INTERRUPT)).toBe(0)
    k.run(2_000_000)
    expect(parent.state).toBe('traced')
    expect(log).toEqual(['quiesce child running 0', 'signal parent report', 'ax -512 orig_ax 0'])
    // The frame is rewound to the syscall instruction: read (0) runs again when it resumes.
    expect(parent.getReg('ax')).toBe(0)
    expect([...copyFromUser(parent.mm, parent.getReg('ip'), 2)]).toEqual([0x0f, 0x05])
    expect(k.run(5_000_000).exit).toBeNull()
    interrupting = false
    utrace.utrace_set_events(parent, pe, 0)
    utrace.utrace_set_events(c, ce, 0)
    expect(utrace.utrace_control(parent, pe, UTRACE_RESUME)).toBe(0)
    expect(utrace.utrace_control(c, ce, UTRACE_RESUME)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('pipe 300\n')
  })
})
