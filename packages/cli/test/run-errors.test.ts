// probekit run on files it cannot run: one line on stderr, exit 2, no stack
// trace, and no guest started.

import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'probekit-run-'))
const hello = fileURLToPath(new URL('../../kernel/fixtures/bin/hello', import.meta.url))

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 30_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

function oneLineError(r: ReturnType<typeof run>, message: RegExp) {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(/^probekit: [^\n]*\n$/)
  expect(r.stderr).toMatch(message)
}

describe('probekit run: files it cannot run', () => {
  it('a missing file', () => oneLineError(run(join(dir, 'nope')), /no such file/))

  it('a text file that is not a #! script', () => {
    const f = join(dir, 'notes.txt')
    writeFileSync(f, 'echo hello\n'.repeat(8), { mode: 0o755 })
    oneLineError(run(f), /not an ELF file/)
  })

  it('a 32-bit ELF', () => {
    const f = join(dir, 'elf32')
    const b = new Uint8Array(64)
    b.set([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1])
    writeFileSync(f, b, { mode: 0o755 })
    oneLineError(run(f), /32-bit/)
  })

  it.runIf(existsSync('/usr/bin/true'))(
    'a dynamically linked executable under --isolated: its interpreter is missing, and the message says how to give it one',
    () => {
      oneLineError(
        run('--isolated', '/usr/bin/true'),
        /\/usr\/bin\/true: cannot run it: interpreter \/lib64\/ld-linux-x86-64.so.2: No such file or directory \(with --isolated/,
      )
    },
  )

  it('a directory', () => oneLineError(run(dir), /is a directory/))

  // execve's EACCES, checked before anything is read: /dev/zero would otherwise be read forever.
  it('a device, such as /dev/zero: not a regular file (EACCES), refused before it is read', () =>
    oneLineError(
      run('/dev/zero'),
      /^probekit: \/dev\/zero: permission denied: not a regular file \(execve says EACCES\)\n$/,
    ))

  it('a file without execute permission (EACCES), as the shell would refuse it', () => {
    const f = join(dir, 'not-executable')
    copyFileSync(hello, f)
    chmodSync(f, 0o644)
    oneLineError(run(f), /not-executable: permission denied: it has no execute permission/)
  })

  it('a bad --cpus value', () =>
    oneLineError(run('--cpus', 'lots', '/usr/bin/true'), /--cpus must be a whole number/))
})

describe('probekit run: arguments it refuses, each with one line and exit 2', () => {
  it('--cpus beyond the guest kernel NR_CPUS (16)', () => {
    for (const n of ['17', '64', '0'])
      oneLineError(run('--cpus', n, hello), /--cpus must be a whole number from 1 to 16/)
  })

  it('--max-instructions that is not a whole number', () => {
    for (const n of ['1.5', '0x100', '1e400', '-3'])
      oneLineError(run('--max-instructions', n, hello), /--max-instructions must be a whole number/)
  })

  it('--memory that is not a size from 16M to 2G in whole pages', () => {
    for (const n of ['lots', '8M', '3G', '1.5G', '-1', '1000K', '4097K'])
      oneLineError(run('--memory', n, hello), /--memory must be a size from 16M to 2G/)
  })

  it('--memory sizes as qemu and docker take them: 64M, 1G, 512 (MiB), 65536K', () => {
    for (const n of ['64M', '1G', '512', '65536K', '64MiB']) {
      const r = run('--memory', n, hello)
      expect({ n, code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        n,
        code: 0,
        stdout: 'hello, world\n',
        stderr: '',
      })
    }
  })

  it('--mount of a directory that does not exist', () =>
    oneLineError(run('--mount', join(dir, 'nonexistent'), hello), /--mount .*nonexistent: no such directory/))

  it('--trace with no probe to trace', () =>
    oneLineError(run('--trace', join(dir, 'trace.txt'), hello), /there are no probes/))

  it('two probes with one event name (tracefs: EEXIST)', () => {
    const r = run('-p', 'p:foo do_fork', '-p', 'p:foo do_exit', hello)
    oneLineError(r, /./)
    expect(r.stderr).toBe("probekit: -p 'p:foo do_exit': event foo already exists (EEXIST)\n")
    oneLineError(
      run('-p', 'p:g/foo do_fork', '-p', 'p:g/foo do_exit', hello),
      /event g\/foo already exists \(EEXIST\)/,
    )
  })

  it('one event name in two groups is two events, as in tracefs; 16 CPUs is the most', () => {
    const r = run('--cpus', '16', '-p', 'p:a/foo do_fork', '-p', 'p:b/foo do_group_exit', hello)
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: 'hello, world\n' })
    expect(r.stderr).toMatch(
      /^ +hello-1 +\[\d{3}\] d\.\.\.\. +[\d.]+: foo: \(do_group_exit\+0x0\/0x[0-9a-f]+\)\n$/,
    )
  })

  it('--mount of a file', () =>
    oneLineError(run('--mount', hello, hello), /--mount .*hello: not a directory/))

  it('--trace to a file that cannot be created names why', () =>
    oneLineError(
      run('-p', 'p:foo do_fork', '--trace', join(dir, 'no-dir', 'trace.txt'), hello),
      /--trace .*trace\.txt: cannot write it \(ENOENT\)/,
    ))

  it('a probe that cannot be placed leaves no trace file behind', () => {
    const trace = join(dir, 'never.txt')
    oneLineError(
      run('-p', 'p:foo no_such_function', '--trace', trace, hello),
      /Invalid probed address or symbol \(column 7\): no kernel symbol 'no_such_function'/,
    )
    expect(existsSync(trace)).toBe(false)
  })

  it('a --sysctl value the kernel refuses leaves no trace file behind', () => {
    const trace = join(dir, 'never-sysctl.txt')
    oneLineError(
      run('-p', 'p:foo do_fork', '--sysctl', 'debug.kprobes_optimization=2', '--trace', trace, hello),
      /--sysctl debug\.kprobes_optimization=2: invalid value/,
    )
    expect(existsSync(trace)).toBe(false)
  })
})

describe.skipIf(!existsSync('/bin/busybox'))('probekit run: a runaway guest', () => {
  it('stops at --max-instructions with one line and exit 124 (as timeout(1)), its output so far written', () => {
    const r = run(
      '--max-instructions',
      '2000000',
      '/bin/busybox',
      'sh',
      '-c',
      'echo before; while :; do :; done',
    )
    expect.soft(r.stdout).toBe('before\n')
    expect(r.stderr).toBe(
      'probekit: /bin/busybox ran past the instruction budget (2000000); raise --max-instructions if it is not a runaway\n',
    )
    expect(r.code).toBe(124)
  })
})
