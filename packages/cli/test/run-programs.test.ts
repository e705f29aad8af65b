// probekit run end to end: a static musl program under the emulated kernel,
// through the real command, with the host's stdio and the program's status.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixtures = new URL('../../kernel/fixtures/', import.meta.url)

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('probekit run', () => {
  it('runs hello and exits with its status', () => {
    const r = run(fileURLToPath(new URL('bin/hello', fixtures)))
    expect(r).toEqual({ code: 0, stdout: 'hello, world\n', stderr: '' })
  })

  it("--memory bounds the guest: a hog is killed by the OOM killer, with the kernel's report, and exits 137", () => {
    const memhog = fileURLToPath(new URL('bin/memhog', fixtures))
    const r = run('--memory', '32M', memhog, 'touch', '0')
    expect(r.code).toBe(137)
    expect(r.stdout).toMatch(/touched 8 MiB\n/)
    expect(r.stderr).toMatch(
      /^probekit: Out of memory: Killed process 1 \(memhog\) total-vm:\d+kB, anon-rss:\d+kB, file-rss:\d+kB, shmem-rss:0kB, UID:0 pgtables:\d+kB oom_score_adj:0\nprobekit: .*memhog was killed by SIGKILL\n$/,
    )
    // More than the machine has in one private writable mapping: ENOMEM, as the default overcommit policy says.
    expect(run('--memory', '32M', memhog, 'big', '64').stdout).toBe('mmap 64 MiB: Out of memory\n')
  })

  it('passes arguments through and exits with the program status (args exits with argc)', () => {
    const r = run('--cpus', '2', '--', fileURLToPath(new URL('bin/args', fixtures)), 'one', 'two words')
    expect(r.code).toBe(3)
    expect(r.stdout).toContain('argv[1]: "one" (len 3)')
    expect(r.stdout).toContain('argv[2]: "two words" (len 9)')
  })

  it('runs a process tree (fork, vfork, execve of itself, kill, wait4) exactly as natively', () => {
    const prog = fileURLToPath(new URL('bin/proctree', fixtures))
    const r = run(prog)
    expect(r.code).toBe(Number(readFileSync(new URL('expected/proctree.status', fixtures), 'utf8').trim()))
    expect(r.stdout).toBe(readFileSync(new URL('expected/proctree.stdout', fixtures), 'utf8'))
  })
})

describe('probekit demo', () => {
  it("boots the kernel, shows do_fork, runs the seeds' kprobe, jprobe, kretprobe and uprobe examples on the bundled programs, and an optimized kprobe", () => {
    const r = spawnSync(process.execPath, [bin, 'demo'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 120_000,
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/Linux version/)
    expect(r.stdout).toMatch(/T do_fork \(do_fork\+0x0\/0x[0-9a-f]+\)/)
    expect(r.stdout).toContain(readFileSync(new URL('expected/myprog.stdout', fixtures), 'utf8').trimEnd())
    expect(r.stdout).toMatch(
      /pre_handler: p->addr=0xffffffff81[0-9a-f]+, rip=ffffffff81[0-9a-f]+, rflags=0x[0-9a-f]+\nCall Trace:\n \[<[0-9a-f]{16}>\] do_fork\+0x1/,
    )
    expect(r.stdout).toMatch(/jprobe: clone_flags=0x11, stack_size=0x0, regs=0x/)
    expect(r.stdout).toContain('sys_open returns -2')
    expect(r.stdout).toContain('Missed probing 0 instances of sys_open')
    expect(r.stdout).toContain(readFileSync(new URL('expected/proctree.stdout', fixtures), 'utf8').trimEnd())
    // The uprobes seed's example on myprog's myfunc: a hit per call, the count at unload.
    expect(r.stdout).toMatch(
      /Registering uprobe on pid 1, vaddr (0x[0-9a-f]+)\n(Hit #\d on probepoint at \1\n){5}Unregistering uprobe on pid 1, vaddr \1\nProbepoint was hit 5 times\n/,
    )
    // Jump optimization: an int3 probe first, [OPTIMIZED] after the optimizer, the jmp and its buffer.
    expect(r.stdout).toMatch(
      / {2}k {2}do_sys_open\+0x0\s*\n.*\n[0-9a-f]{16} {2}k {2}do_sys_open\+0x0 {4}\[OPTIMIZED\]\n/,
    )
    expect(r.stdout).toMatch(/ffffffff[0-9a-f]{8} {2}e9 [0-9a-f ]{11} {2}jmp 0xffffffffa04[0-9a-f]{5}/)
    expect(r.stdout).toMatch(/vmcall/)
    expect(r.stdout).toMatch(/fileio exit status 0; do_sys_open hit [1-9]\d* times through the jump/)
  })
})

describe('probekit run -p (kernel probes in kprobe_events syntax)', () => {
  it('prints an ftrace line per hit: entry probes with fetch args, return probes with $retval', () => {
    const trace = join(mkdtempSync(join(tmpdir(), 'probekit-trace-')), 'trace.txt')
    const r = run(
      '-p',
      'p:myprobe do_sys_open dfd=%di:s32 filename=+0(%si):ustring',
      '-p',
      'r:myret do_sys_open ret=$retval:s64',
      '-p',
      'p do_fork clone_flags=%di',
      '--trace',
      trace,
      '--',
      fileURLToPath(new URL('bin/proctree', fixtures)),
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(readFileSync(new URL('expected/proctree.stdout', fixtures), 'utf8'))
    const lines = readFileSync(trace, 'utf8').trim().split('\n')
    const forks = lines.filter((l) => l.includes('p_do_fork_0'))
    // proctree forks 7 times and vforks once (CLONE_VM|CLONE_VFORK|SIGCHLD), as strace -f counts natively.
    expect(forks.length).toBe(8)
    expect(forks[0]).toMatch(
      /^ *proctree-1 +\[000\] d\.\.\.\. +\d+\.\d{6}: p_do_fork_0: \(do_fork\+0x0\/0x[0-9a-f]+\) clone_flags=0x11$/,
    )
    expect(forks.filter((l) => l.endsWith('clone_flags=0x4111')).length).toBe(1)
  })

  it('rejects a bad definition in one line, before running anything', () => {
    const r = run('-p', 'p do_fork x=%xyz', '--', fileURLToPath(new URL('bin/hello', fixtures)))
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: "probekit: bad probe definition 'p do_fork x=%xyz': Invalid register name (column 13)\n",
    })
  })

  it('rejects an unknown symbol', () => {
    const r = run('-p', 'p nosuchfn', '--', fileURLToPath(new URL('bin/hello', fixtures)))
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      "probekit: bad probe definition 'p nosuchfn': Invalid probed address or symbol (column 3): no kernel symbol 'nosuchfn'\n",
    )
  })
})
