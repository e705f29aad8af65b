// A thread's life as utrace engines hear it: clone (with the flags and the
// child, before the child runs), exec, exit, death and reap in Linux's
// order, each engine released once; callbacks in attach order, quiesce
// before the event's own, actions combined (the most stopping wins), and
// an engine that returns DETACH gone after its callback. The uprobes
// seed's recipe for probing a new child - attach in report_clone and ask
// UTRACE_REPORT - makes the child quiesce before its first user instruction.

import type { Task } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  CLD_CONTINUED,
  CLD_STOPPED,
  UTRACE_ATTACH_CREATE,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_REPORT,
  UTRACE_RESUME,
  UTRACE_STOP,
  type UtraceEngineOps,
  utrace_engine_put,
  utraceOf,
} from '../src/index.js'
import { BUSYBOX, boot, busyboxFiles, engineOf, fixture, GETPID_EXIT, haveBusybox } from './support/kernel.js'

const CLONE_THREAD = 0x10000
const ALL_LIFE =
  UTRACE_EVENT.CLONE | UTRACE_EVENT.EXEC | UTRACE_EVENT.EXIT | UTRACE_EVENT.DEATH | UTRACE_EVENT.REAP

describe('life events', () => {
  it('clone, exec, exit, death and reap in order for every process of a tree; each engine released exactly once', () => {
    const { k, out } = boot({ '/bin/proctree': fixture('proctree') })
    const utrace = utraceOf(k)
    const events: string[] = []
    const released: number[] = []
    const follow = (t: Task) => {
      const e = engineOf(utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, ops, t.pid))
      expect(utrace.utrace_set_events(t, e, ALL_LIFE)).toBe(0)
      utrace_engine_put(e) // the attach reference keeps it until reap
    }
    const ops: UtraceEngineOps = {
      report_clone: (action, _e, flags, child, task) => {
        events.push(
          `clone ${task.pid}->${child.pid} ${flags & CLONE_THREAD ? 'thread' : 'process'} ${child.state}`,
        )
        follow(child)
        return action
      },
      report_exec: (action, _e, bprm, _regs, task) => {
        events.push(`exec ${task.pid} ${bprm.filename}`)
        return action
      },
      report_exit: (action, _e, orig, code, task) => {
        expect(code.value).toBe(orig)
        events.push(`exit ${task.pid} ${orig}`)
        return action
      },
      report_death: (_e, _groupDead, _signal, task) => {
        events.push(`death ${task.pid}`)
        return UTRACE_RESUME
      },
      report_reap: (_e, task) => void events.push(`reap ${task.pid}`),
      release: (pid) => void released.push(pid as number),
    }
    const init = k.spawn('/bin/proctree', ['/bin/proctree'])
    follow(init)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toContain('parent: exiting 0')
    const clones = events.filter((e) => e.startsWith('clone'))
    expect(clones.length).toBeGreaterThan(4)
    for (const c of clones) {
      expect(c).toMatch(/ process new$/) // the child had not run yet
      const pid = Number(c.split(/->| /)[2])
      const at = (what: string) =>
        events.findIndex((e) => e.startsWith(`${what} ${pid} `) || e === `${what} ${pid}`)
      expect(at('exit')).toBeGreaterThan(events.indexOf(c))
      expect(at('death')).toBeGreaterThan(at('exit'))
      expect(at('reap')).toBeGreaterThan(at('death'))
      // The engine on it (attached once) was released once, after it was reaped.
      expect(released.filter((p) => p === pid)).toHaveLength(1)
    }
    expect(events.some((e) => /^exec \d+ \/bin\/proctree$/.test(e))).toBe(true)
    // wait statuses: child 1 _exit(7), child 3 SIGTERM.
    const pids = clones.map((c) => Number(c.split(/->| /)[2]))
    expect(events).toContain(`exit ${pids[1]} ${7 << 8}`)
    expect(events).toContain(`exit ${pids[3]} 15`)
    expect(events.at(-2)).toBe(`exit ${init.pid} 0`)
    expect(events.at(-1)).toBe(`death ${init.pid}`)
  })

  it("the seed's recipe: attach in report_clone and ask UTRACE_REPORT: the child quiesces before its first user instruction", () => {
    const { k } = boot({ '/bin/proctree': fixture('proctree') })
    const utrace = utraceOf(k)
    const seen: string[] = []
    let parentIp = 0
    const childOps: UtraceEngineOps = {
      report_quiesce: (action, _e, event, task) => {
        // Its registers are the ones fork gave it: fork's return (0) at the parent's return address.
        seen.push(`quiesce ${task.pid} ${event} ax=${task.getReg('ax')} ${task.getReg('ip') === parentIp}`)
        return action
      },
      report_syscall_entry: (action, _e, regs, task) => {
        seen.push(`syscall ${task.pid} ${regs.get('orig_ax')}`)
        return action
      },
    }
    let children = 0
    const parentOps: UtraceEngineOps = {
      report_clone: (action, _e, _flags, child, task) => {
        if (children++ > 0) return action
        parentIp = task.getReg('ip')
        const e = engineOf(utrace.utrace_attach_task(child, UTRACE_ATTACH_CREATE, childOps, null))
        utrace.utrace_set_events(child, e, UTRACE_EVENT.QUIESCE | UTRACE_EVENT.SYSCALL_ENTRY)
        expect(utrace.utrace_control(child, e, UTRACE_REPORT)).toBe(0)
        return action
      },
    }
    const init = k.spawn('/bin/proctree', ['/bin/proctree'])
    const pe = engineOf(utrace.utrace_attach_task(init, UTRACE_ATTACH_CREATE, parentOps, null))
    utrace.utrace_set_events(init, pe, UTRACE_EVENT.CLONE)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    const first = seen[0]
    expect(first).toMatch(/^quiesce \d+ 0 ax=0 true$/)
    // Its system calls come after (each with its own quiesce report first).
    expect(seen[1]).toMatch(/^quiesce \d+ 64 /)
    expect(seen[2]).toMatch(/^syscall \d+ \d+$/)
  })

  it('callbacks in attach order, report_quiesce first; each sees the action so far; STOP wins over RESUME', () => {
    const { k } = boot({ '/bin/proctree': fixture('proctree') })
    const utrace = utraceOf(k)
    const calls: string[] = []
    let execd: Task | null = null
    const opsFor = (name: string, answer: number): UtraceEngineOps => ({
      report_quiesce: (action, _e, event) => {
        if (event === UTRACE_EVENT.EXEC) calls.push(`${name} quiesce ${event} action=${action}`)
        // Only STOP is sticky: at the safe point after the exec (event 0) each engine answers again.
        return event === 0 ? answer : action
      },
      report_exec: (action, _e, _bprm, _regs, task) => {
        calls.push(`${name} exec action=${action}`)
        execd = task
        return answer
      },
    })
    // Every child gets engine a (STOP at exec) and then engine b (RESUME).
    const follow: UtraceEngineOps = {
      report_clone: (action, _e, _f, child) => {
        for (const [name, answer] of [
          ['a', UTRACE_STOP],
          ['b', UTRACE_RESUME],
        ] as const) {
          const e = engineOf(
            utrace.utrace_attach_task(child, UTRACE_ATTACH_CREATE, opsFor(name, answer), name),
          )
          utrace.utrace_set_events(child, e, UTRACE_EVENT.EXEC | UTRACE_EVENT.QUIESCE)
        }
        return action
      },
    }
    const init = k.spawn('/bin/proctree', ['/bin/proctree'])
    const f = engineOf(utrace.utrace_attach_task(init, UTRACE_ATTACH_CREATE, follow, 'follow'))
    utrace.utrace_set_events(init, f, UTRACE_EVENT.CLONE)
    let guard = 0
    while (!execd && guard++ < 2000) k.run(10_000)
    k.run(1_000_000)
    expect(calls).toEqual([
      `a quiesce ${UTRACE_EVENT.EXEC} action=${UTRACE_RESUME}`,
      `a exec action=${UTRACE_RESUME}`,
      `b quiesce ${UTRACE_EVENT.EXEC} action=${UTRACE_STOP}`,
      `b exec action=${UTRACE_STOP}`,
    ])
    // a's STOP holds the exec'd thread on its way back to user mode, whatever b answered.
    expect((execd as unknown as Task).state).toBe('traced')
  })

  it('an engine that returns DETACH from a callback is gone after it: no more callbacks, released once', () => {
    const { k, out } = boot({ '/bin/proctree': fixture('proctree') })
    const utrace = utraceOf(k)
    let clones = 0
    let released = 0
    const ops: UtraceEngineOps = {
      report_clone: () => {
        clones++
        return UTRACE_DETACH
      },
      release: () => void released++,
    }
    const init = k.spawn('/bin/proctree', ['/bin/proctree'])
    const e = engineOf(utrace.utrace_attach_task(init, UTRACE_ATTACH_CREATE, ops, null))
    utrace.utrace_set_events(init, e, UTRACE_EVENT.CLONE)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toContain('parent: exiting 0')
    expect(clones).toBe(1)
    expect(released).toBe(0) // the caller still holds its reference
    expect(utrace.utrace_control(init, e, UTRACE_RESUME)).toBeLessThan(0)
    expect(e.refcount).toBe(1)
  })
})

describe('job control', () => {
  it.skipIf(!haveBusybox)(
    'report_jctl: a child stopped by SIGSTOP and continued by SIGCONT, CLD_STOPPED then CLD_CONTINUED',
    () => {
      const { k, out } = boot(busyboxFiles())
      const utrace = utraceOf(k)
      const reports: string[] = []
      const ops: UtraceEngineOps = {
        report_clone: (action, _e, _flags, child) => {
          const e = engineOf(utrace.utrace_attach_task(child, UTRACE_ATTACH_CREATE, ops, null))
          utrace.utrace_set_events(child, e, UTRACE_EVENT.CLONE | UTRACE_EVENT.JCTL)
          return action
        },
        report_jctl: (action, _e, type, _notify, task) => {
          reports.push(
            `${task.comm} ${type === CLD_STOPPED ? 'stopped' : type === CLD_CONTINUED ? 'continued' : type}`,
          )
          return action
        },
      }
      const sh = k.spawn(BUSYBOX, [
        'sh',
        '-c',
        'sleep 1 & p=$!; sleep 0.01; kill -STOP $p; sleep 0.01; kill -CONT $p; wait; echo done',
      ])
      const e = engineOf(utrace.utrace_attach_task(sh, UTRACE_ATTACH_CREATE, ops, null))
      utrace.utrace_set_events(sh, e, UTRACE_EVENT.CLONE | UTRACE_EVENT.JCTL)
      expect(k.run(4_000_000_000).exit?.status).toBe(0)
      expect(out()).toBe('done\n')
      expect(reports).toEqual(['sleep stopped', 'sleep continued'])
    },
  )
})

describe('report_exit', () => {
  it('STOP holds the exiting thread before anything is torn down; the code can be changed; RESUME lets it finish', () => {
    const { k } = boot({ '/bin/t': GETPID_EXIT })
    const t = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const seen: number[] = []
    const e = engineOf(
      utrace.utrace_attach_task(
        t,
        UTRACE_ATTACH_CREATE,
        {
          report_exit: (_action, _e, orig, code) => {
            seen.push(orig)
            code.value = 42 << 8
            return UTRACE_STOP
          },
        },
        null,
      ),
    )
    utrace.utrace_set_events(t, e, UTRACE_EVENT.EXIT)
    expect(k.run(10_000_000).exit).toBeNull()
    expect(seen).toEqual([t.pid << 8]) // exit(getpid())
    expect(t.state).toBe('traced')
    // Still whole: its memory and files are there to examine.
    expect(t.mm.findVma(t.getReg('ip'))).toBeDefined()
    expect(k.run(5_000_000).exit).toBeNull()
    expect(utrace.utrace_control(t, e, UTRACE_RESUME)).toBe(0)
    expect(k.run(10_000_000).exit?.status).toBe(42)
  })
})
