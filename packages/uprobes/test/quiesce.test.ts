// Quiesce: before an int3 goes in or out, every thread of the process is
// stopped (UTRACE_INTERRUPT, then UTRACE_STOP). A thread asleep in an
// interruptible system call is woken for it and its call is restarted
// when it goes on - the seed's warning ("this may cause the system call to
// finish early or fail with EINTR"). Threads: every thread gets an engine,
// threads made later are followed, and all of them hit.

import { IS_ERR, UTRACE_ATTACH_CREATE, UTRACE_EVENT, UTRACE_RESUME, utraceOf } from '@probekit/utrace'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fixture, symbol } from './support/kernel.js'

const NR_READ = 0

describe('quiesce', () => {
  it('a thread asleep in read is woken by the quiesce, stopped, and its read restarted; the output is unchanged', () => {
    // sleepintr: the parent sleeps in read on an empty pipe while its helper child naps (then signals
    // it and writes); nothing else wakes it before the quiesce does.
    const sleepintr = fixture('sleepintr')
    const plain = boot({ '/bin/sleepintr': sleepintr })
    plain.k.spawn('/bin/sleepintr', ['sleepintr'])
    expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)

    const { k, out } = boot({ '/bin/sleepintr': sleepintr })
    const parent = k.spawn('/bin/sleepintr', ['sleepintr'])
    // Watch the parent's read calls: entries and what each returned.
    const utrace = utraceOf(k)
    const reads: string[] = []
    const watch = utrace.utrace_attach_task(
      parent,
      UTRACE_ATTACH_CREATE,
      {
        report_syscall_entry: (_a, _e, regs) => {
          if (regs.get('orig_ax') === NR_READ) reads.push('enter')
          return UTRACE_RESUME
        },
        report_syscall_exit: (_a, _e, regs) => {
          if (regs.get('orig_ax') === NR_READ) reads.push(`exit ${regs.get('ax')}`)
          return UTRACE_RESUME
        },
      },
      null,
    )
    if (IS_ERR(watch)) throw new Error(`attach: ${watch}`)
    utrace.utrace_set_events(parent, watch, UTRACE_EVENT.SYSCALL_ENTRY | UTRACE_EVENT.SYSCALL_EXIT)
    // Run until the parent sleeps in its first read.
    for (let i = 0; i < 20_000 && !(parent.state === 'sleeping' && reads.length === 1); i++) k.run(500)
    expect(reads).toEqual(['enter'])
    expect(parent.state).toBe('sleeping')
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: parent.pid, vaddr: symbol(sleepintr, 'on_usr1'), handler: () => hits++ }
    expect(up.register_uprobe(u)).toBe(0)
    // The sleep was cut short by the quiesce: the read left with -ERESTARTSYS (seen by the syscall-exit
    // report, never by the program) and entered again once the thread was resumed; it sleeps again.
    for (let i = 0; i < 1000 && reads.length < 3; i++) k.run(100)
    expect(reads).toEqual(['enter', 'exit -512', 'enter'])
    k.run(1000)
    expect(parent.state).toBe('sleeping')
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe(plain.out())
    // The handler ran as the program's own SIGUSR1 handler, twice (no SA_RESTART, then SA_RESTART) and
    // once more for the nanosleep.
    expect(out()).toContain('no SA_RESTART: read = -1 (Interrupted system call), handler ran 1 time(s)')
    expect(hits).toBe(3)
    expect(up.warnings).toEqual([])
  })

  it('threads: all threads of the process, and those it makes later, share the probe', () => {
    const threads = fixture('threads')
    const { k, out: outProbed } = boot({ '/bin/threads': threads })
    const t = k.spawn('/bin/threads', ['threads'])
    const up = uprobesOf(k)
    const hitBy: number[] = []
    // worker() runs once in each of the 4 threads made after the registration.
    const u: Uprobe = {
      pid: t.pid,
      vaddr: symbol(threads, 'worker'),
      handler: () => hitBy.push(up.current?.pid ?? -1),
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // Four hits, one in each new thread of the process.
    expect(hitBy.length).toBe(4)
    expect(new Set(hitBy).size).toBe(4)
    for (const pid of hitBy) {
      expect(pid).not.toBe(t.pid)
      expect(k.tasks.get(pid)?.tgid ?? t.tgid).toBe(t.tgid)
    }

    const plain = boot({ '/bin/threads': threads })
    plain.k.spawn('/bin/threads', ['threads'])
    expect(plain.k.run(2_000_000_000).exit?.status).toBe(0)
    expect(outProbed()).toBe(plain.out())
  })

  it('threads already running are stopped together for the insertion, then all go on', () => {
    const threads = fixture('threads')
    const { k, out } = boot({ '/bin/threads': threads }, 2)
    const t = k.spawn('/bin/threads', ['threads'])
    // Run until the 4 workers exist.
    const group = () => [...k.tasks.values()].filter((x) => x.tgid === t.tgid && x.state !== 'zombie')
    for (let i = 0; i < 10_000 && group().length < 5; i++) k.run(2_000)
    expect(group().length).toBe(5)
    const up = uprobesOf(k)
    let hits = 0
    const u: Uprobe = { pid: t.pid, vaddr: symbol(threads, 'sched_yield'), handler: () => hits++ }
    // The threads' states when the int3 is written (the shared mm's write, watched).
    const atWrite: string[][] = []
    const write = t.mm.write.bind(t.mm)
    t.mm.write = (addr, data) => {
      if (addr === u.vaddr) atWrite.push(group().map((x) => x.state))
      write(addr, data)
    }
    expect(up.register_uprobe(u)).toBe(0)
    expect(atWrite).toEqual([Array(5).fill('traced')])
    // And all go on.
    expect(group().every((x) => x.state !== 'traced')).toBe(true)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toContain('counter')
    expect(hits).toBeGreaterThan(0)
    expect(up.warnings).toEqual([])
  })
})
