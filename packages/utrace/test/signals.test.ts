// Signals: report_signal sees each signal before its action, classified as
// utrace classifies it (a handler: SIGNAL/DELIVER; a default that kills:
// SIGNAL_TERM/TERM; a core-dumping default: SIGNAL_CORE/CORE), and decides:
// deliver, ignore, another signal, a stop. int3 and single-step traps in
// user mode arrive as SIGTRAP with UTRACE_SIGNAL_CORE; an engine that
// handles them keeps them from the program; UTRACE_SINGLESTEP steps the
// thread one user instruction at a time.

import { SIGCONT, SIGTRAP, SIGUSR1 } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import {
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_EVENT_SIGNAL_ALL,
  UTRACE_RESUME,
  UTRACE_SIGNAL_CORE,
  UTRACE_SIGNAL_DELIVER,
  UTRACE_SIGNAL_HANDLER,
  UTRACE_SIGNAL_HOLD,
  UTRACE_SIGNAL_IGN,
  UTRACE_SIGNAL_STOP,
  UTRACE_SIGNAL_TERM,
  UTRACE_SINGLESTEP,
  utrace_signal_action,
  utraceOf,
} from '../src/index.js'
import {
  BUSYBOX,
  boot,
  busyboxFiles,
  engineOf,
  haveBusybox,
  syscall,
  TINY_BASE,
  tinyElf,
} from './support/kernel.js'

const HDR = 64 + 56
/** int3; getpid; mov edi, eax; exit(edi): reaches exit only if the SIGTRAP is kept from it. */
const TRAPPER = tinyElf([0xcc, ...syscall(39), 0x89, 0xc7, ...syscall(60)])

describe('report_signal', () => {
  it.skipIf(!haveBusybox)(
    'a default-fatal signal comes as SIGNAL_TERM; IGN keeps it from the program, DELIVER lets it kill',
    () => {
      const run = (answer: number) => {
        const { k, out } = boot(busyboxFiles())
        const seen: string[] = []
        const sh = k.spawn(BUSYBOX, ['sh', '-c', 'kill -USR1 $$; echo survived'])
        const utrace = utraceOf(k)
        const e = engineOf(
          utrace.utrace_attach_task(
            sh,
            UTRACE_ATTACH_CREATE,
            {
              report_signal: (action, _e, _regs, info, orig_ka) => {
                seen.push(`${info.signo} ${utrace_signal_action(action).toString(16)} ${orig_ka?.handler}`)
                return answer | UTRACE_RESUME
              },
            },
            null,
          ),
        )
        utrace.utrace_set_events(sh, e, UTRACE_EVENT_SIGNAL_ALL)
        return { status: k.run(1_000_000_000).exit?.status, out: out(), seen }
      }
      expect(run(UTRACE_SIGNAL_DELIVER)).toEqual({
        status: 128 + SIGUSR1,
        out: '',
        seen: [`${SIGUSR1} ${UTRACE_SIGNAL_TERM.toString(16)} 0`],
      })
      expect(run(UTRACE_SIGNAL_IGN)).toEqual({
        status: 0,
        out: 'survived\n',
        seen: [`${SIGUSR1} ${UTRACE_SIGNAL_TERM.toString(16)} 0`],
      })
    },
  )

  it('an engine changes the signal: info rewritten and delivered (SIGUSR1 becomes SIGTRAP, a core-dumping kill)', () => {
    const { k } = boot({ '/bin/t': TRAPPER })
    const t = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const e = engineOf(
      utrace.utrace_attach_task(
        t,
        UTRACE_ATTACH_CREATE,
        {
          report_signal: (_action, _e, _regs, info) => {
            // The int3's SIGTRAP becomes SIGUSR1, delivered with SIGUSR1's (default) action.
            info.signo = SIGUSR1
            return UTRACE_SIGNAL_DELIVER | UTRACE_RESUME
          },
        },
        null,
      ),
    )
    utrace.utrace_set_events(t, e, UTRACE_EVENT_SIGNAL_ALL)
    expect(k.run(10_000_000).exit?.status).toBe(128 + SIGUSR1)
  })

  it('int3 in user code: SIGTRAP reported as SIGNAL_CORE at the address after it; kept from the program, which runs on', () => {
    const plain = boot({ '/bin/t': TRAPPER })
    plain.k.spawn('/bin/t', ['t'])
    expect(plain.k.run(10_000_000).exit?.status).toBe(128 + SIGTRAP)
    // Unhandled, it leaves show_unhandled_signals' line in dmesg; an engine that sees it first, none.
    const trapLine = (lines: readonly { text: string }[]) => lines.some((l) => / trap 3 ip /.test(l.text))
    expect(trapLine(plain.k.printk.lines)).toBe(true)

    const { k } = boot({ '/bin/t': TRAPPER })
    const t = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const traps: string[] = []
    const e = engineOf(
      utrace.utrace_attach_task(
        t,
        UTRACE_ATTACH_CREATE,
        {
          report_signal: (action, _e, regs, info) => {
            traps.push(
              `${info.signo} ${utrace_signal_action(action) === UTRACE_SIGNAL_CORE} ${regs.get('ip')}`,
            )
            return UTRACE_SIGNAL_IGN | UTRACE_RESUME
          },
        },
        null,
      ),
    )
    // Only SIGNAL_CORE: the breakpoint's report needs no other event.
    utrace.utrace_set_events(t, e, UTRACE_EVENT.SIGNAL_CORE)
    expect(k.run(10_000_000).exit?.status).toBe(t.pid)
    expect(traps).toEqual([`${SIGTRAP} true ${TINY_BASE + HDR + 1}`])
    expect(trapLine(k.printk.lines)).toBe(false)
  })

  it('UTRACE_SINGLESTEP steps one user instruction per report: the traps walk the program instruction by instruction', () => {
    const { k } = boot({ '/bin/t': TRAPPER })
    const t = k.spawn('/bin/t', ['t'])
    const utrace = utraceOf(k)
    const ips: number[] = []
    const e = engineOf(
      utrace.utrace_attach_task(
        t,
        UTRACE_ATTACH_CREATE,
        {
          report_quiesce: (action) => action,
          report_signal: (_action, _e, regs) => {
            ips.push(regs.get('ip') - (TINY_BASE + HDR))
            // Step through the next three instructions, then run free.
            return UTRACE_SIGNAL_IGN | (ips.length <= 3 ? UTRACE_SINGLESTEP : UTRACE_RESUME)
          },
        },
        null,
      ),
    )
    utrace.utrace_set_events(t, e, UTRACE_EVENT.SIGNAL_CORE | UTRACE_EVENT.QUIESCE)
    expect(k.run(10_000_000).exit?.status).toBe(t.pid)
    // After int3 (1 byte): mov eax, 39 (5) -> syscall (2) -> mov edi, eax (2): each trap one instruction on.
    expect(ips).toEqual([1, 6, 8, 10])
  })
})

describe('signal decisions', () => {
  it.skipIf(!haveBusybox)(
    'DELIVER with SINGLESTEP into a handler: a second report_signal with UTRACE_SIGNAL_HANDLER, at the handler',
    () => {
      const { k, out } = boot(busyboxFiles())
      const sh = k.spawn(BUSYBOX, ['sh', '-c', "trap 'echo caught' USR1; kill -USR1 $$; echo after"])
      const utrace = utraceOf(k)
      const seen: string[] = []
      let handler = 0
      const e = engineOf(
        utrace.utrace_attach_task(
          sh,
          UTRACE_ATTACH_CREATE,
          {
            report_quiesce: (action) => action,
            report_signal: (action, _e, regs, info, orig_ka) => {
              const what = utrace_signal_action(action)
              if (what === UTRACE_SIGNAL_DELIVER && info.signo === SIGUSR1) {
                handler = orig_ka?.handler ?? 0
                seen.push('deliver')
                return UTRACE_SIGNAL_DELIVER | UTRACE_SINGLESTEP
              }
              if (what === UTRACE_SIGNAL_HANDLER) {
                seen.push(`handler at ${regs.get('ip') === handler}`)
                return UTRACE_SIGNAL_IGN | UTRACE_RESUME
              }
              return what | UTRACE_RESUME
            },
          },
          null,
        ),
      )
      utrace.utrace_set_events(sh, e, UTRACE_EVENT.SIGNAL | UTRACE_EVENT.QUIESCE)
      expect(k.run(1_000_000_000).exit?.status).toBe(0)
      expect(out()).toBe('caught\nafter\n')
      expect(seen).toEqual(['deliver', 'handler at true'])
    },
  )

  it.skipIf(!haveBusybox)(
    'UTRACE_SIGNAL_HOLD puts the signal back: reported again, then delivered; UTRACE_SIGNAL_STOP stops the group for job control',
    () => {
      const held = boot(busyboxFiles())
      const sh = held.k.spawn(BUSYBOX, ['sh', '-c', "trap 'echo caught' USR1; kill -USR1 $$; echo after"])
      const utrace = utraceOf(held.k)
      let reports = 0
      const e = engineOf(
        utrace.utrace_attach_task(
          sh,
          UTRACE_ATTACH_CREATE,
          {
            report_signal: (action, _e, _regs, info) => {
              if (info.signo !== SIGUSR1) return utrace_signal_action(action) | UTRACE_RESUME
              // The first time: ignore it now but keep it queued.
              return reports++ === 0
                ? UTRACE_SIGNAL_IGN | UTRACE_SIGNAL_HOLD | UTRACE_RESUME
                : UTRACE_SIGNAL_DELIVER | UTRACE_RESUME
            },
          },
          null,
        ),
      )
      utrace.utrace_set_events(sh, e, UTRACE_EVENT.SIGNAL)
      expect(held.k.run(1_000_000_000).exit?.status).toBe(0)
      expect(held.out()).toBe('caught\nafter\n')
      expect(reports).toBe(2)

      const stopped = boot(busyboxFiles())
      const sh2 = stopped.k.spawn(BUSYBOX, ['sh', '-c', "trap 'echo caught' USR1; kill -USR1 $$; echo after"])
      const u2 = utraceOf(stopped.k)
      const e2 = engineOf(
        u2.utrace_attach_task(
          sh2,
          UTRACE_ATTACH_CREATE,
          {
            report_signal: (action, _e, _regs, info) =>
              info.signo === SIGUSR1
                ? UTRACE_SIGNAL_STOP | UTRACE_RESUME
                : utrace_signal_action(action) | UTRACE_RESUME,
          },
          null,
        ),
      )
      u2.utrace_set_events(sh2, e2, UTRACE_EVENT.SIGNAL)
      expect(stopped.k.run(100_000_000).exit).toBeNull()
      expect(sh2.state).toBe('stopped')
      expect(stopped.out()).toBe('')
      // SIGCONT: it goes on; USR1 was turned into the stop, so no handler ran.
      stopped.k.signals.sendSignal(stopped.k.machine.cpus[0], sh2, { signo: SIGCONT, code: 0 })
      expect(stopped.k.run(1_000_000_000).exit?.status).toBe(0)
      expect(stopped.out()).toBe('after\n')
    },
  )
})
