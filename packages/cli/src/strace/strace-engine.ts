// probekit run --strace: a syscall tracer built only on @probekit/utrace's
// public API, as strace -f is built on ptrace. One engine per task (attached
// to the first, then to every child from report_clone, before it runs);
// syscall entry and exit, signals before their action, and deaths are
// printed as strace prints them. Lines of tasks whose calls overlap (one
// sleeps in read while another runs) are split as strace splits them:
// 'read(3,  <unfinished ...>' ... '<... read resumed>"x", 1) = 1'.

import { BadAddress, copyFromUser, type Kernel, signalName, syscallName, type Task } from '@probekit/kernel'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_EVENT,
  UTRACE_EVENT_SIGNAL_ALL,
  UTRACE_RESUME,
  UTRACE_SIGNAL_HANDLER,
  UTRACE_SIGNAL_REPORT,
  type UtraceEngineOps,
  utrace_engine_put,
  utrace_signal_action,
  utraceOf,
} from '@probekit/utrace'
import { formatExit } from './format-exit.js'
import { formatSignal } from './format-signal.js'
import { type StraceCall, startSyscall } from './format-syscall.js'
import type { StraceMemory } from './memory.js'

export interface StraceOptions {
  /** Where each finished line goes (without its newline). */
  emit: (line: string) => void
  /** Only these syscall numbers are printed (-e trace=...); signals and exits always are. */
  only?: ReadonlySet<number>
  /** One JSON object per line instead of strace's text. */
  json?: boolean
}

/** What a JSON line says of a syscall. */
interface JsonSyscall {
  pid: number
  syscall: string
  args: number[]
  /** The raw result (rax), or null for a call that never returned. */
  retval: number | null
  /** The errno name of a failed call. */
  error?: string
  /** strace's text of the call. */
  text: string
}

interface OpenCall {
  nr: number
  args: number[]
  call: StraceCall
  /** Its entry was printed (as '<unfinished ...>') because another task printed meanwhile. */
  split: boolean
}

export class StraceEngine {
  /** Calls entered and not yet returned, in entry order. */
  private readonly open = new Map<Task, OpenCall>()
  /** Traced tasks alive now (strace prefixes [pid N] while there are several). */
  private readonly live = new Set<Task>()
  private readonly ops: UtraceEngineOps

  constructor(
    private readonly kernel: Kernel,
    private readonly options: StraceOptions,
  ) {
    this.ops = {
      report_clone: (action, _engine, _flags, child) => {
        this.attach(child)
        return action
      },
      report_syscall_entry: (action, _engine, regs, task) => {
        const nr = regs.get('orig_ax')
        if (this.options.only && !this.options.only.has(nr)) return action
        const args = (['di', 'si', 'dx', 'r10', 'r8', 'r9'] as const).map((r) => regs.get(r))
        this.open.set(task, { nr, args, call: startSyscall(nr, args, memoryOf(task)), split: false })
        return UTRACE_RESUME
      },
      report_syscall_exit: (action, _engine, regs, task) => {
        const c = this.open.get(task)
        if (!c) return action
        this.open.delete(task)
        const ret = regs.get('ax')
        const mem = memoryOf(task)
        this.print(
          task,
          (col) => (c.split ? c.call.resumed(ret, mem, col) : c.call.finish(ret, mem, col)),
          () => ({
            pid: task.pid,
            syscall: syscallName(c.nr),
            args: c.args,
            retval: ret,
            text: c.call.finish(ret, mem),
          }),
        )
        return UTRACE_RESUME
      },
      report_signal: (action, _engine, _regs, info, _orig, _ret, task) => {
        const what = utrace_signal_action(action)
        // Reports on the signal path with no signal of their own are not signals.
        if (what !== UTRACE_SIGNAL_REPORT && what !== UTRACE_SIGNAL_HANDLER && info.signo !== 0)
          this.printLine(task, formatSignal(info), { pid: task.pid, signal: signalName(info.signo) })
        return what | UTRACE_RESUME
      },
      report_death: (_engine, _groupDead, signal, task) => {
        const c = this.open.get(task)
        if (c) {
          this.open.delete(task)
          // exit_group, or a call the task died in: strace's "= ?".
          this.print(
            task,
            (col) => c.call.unfinished({ ...col, resumed: c.split }),
            () => ({
              pid: task.pid,
              syscall: syscallName(c.nr),
              args: c.args,
              retval: null,
              text: c.call.unfinished(),
            }),
          )
        }
        const status = signal ? { signal } : { code: task.exitCode }
        this.printLine(task, formatExit(status), {
          pid: task.pid,
          exit: signal ? { signal: signalName(signal) } : { code: task.exitCode },
        })
        this.live.delete(task)
        return UTRACE_RESUME
      },
    }
  }

  /** Trace a task (and, through report_clone, everything it starts). */
  attach(task: Task): void {
    const utrace = utraceOf(this.kernel)
    const engine = utrace.utrace_attach_task(task, UTRACE_ATTACH_CREATE, this.ops, this)
    if (IS_ERR(engine)) throw new Error(`strace: cannot attach to ${task.pid} (${engine})`)
    utrace.utrace_set_events(
      task,
      engine,
      UTRACE_EVENT.CLONE |
        UTRACE_EVENT.SYSCALL_ENTRY |
        UTRACE_EVENT.SYSCALL_EXIT |
        UTRACE_EVENT_SIGNAL_ALL |
        UTRACE_EVENT.DEATH,
    )
    // The attached reference keeps the engine until the task is reaped.
    utrace_engine_put(engine)
    this.live.add(task)
  }

  /** A syscall line (text given the column it starts at), after splitting any other open call; each form made only when printed. */
  private print(task: Task, text: (options: { column: number }) => string, json: () => JsonSyscall): void {
    this.splitOthers(task)
    if (this.options.json) this.options.emit(JSON.stringify(json()))
    else {
      const prefix = this.prefix(task)
      this.options.emit(`${prefix}${text({ column: prefix.length })}`)
    }
  }

  private printLine(task: Task, text: string, json: object): void {
    this.splitOthers(task)
    this.options.emit(this.options.json ? JSON.stringify(json) : `${this.prefix(task)}${text}`)
  }

  /** Another task's call still open: its entry is printed now, as '<unfinished ...>', before this line. */
  private splitOthers(task: Task): void {
    if (this.options.json) return
    for (const [t, c] of this.open) {
      if (t === task || c.split) continue
      c.split = true
      this.options.emit(`${this.prefix(t)}${c.call.interrupted()}`)
    }
  }

  private prefix(task: Task): string {
    return this.live.size > 1 ? `[pid ${String(task.pid).padStart(5)}] ` : ''
  }
}

/** The task's user memory as the formatter reads it (strace's umoven: all or nothing). */
function memoryOf(task: Task): StraceMemory {
  return {
    read(addr, len) {
      try {
        return copyFromUser(task.mm, addr, len)
      } catch (e) {
        if (e instanceof BadAddress) return null
        throw e
      }
    },
  }
}
