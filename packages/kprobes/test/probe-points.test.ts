// The functions perf-probe and bpftrace users attach to exist in the guest
// kernel with Linux's names and argument order, and are hit while a busybox
// shell pipeline runs: load_elf_binary with the exec'd file in
// bprm->filename, handle_mm_fault(vma, address, flags, regs) for each page
// the programs touch. Their callers in the fault path stay off limits, as
// the kprobes documentation says. Needs busybox-static; skipped otherwise.

import { readFileSync } from 'node:fs'
import { FAULT_FLAG_USER, FAULT_FLAG_WRITE, Kernel, TASK_SIZE } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes, type Kretprobe, regs_return_value } from '../src/index.js'
import { BUSYBOX, bootBusybox, busyboxAvailable } from './support/busybox.js'
import { guestImage } from './support/kernel.js'

const PIPELINE = '/bin/busybox seq 1 300 | /bin/busybox sort -r | /bin/busybox wc -l'

const boot = () => bootBusybox()

/** A NUL-terminated kernel string. */
function kernelString(k: Kernel, addr: number): string {
  return k.readKernelString(addr)
}

describe.skipIf(!busyboxAvailable)('probe points on a busybox pipeline', () => {
  it("load_elf_binary(bprm): bprm->filename is the exec'd file, once per exec", () => {
    const { k, kp, out } = boot()
    const loaded: string[] = []
    const execs: string[] = []
    const p: Kprobe = {
      symbol_name: 'load_elf_binary',
      pre_handler: (_p, regs) => {
        loaded.push(kernelString(k, kp.peek(regs.get('di'))))
        return 0
      },
    }
    // do_execve(filename, argv, envp): struct filename's name at +0.
    const q: Kprobe = {
      symbol_name: 'do_execve',
      pre_handler: (_p, regs) => {
        execs.push(kernelString(k, kp.peek(regs.get('di'))))
        return 0
      },
    }
    expect(kp.register_kprobes([p, q])).toBe(0)
    k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(out().trim()).toBe('300')
    // The shell forked and exec'd the three commands.
    expect(loaded).toEqual([BUSYBOX, BUSYBOX, BUSYBOX])
    expect(execs).toEqual(loaded)
  })

  it('do_sys_openat2 -> do_filp_open(dfd, pathname, op): the kernel copy of each opened path', () => {
    const { k, kp, out } = boot()
    const opened: { dfd: number; path: string }[] = []
    const p: Kprobe = {
      symbol_name: 'do_filp_open',
      pre_handler: (_p, regs) => {
        opened.push({ dfd: regs.get('di') | 0, path: kernelString(k, kp.peek(regs.get('si'))) })
        return 0
      },
    }
    let openat2 = 0
    const q: Kprobe = {
      symbol_name: 'do_sys_openat2',
      pre_handler: () => {
        openat2++
        return 0
      },
    }
    expect(kp.register_kprobes([p, q])).toBe(0)
    k.spawn(BUSYBOX, ['cat', '/etc/group', '/etc/passwd'])
    expect(k.run(1_000_000_000).exit?.status).toBe(0)
    expect(out()).toContain('root:x:0:')
    expect(opened).toEqual([
      { dfd: -100, path: '/etc/group' },
      { dfd: -100, path: '/etc/passwd' },
    ])
    expect(openat2).toBe(2)
  })

  it('vfs_mkdir and vfs_unlink see the name in dentry->d_name, vfs_fsync the file; do_munmap unmaps', () => {
    const { k, kp } = boot()
    const names: string[] = []
    const dname = (sym: string): Kprobe => ({
      symbol_name: sym,
      // vfs_mkdir(idmap, dir, dentry, mode) / vfs_unlink(idmap, dir, dentry, delegated): d_name.name at +40.
      pre_handler: (_p, regs) => {
        names.push(`${sym} ${kernelString(k, kp.peek(regs.get('dx') + 40))}`)
        return 0
      },
    })
    let fsyncs = 0
    let munmaps = 0
    const fsync: Kprobe = {
      symbol_name: 'vfs_fsync',
      pre_handler: (_p, regs) => {
        if (kp.peek(regs.get('di') + 12, 4) === 0) fsyncs++ // a struct file of a host (regular) file
        return 0
      },
    }
    const munmap: Kprobe = {
      symbol_name: 'do_munmap',
      pre_handler: () => {
        munmaps++
        return 0
      },
    }
    expect(kp.register_kprobes([dname('vfs_mkdir'), dname('vfs_unlink'), fsync, munmap])).toBe(0)
    const script =
      'mkdir /tmp/dir && /bin/busybox dd if=/etc/passwd of=/tmp/dir/copy conv=fsync 2>/dev/null && rm /tmp/dir/copy && rmdir /tmp/dir && /bin/busybox seq 1 20000 | /bin/busybox sort -n | /bin/busybox tail -1'
    k.spawn(BUSYBOX, ['sh', '-c', script])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    expect(names).toEqual(['vfs_mkdir dir', 'vfs_unlink copy'])
    expect(fsyncs).toBe(1)
    expect(munmaps).toBeGreaterThan(0)
  })

  it('handle_mm_fault(vma, address, flags, regs): the faulting user addresses; the page is mapped after it', () => {
    const { k, kp } = boot()
    const faults: { address: number; flags: number; mapped: boolean }[] = []
    const rp: Kretprobe = {
      kp: { symbol_name: 'handle_mm_fault' },
      maxactive: 4,
      data_size: 16,
      entry_handler: (ri, regs) => {
        const d = new DataView(ri.data.buffer)
        d.setFloat64(0, regs.get('si'))
        d.setFloat64(8, regs.get('dx'))
        return 0
      },
      handler: (ri, regs) => {
        const d = new DataView(ri.data.buffer)
        const address = d.getFloat64(0)
        const task = ri.task
        const mapped =
          regs_return_value(regs) === 0 && task !== null && task.mm.space.lookup(address) !== null
        faults.push({ address, flags: d.getFloat64(8), mapped })
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    // The fault path itself cannot be probed (a breakpoint there would fault while handling a fault).
    expect(kp.register_kprobe({ symbol_name: 'do_user_addr_fault' })).toBe(-22)
    expect(kp.register_kprobe({ symbol_name: 'exc_page_fault' })).toBe(-22)
    k.spawn(BUSYBOX, ['sh', '-c', PIPELINE])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)

    expect(faults.length).toBeGreaterThan(20)
    for (const f of faults) {
      expect(f.address).toBeGreaterThanOrEqual(0)
      expect(f.address).toBeLessThan(TASK_SIZE)
      expect(f.mapped).toBe(true)
    }
    // Faults from user mode (demand paging, copy-on-write after fork), writes among them.
    expect(faults.some((f) => (f.flags & FAULT_FLAG_USER) !== 0)).toBe(true)
    expect(faults.some((f) => (f.flags & FAULT_FLAG_WRITE) !== 0)).toBe(true)
    expect(rp.nmissed ?? 0).toBe(0)
  })
})

describe('sending signals', () => {
  it('kill and raise (tgkill) reach send_signal(sig, info, t, type) with the target and si_code', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 128 * 1024 * 1024 })
    k.vfs.writeFile(
      '/bin/signals',
      new Uint8Array(readFileSync(new URL('../../kernel/fixtures/bin/signals', import.meta.url))),
      0o755,
    )
    k.boot()
    const kp = new Kprobes(k)
    const sent: { sig: number; code: number; pid: number; target: number }[] = []
    const p: Kprobe = {
      symbol_name: 'send_signal',
      pre_handler: (_p, regs) => {
        // struct kernel_siginfo: si_code at +8, si_pid at +16; the target task_struct's pid at +0.
        const info = regs.get('si')
        sent.push({
          sig: regs.get('di'),
          code: kp.peek(info + 8, 4) | 0,
          pid: kp.peek(info + 16, 4),
          target: kp.peek(regs.get('dx'), 4),
        })
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    const init = k.spawn('/bin/signals', ['signals'])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // raise(SIGUSR1): tgkill, SI_TKILL; kill(getpid(), SIGUSR1): SI_USER, from itself.
    expect(sent).toContainEqual({ sig: 10, code: -6, pid: init.pid, target: init.pid })
    expect(sent).toContainEqual({ sig: 10, code: 0, pid: init.pid, target: init.pid })
    // The parent's SIGUSR1 to a child waiting in sigsuspend: another target.
    expect(sent.some((s) => s.target !== init.pid)).toBe(true)
  })
})

describe('futex and nanosleep sleep in the guest', () => {
  const fixture = (name: string) =>
    new Uint8Array(readFileSync(new URL(`../../kernel/fixtures/bin/${name}`, import.meta.url)))
  const run = (name: string, symbols: string[]) => {
    const k = new Kernel({ image: guestImage(), memorySize: 128 * 1024 * 1024 })
    k.vfs.writeFile(`/bin/${name}`, fixture(name), 0o755)
    k.boot()
    const kp = new Kprobes(k)
    const hits = new Map<string, number>(symbols.map((s) => [s, 0]))
    let sleptIn = ''
    const probes: Kprobe[] = symbols.map((symbol_name) => ({
      symbol_name,
      pre_handler: () => {
        hits.set(symbol_name, (hits.get(symbol_name) ?? 0) + 1)
        return 0
      },
    }))
    // Which function a sleep began in: the caller of wait_event_host (its return address).
    probes.push({
      symbol_name: 'wait_event_host',
      pre_handler: (_p, regs) => {
        sleptIn += `${k.kallsyms.format(kp.peek(regs.get('sp'))).split('+')[0]} `
        return 0
      },
    })
    expect(kp.register_kprobes(probes)).toBe(0)
    k.spawn(`/bin/${name}`, [name])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    return { hits, sleptIn }
  }

  it('pthreads: futex_wait sleeps until futex_wake', () => {
    const { hits, sleptIn } = run('threads-glibc-O2', ['do_futex', 'futex_wait', 'futex_wake'])
    expect(hits.get('futex_wait')).toBeGreaterThan(0)
    expect(hits.get('futex_wake')).toBeGreaterThan(0)
    expect(hits.get('do_futex')).toBe((hits.get('futex_wait') ?? 0) + (hits.get('futex_wake') ?? 0))
    expect(sleptIn).toContain('futex_wait')
  })

  it('nanosleep: do_nanosleep sleeps (sleepintr: its naps, and its reads in pipe_read)', () => {
    const { hits, sleptIn } = run('sleepintr', ['hrtimer_nanosleep', 'do_nanosleep', 'pipe_read'])
    expect(hits.get('do_nanosleep')).toBe(hits.get('hrtimer_nanosleep'))
    expect(hits.get('do_nanosleep')).toBeGreaterThan(4)
    expect(sleptIn).toContain('do_nanosleep')
    expect(sleptIn).toContain('pipe_read')
  })
})

describe('out of memory', () => {
  it('oom_kill_process(oc, message): the chosen task in oc->chosen, "Out of memory", then SIGKILL through send_signal', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 48 * 1024 * 1024 })
    k.vfs.writeFile(
      '/bin/memhog',
      new Uint8Array(readFileSync(new URL('../../kernel/fixtures/bin/memhog', import.meta.url))),
      0o755,
    )
    k.boot()
    const kp = new Kprobes(k)
    const events: string[] = []
    const oom: Kprobe = {
      symbol_name: 'oom_kill_process',
      pre_handler: (_p, regs) => {
        // struct oom_control: chosen at +8; the task_struct's pid at +0.
        const victim = kp.peek(regs.get('di') + 8)
        events.push(`oom_kill_process ${kp.peek(victim, 4)} ${k.readKernelString(regs.get('si'))}`)
        return 0
      },
    }
    const sig: Kprobe = {
      symbol_name: 'send_signal',
      pre_handler: (_p, regs) => {
        if (regs.get('di') === 9) events.push(`send_signal 9 ${kp.peek(regs.get('dx'), 4)}`)
        return 0
      },
    }
    expect(kp.register_kprobes([oom, sig])).toBe(0)
    k.spawn('/bin/memhog', ['memhog', 'family', '0'])
    expect(k.run(2_000_000_000).exit?.status).toBe(0)
    // The child (pid 2), the larger process, is chosen and killed; the parent is not.
    expect(events).toEqual(['oom_kill_process 2 Out of memory', 'send_signal 9 2'])
  })
})
