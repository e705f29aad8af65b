// probekit run end to end: a static musl program under the emulated kernel,
// through the real command, with the host's stdio and the program's status.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
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
  it('boots the kernel, shows do_fork and runs the bundled programs', () => {
    const r = spawnSync(process.execPath, [bin, 'demo'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 120_000,
    })
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/Linux version/)
    expect(r.stdout).toMatch(/T do_fork \(do_fork\+0x0\/0x[0-9a-f]+\)/)
    expect(r.stdout).toContain(readFileSync(new URL('expected/myprog.stdout', fixtures), 'utf8').trimEnd())
    expect(r.stdout).toContain(readFileSync(new URL('expected/proctree.stdout', fixtures), 'utf8').trimEnd())
  })
})
