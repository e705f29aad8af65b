// System call reports: report_syscall_entry sees the number and arguments
// and may abort the call (the program gets -ENOSYS), report_syscall_exit
// sees the result and may change it (fault injection). Entry reports go to
// the engines in reverse attach order, as utrace.c's REPORT_CALLBACKS
// (_reverse) makes them, so the engine attached first has the last word
// on the registers the call runs with. An engine that stops the thread at
// entry holds it before the call runs; asked for a report meanwhile, the
// engines are asked again with UTRACE_SYSCALL_RESUMED.

import { describe, expect, it } from 'vitest'
import {
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_REPORT,
  UTRACE_RESUME,
  UTRACE_STOP,
  UTRACE_SYSCALL_ABORT,
  UTRACE_SYSCALL_RESUMED,
  type UtraceEngineOps,
  utrace_syscall_action,
  utraceOf,
} from '../src/index.js'
import { boot, engineOf, fixture, GETPID_EXIT } from './support/kernel.js'

const ENOSYS = 38

function run(program: Uint8Array, ops: UtraceEngineOps, events: number) {
  const { k, out } = boot({ '/bin/t': program })
  const task = k.spawn('/bin/t', ['t'])
  const utrace = utraceOf(k)
  const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, ops, null))
  expect(utrace.utrace_set_events(task, e, events)).toBe(0)
  return { k, out, task, utrace, e }
}

describe('syscall reports', () => {
  it('entry sees the number and arguments, exit the result, for every call of a real program', () => {
    const calls: { nr: number; args: number[]; ret?: number }[] = []
    const { k, out } = run(
      fixture('hello'),
      {
        report_syscall_entry: (action, _e, regs) => {
          calls.push({ nr: regs.get('orig_ax'), args: [regs.get('di'), regs.get('si'), regs.get('dx')] })
          return action
        },
        report_syscall_exit: (action, _e, regs) => {
          const last = calls.at(-1)
          if (last) last.ret = regs.get('ax')
          return action
        },
      },
      UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT,
    )
    expect(k.run(100_000_000).exit?.status).toBe(0)
    expect(out()).toBe('hello, world\n')
    const write = calls.find((c) => (c.nr === 1 || c.nr === 20) && c.args[0] === 1)
    expect(write?.ret).toBe(13)
    expect(calls.at(-1)).toEqual({ nr: 231, args: [0, expect.any(Number), expect.any(Number)] })
    for (const c of calls.slice(0, -1)) expect(c.ret).toBeDefined()
  })

  it('UTRACE_SYSCALL_ABORT: the call does not run, the program gets -ENOSYS, and its exit is still reported', () => {
    const exits: number[] = []
    const { k } = run(
      GETPID_EXIT,
      {
        report_syscall_entry: (action, _e, regs) =>
          regs.get('orig_ax') === 39 ? UTRACE_SYSCALL_ABORT | UTRACE_RESUME : action,
        report_syscall_exit: (action, _e, regs) => {
          exits.push(regs.get('ax'))
          return action
        },
      },
      UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT,
    )
    expect(k.run(10_000_000).exit?.status).toBe(-ENOSYS & 0xff)
    expect(exits).toEqual([-ENOSYS])
  })

  it('report_syscall_exit changes the result the program sees (fault injection)', () => {
    const { k } = run(
      GETPID_EXIT,
      {
        report_syscall_exit: (action, _e, regs) => {
          if (regs.get('orig_ax') === 39) regs.set('ax', 42)
          return action
        },
      },
      UTRACE_EVENT.SYSCALL_EXIT,
    )
    expect(k.run(10_000_000).exit?.status).toBe(42)
  })

  it('entry reports go in reverse attach order: the first engine attached decides last', () => {
    const { k, task, utrace } = run(GETPID_EXIT, {}, 0)
    const order: string[] = []
    const opsFor = (name: string, abort: boolean): UtraceEngineOps => ({
      report_syscall_entry: (action) => {
        order.push(`${name} ${utrace_syscall_action(action) === UTRACE_SYSCALL_ABORT ? 'abort' : 'run'}`)
        return (abort ? UTRACE_SYSCALL_ABORT : 0) | UTRACE_RESUME
      },
    })
    for (const [name, abort] of [
      ['first', false],
      ['second', true],
    ] as const) {
      const e = engineOf(utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, opsFor(name, abort), name))
      utrace.utrace_set_events(task, e, UTRACE_EVENT.SYSCALL_ENTRY)
    }
    // second aborts, then first (called last) lets it run: getpid runs.
    expect(k.run(10_000_000).exit?.status).toBe(task.pid)
    expect(order.slice(0, 2)).toEqual(['second run', 'first abort'])
  })

  it('STOP at entry holds the thread before the call; REPORT while stopped: asked again with SYSCALL_RESUMED, then the call runs', () => {
    const seen: string[] = []
    let stops = 0
    const { k, task, utrace, e } = run(
      GETPID_EXIT,
      {
        report_quiesce: (action) => action,
        report_syscall_entry: (action, _e, regs) => {
          const nr = regs.get('orig_ax')
          seen.push(`${nr}${action & UTRACE_SYSCALL_RESUMED ? ' resumed' : ''}`)
          if (nr === 39 && stops++ === 0) return UTRACE_STOP
          return UTRACE_RESUME
        },
        report_syscall_exit: (action, _e, regs) => {
          seen.push(`exit ${regs.get('orig_ax')} = ${regs.get('ax')}`)
          return action
        },
      },
      UTRACE_EVENT.QUIESCE | UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT,
    )
    k.run(1_000_000)
    expect(task.state).toBe('traced')
    expect(seen).toEqual(['39']) // getpid has not run
    expect(utrace.utrace_control(task, e, UTRACE_REPORT)).toBe(0)
    expect(k.run(10_000_000).exit?.status).toBe(task.pid)
    expect(seen).toEqual(['39', '39 resumed', `exit 39 = ${task.pid}`, '60'])
  })
})
