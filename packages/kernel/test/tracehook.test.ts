// Tracehooks: the kernel reports each task's life to the tracers attached
// to it, from the task's own context, at the points Linux's tracehook.h
// names - and a tracer can change what happens there (skip a syscall,
// change its result, discard a signal, hold the task at a safe point,
// single-step it in user mode). Real programs: the fixtures, busybox, and
// tiny hand-assembled ELFs.

import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Kernel, type Task, type TaskTracer } from '../src/index.js'
import { copyFromUser } from '../src/mm/user-memory.js'
import { guestImage } from './support/run.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/bin/${name}`, import.meta.url)))
const BUSYBOX = '/bin/busybox'
const busybox =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

function boot(files: Record<string, Uint8Array>, cpus = 1): { k: Kernel; out: () => string } {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    cpus,
    memorySize: 128 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
  })
  for (const [p, data] of Object.entries(files)) k.vfs.writeFile(p, data, 0o755)
  k.boot()
  return { k, out: () => out }
}

/** getpid, then exit with its result's low byte: the exit status shows what the syscall returned. */
const GETPID_EXIT = tinyElf([...syscall(39), 0x89, 0xc7, ...syscall(60)]) // mov edi, eax

describe('tracehooks', () => {
  it('clone, exec, exit and death are reported in order, with the clone flags and exit codes; a tracer follows children', () => {
    const { k, out } = boot({ '/bin/proctree': fixture('proctree') })
    const events: string[] = []
    const tracer: TaskTracer = {
      reportClone: (parent, child, flags) => {
        events.push(`clone ${parent.pid}->${child.pid} ${(flags & 0x10000) !== 0 ? 'thread' : 'process'}`)
        // Follow the child from its creation (it has not run yet).
        expect(child.state).toBe('new')
        k.tracehooks.attach(child, tracer)
      },
      reportExec: (task, path) => void events.push(`exec ${task.pid} ${path}`),
      reportExit: (task, code) => void events.push(`exit ${task.pid} ${code}`),
      reportDeath: (task) => void events.push(`death ${task.pid}`),
    }
    const init = k.spawn('/bin/proctree', ['/bin/proctree'])
    k.tracehooks.attach(init, tracer)
    const { exit } = k.run(2_000_000_000)
    expect(exit?.status).toBe(0)
    expect(out()).toContain('parent: exiting 0')

    const clones = events.filter((e) => e.startsWith('clone'))
    expect(clones.length).toBeGreaterThan(4)
    for (const c of clones) {
      const pid = c.split(/->| /)[2]
      const at = (what: string) =>
        events.findIndex((e) => e.startsWith(`${what} ${pid} `) || e === `${what} ${pid}`)
      // Every child was cloned, then exited, then died: in that order, once each.
      expect(at('exit')).toBeGreaterThan(events.indexOf(c))
      expect(at('death')).toBeGreaterThan(at('exit'))
      expect(events.filter((e) => e === `death ${pid}`)).toHaveLength(1)
    }
    // The exec'd child: exec between its clone and its exit, with the path; exit codes as wait saw them.
    expect(events.some((e) => /^exec \d+ \/bin\/proctree$/.test(e))).toBe(true)
    expect(events).toContain(`exit ${clones.map((c) => c.split(/->| /)[2])[1]} ${7 << 8}`) // child 1: _exit(7)
    expect(events).toContain(`exit ${clones.map((c) => c.split(/->| /)[2])[3]} 15`) // child 3: SIGTERM
    expect(events.at(-2)).toBe(`exit ${init.pid} 0`)
    expect(events.at(-1)).toBe(`death ${init.pid}`)
  })

  it('syscall entry and exit: every call, guest-served or host-served, with its arguments and result', () => {
    const { k, out } = boot({ '/bin/hello': fixture('hello') })
    const calls: { nr: number; args: number[]; ret?: number }[] = []
    const init = k.spawn('/bin/hello', ['hello'])
    k.tracehooks.attach(init, {
      reportSyscallEntry: (_t, regs) =>
        void calls.push({ nr: regs.get('orig_ax'), args: [regs.get('di'), regs.get('si'), regs.get('dx')] }),
      reportSyscallExit: (_t, regs) => {
        const last = calls.at(-1)
        if (last) last.ret = regs.get('ax')
      },
    })
    expect(k.run(100_000_000).exit?.status).toBe(0)
    expect(out()).toBe('hello, world\n')
    // musl's hello: ... writev(1, iov, 2) or write(1, ...) = 13, then exit_group(0), which never returns.
    const write = calls.find((c) => (c.nr === 1 || c.nr === 20) && c.args[0] === 1)
    expect(write?.ret).toBe(13)
    expect(calls.at(-1)).toEqual({ nr: 231, args: [0, expect.any(Number), expect.any(Number)] })
    for (const c of calls.slice(0, -1)) expect(c.ret).toBeDefined()
  })

  it('a tracer skips a syscall (orig_ax = -1: -ENOSYS) or changes its result', () => {
    const run = (tracer: TaskTracer) => {
      const { k } = boot({ '/bin/t': GETPID_EXIT })
      const t = k.spawn('/bin/t', ['t'])
      k.tracehooks.attach(t, tracer)
      return k.run(10_000_000).exit?.status
    }
    expect(run({})).toBe(1) // getpid = 1 (init)
    expect(
      run({ reportSyscallEntry: (_t, regs) => void (regs.get('orig_ax') === 39 && regs.set('orig_ax', -1)) }),
    ).toBe(-38 & 0xff)
    expect(
      run({ reportSyscallExit: (_t, regs) => void (regs.get('orig_ax') === 39 && regs.set('ax', 42)) }),
    ).toBe(42)
  })

  it.skipIf(!busybox)('get_signal: a tracer sees a signal before its action and can discard it', () => {
    const script = 'kill -USR1 $$; echo survived'
    const run = (discard: boolean) => {
      const { k, out } = boot({ [BUSYBOX]: new Uint8Array(readFileSync(BUSYBOX)) })
      const seen: number[] = []
      const sh = k.spawn(BUSYBOX, ['sh', '-c', script])
      k.tracehooks.attach(sh, {
        getSignal: (_t, _regs, dequeue) => {
          const d = dequeue()
          if (!d) return { kind: 'none' }
          seen.push(d.info.signo)
          return discard && d.info.signo === 10 ? { kind: 'none' } : { kind: 'deliver', ...d }
        },
      })
      return { status: k.run(1_000_000_000).exit?.status, out: out(), seen }
    }
    const plain = run(false)
    expect(plain).toEqual({ status: 128 + 10, out: '', seen: [10] })
    const discarded = run(true)
    expect(discarded).toEqual({ status: 0, out: 'survived\n', seen: [10] })
  })

  it('a tracer stops a running task at the return-to-user safe point, and a sleeping one through the signal path (its read restarts); wake lets both finish', () => {
    const { k, out } = boot({ '/bin/pingpong': fixture('pingpong') })
    const stopped: string[] = []
    const wantStop = new Set<Task>()
    const parent = k.spawn('/bin/pingpong', ['pingpong', 'pipe', '300'])
    let child: Task | null = null
    const tracer: TaskTracer = {
      reportClone: (_p, c) => {
        child = c
        k.tracehooks.attach(c, tracer)
      },
      // tracehook_notify_resume: the running one stops on its way to user mode.
      reportResume: (t) => {
        if (!wantStop.delete(t)) return
        stopped.push(`resume ${t.pid}`)
        k.tracehooks.stop(t)
      },
      // The sleeping one: its sleep ends as for a signal, and get_signal stops it (nothing is delivered).
      sigpendingForced: (t) => wantStop.has(t),
      getSignal: (t) => {
        if (!wantStop.delete(t)) return undefined
        stopped.push(`signal ${t.pid}`)
        k.tracehooks.stop(t)
        return { kind: 'none' }
      },
    }
    k.tracehooks.attach(parent, tracer)
    let guard = 0
    while (!child && guard++ < 1000) k.run(5_000)
    k.run(200_000) // the ping-pong under way
    const c = child as unknown as Task
    // Stop the child first; the parent then waits in read for an answer that cannot come.
    wantStop.add(c)
    k.tracehooks.notifyResume(c)
    k.run(2_000_000)
    expect(c.state).toBe('traced')
    expect(parent.state).toBe('sleeping')
    // The parent's sleep ends: its read is to be restarted (the frame rewound to the syscall
    // instruction, rax = the call's number again), and it is held in get_signal.
    wantStop.add(parent)
    k.tracehooks.signalWakeUp(parent)
    k.run(2_000_000)
    expect(stopped).toEqual([`resume ${c.pid}`, `signal ${parent.pid}`])
    expect(parent.state).toBe('traced')
    expect(parent.getReg('orig_ax')).toBe(0)
    expect(parent.getReg('ax')).toBe(0)
    const ip = parent.getReg('ip')
    expect([...copyFromUser(parent.mm, ip, 2)]).toEqual([0x0f, 0x05]) // syscall
    // Nothing runs to the end while both are held.
    expect(k.run(5_000_000).exit).toBeNull()
    k.tracehooks.wake(parent)
    k.tracehooks.wake(c)
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out()).toBe('pipe 300\n')
  })

  it('a task stopped at syscall entry waits before the call and is asked again when woken; stepping it then traps right after the call (the step is the syscall), and the tracer keeps the SIGTRAP from the program', () => {
    const { k } = boot({ '/bin/t': GETPID_EXIT })
    const t = k.spawn('/bin/t', ['t'])
    const traps: { signo: number; trapno?: number; ip: number }[] = []
    const entries: { nr: number; resumed: boolean }[] = []
    k.tracehooks.attach(t, {
      reportSyscallEntry: (task, regs, resumed) => {
        entries.push({ nr: regs.get('orig_ax'), resumed })
        if (regs.get('orig_ax') === 39 && !resumed) k.tracehooks.stop(task)
      },
      getSignal: (task, regs, dequeue) => {
        const d = dequeue()
        if (!d) return undefined
        traps.push({ signo: d.info.signo, trapno: d.info.trapno, ip: regs.get('ip') })
        k.tracehooks.userDisableSingleStep(task)
        return { kind: 'none' }
      },
    })
    k.run(1_000_000)
    expect(t.state).toBe('traced')
    expect(entries).toEqual([{ nr: 39, resumed: false }])
    k.tracehooks.userEnableSingleStep(t)
    k.tracehooks.wake(t)
    expect(k.run(10_000_000).exit?.status).toBe(1)
    expect(entries).toEqual([
      { nr: 39, resumed: false },
      { nr: 39, resumed: true },
      { nr: 60, resumed: false },
    ])
    // The stepped instruction is the syscall itself: the CPU masks TF on entry, so the kernel reports the
    // step on the way out (user_single_step_report), at the instruction after it; the tracer kept it.
    const entry = new DataView(GETPID_EXIT.buffer).getUint32(24, true)
    expect(traps).toEqual([{ signo: 5, trapno: 1, ip: entry + 7 }])
  })
})
