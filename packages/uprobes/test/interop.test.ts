// Interoperation (the seed's section on what handlers may do): a uprobe
// handler runs where the kernel may sleep, so it may register and
// unregister kprobes, jprobes, kretprobes and other uprobes; a kprobe
// handler may not (it runs with preemption off): register_uprobe there is
// refused with -EPERM, never a deadlock. And the seed's recipe for probing
// a new child: attach in report_clone, ask UTRACE_REPORT, register the
// uprobe in the child's report_quiesce.

import { EINPROGRESS, EPERM, type Task } from '@probekit/kernel'
import { type Jprobe, type Kprobe, Kprobes, type Kretprobe } from '@probekit/kprobes'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_REPORT,
  UTRACE_RESUME,
  utraceOf,
} from '@probekit/utrace'
import { describe, expect, it } from 'vitest'
import { type Uprobe, uprobesOf } from '../src/index.js'
import { boot, fixture, symbol } from './support/kernel.js'

const MYPROG = fixture('myprog')
const MYFUNC = symbol(MYPROG, 'myfunc')
const EXPECTED =
  'myfunc(1, 2) = 8\nmyfunc(2, 3) = 14\nmyfunc(5, -1) = 23\nmyfunc(10, 7) = 122\nmyfunc(-4, 0) = 17\ncalls: 5, sum: 184\n'

describe('uprobe handlers and the kernel probes', () => {
  it('a uprobe handler registers a kprobe, a kretprobe, a jprobe and a uprobe; a later hit unregisters them', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const kp = new Kprobes(k)
    // myprog's output is buffered: its write system calls come at exit, before _Exit. The kernel probes
    // go in at myfunc's second hit and out at _Exit's, from uprobe handlers both times.
    const fired = { kprobe: 0, kretprobe: 0, jprobe: 0, uprobe: 0 }
    const kprobe: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        fired.kprobe++
        return 0
      },
    }
    const kretprobe: Kretprobe = {
      kp: { symbol_name: 'do_syscall_64' },
      handler: () => (fired.kretprobe++, 0),
    }
    const jprobe: Jprobe = { kp: { symbol_name: 'do_syscall_64' }, entry: () => void fired.jprobe++ }
    const inner: Uprobe = { pid: t.pid, vaddr: MYFUNC + 0, handler: () => void fired.uprobe++ }
    const results: number[] = []
    let hit = 0
    const outer: Uprobe = {
      pid: t.pid,
      vaddr: MYFUNC,
      handler: () => {
        hit++
        if (hit === 2) {
          results.push(
            kp.register_kprobe(kprobe),
            kp.register_kretprobe(kretprobe),
            kp.register_jprobe(jprobe),
          )
          results.push(up.register_uprobe(inner))
        } else if (hit === 4) up.unregister_uprobe(inner)
      },
    }
    let atExit = { kprobe: -1, kretprobe: -1, jprobe: -1 }
    const exitProbe: Uprobe = {
      pid: t.pid,
      vaddr: symbol(MYPROG, '_Exit'),
      handler: () => {
        kp.unregister_kprobe(kprobe)
        kp.unregister_kretprobe(kretprobe)
        kp.unregister_jprobe(jprobe)
        atExit = { ...fired }
      },
    }
    expect(up.register_uprobe(outer)).toBe(0)
    expect(up.register_uprobe(exitProbe)).toBe(0)
    expect(k.run(500_000_000).exit?.status).toBe(0)
    expect(out()).toBe(EXPECTED)
    // The uprobe registered from the handler is delayed (-EINPROGRESS), the kernel probes are not.
    expect(results).toEqual([0, 0, 0, -EINPROGRESS])
    // The exit's writes (and whatever else it calls) hit the kernel probes, each once per system call.
    expect(fired.kprobe).toBeGreaterThanOrEqual(1)
    expect(fired.jprobe).toBe(fired.kprobe)
    expect(fired.kretprobe).toBe(fired.kprobe)
    // Unregistered at _Exit: its exit_group system call is not seen.
    expect(atExit).toMatchObject({ kprobe: fired.kprobe, kretprobe: fired.kretprobe, jprobe: fired.jprobe })
    // The inner uprobe saw hits 3 and 4 (registered after hit 2's handlers, unregistered after hit 4's).
    expect(fired.uprobe).toBe(2)
    expect(up.warnings).toEqual([])
    expect(kp.get_kprobe(k.kallsyms.lookupName('do_syscall_64') as number)).toBeUndefined()
  })

  it('a kprobe handler may not register a uprobe: -EPERM, said in the warnings, and the run goes on', () => {
    const { k, out } = boot({ '/bin/myprog': MYPROG })
    const t = k.spawn('/bin/myprog', ['myprog'])
    const up = uprobesOf(k)
    const kp = new Kprobes(k)
    const tries: number[] = []
    const u: Uprobe = { pid: t.pid, vaddr: MYFUNC, handler: () => {} }
    const probe: Kprobe = {
      symbol_name: 'do_syscall_64',
      pre_handler: () => {
        if (tries.length < 3) tries.push(up.register_uprobe(u))
        return 0
      },
    }
    expect(kp.register_kprobe(probe)).toBe(0)
    expect(k.run(500_000_000).exit?.status).toBe(0)
    kp.unregister_kprobe(probe)
    expect(tries).toEqual([-EPERM, -EPERM, -EPERM])
    expect(up.isProbed(t.tgid)).toBe(false)
    expect(up.warnings).toHaveLength(3)
    expect(up.warnings[0]).toMatch(/cannot sleep/)
    expect(out()).toBe(EXPECTED)
  })
})

describe("the seed's recipe for a new child", () => {
  it('attach in report_clone, UTRACE_REPORT, register in the child report_quiesce: the child hits before it runs a line', () => {
    const UPROBED = fixture('uprobed')
    // gcc makes the child's printf of a constant line a puts.
    const puts = symbol(UPROBED, 'puts')
    const { k, out } = boot({ '/bin/uprobed': UPROBED })
    const parent = k.spawn('/bin/uprobed', ['uprobed', 'fork'])
    const utrace = utraceOf(k)
    const up = uprobesOf(k)
    const hits: number[] = []
    let registered: number | null = null
    let child: Task | null = null
    const childOps = {
      report_quiesce: (_action: number, _engine: unknown, _event: number, task: Task) => {
        if (registered === null) {
          registered = up.register_uprobe({
            pid: task.pid,
            vaddr: puts,
            handler: () => hits.push(up.current!.pid),
          })
        }
        return UTRACE_DETACH
      },
    }
    const watch = utrace.utrace_attach_task(
      parent,
      UTRACE_ATTACH_CREATE,
      {
        report_clone: (_action, _engine, _flags, c) => {
          child = c
          const e = utrace.utrace_attach_task(c, UTRACE_ATTACH_CREATE, childOps, null)
          if (IS_ERR(e)) throw new Error(`attach: ${e}`)
          utrace.utrace_set_events(c, e, UTRACE_EVENT.QUIESCE)
          utrace.utrace_control(c, e, UTRACE_REPORT)
          return UTRACE_RESUME
        },
      },
      null,
    )
    if (IS_ERR(watch)) throw new Error(`attach: ${watch}`)
    utrace.utrace_set_events(parent, watch, UTRACE_EVENT.CLONE)
    expect(k.run(500_000_000).exit?.status).toBe(0)
    expect(registered).toBe(0)
    expect(child).not.toBeNull()
    // The child's one puts hit; the parent (never probed) none.
    expect(hits).toEqual([(child as unknown as Task).pid])
    expect(out()).toBe('child: ufork returned 0\nparent: ufork returned 1\n')
    expect(up.warnings).toEqual([])
  })
})
