// probekit run with jump-optimized kernel probes: a probe on a function the
// timer runs (irq_exit) in a program long enough for the kprobe-optimizer's
// delayed work: --kprobes-list shows [OPTIMIZED], --detours disassembles the
// patched bytes (a jmp to the buffer) beside the detour buffer (the
// template's vmcall, the copy of the replaced instruction, the jmp back);
// --sysctl debug.kprobes_optimization=0 keeps the probe an int3 probe with
// the same hits; bad --sysctl settings are one-line errors.

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const COMPUTE = fileURLToPath(new URL('../../kernel/fixtures/bin/compute-musl-O2', import.meta.url))

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const hits = (stderr: string) =>
  stderr.split('\n').filter((l) => / tick: \(irq_exit\+0x0\/0x[0-9a-f]+\)$/.test(l)).length

describe('probekit run: optimized kernel probes', () => {
  it('--kprobes-list and --detours show the jump and the buffer; the sysctl at 0 keeps the int3, with the same hits', () => {
    const on = run('-p', 'p:tick irq_exit', '--kprobes-list', '--detours', '--', COMPUTE)
    expect(on.code).toBe(0)
    expect(on.stdout).toContain('checksum: ')
    expect(on.stderr).toMatch(/^ffffffff[0-9a-f]{8} {2}k {2}irq_exit\+0x0 {4}\[OPTIMIZED\]$/m)
    expect(on.stderr).toMatch(/irq_exit\+0x0\/0x[0-9a-f]+: optimized: the text jumps to the detour buffer/)
    expect(on.stderr).toMatch(/^ffffffff[0-9a-f]{8} {2}e9 [0-9a-f ]{11} {2}jmp 0xffffffffa04[0-9a-f]{5}/m)
    expect(on.stderr).toMatch(/vmcall/)
    expect(on.stderr).toMatch(/popfq\n.*add qword ptr gs:\[0x30\], -1\n.*jmp 0xffffffff8[0-9a-f]{7}/)
    const off = run(
      '-p',
      'p:tick irq_exit',
      '--sysctl',
      'debug.kprobes_optimization=0',
      '--kprobes-list',
      '--',
      COMPUTE,
    )
    expect(off.code).toBe(0)
    expect(off.stdout).toBe(on.stdout)
    expect(off.stderr).toMatch(/^ffffffff[0-9a-f]{8} {2}k {2}irq_exit\+0x0 {4}$/m)
    expect(off.stderr).not.toContain('[OPTIMIZED]')
    // Deterministic machine: the same ticks, hit the same number of times either way.
    expect(hits(on.stderr)).toBeGreaterThan(10)
    expect(hits(off.stderr)).toBe(hits(on.stderr))
  })

  it('bad --sysctl settings: one line, exit 2', () => {
    const a = run('--sysctl', 'debug.kprobes_optimization', '--', COMPUTE)
    expect(a.code).toBe(2)
    expect(a.stderr).toMatch(/^probekit: --sysctl 'debug.kprobes_optimization': expected NAME=VALUE[^\n]*\n$/)
    const b = run('-p', 'p irq_exit', '--sysctl', 'kernel.nope=1', '--', COMPUTE)
    expect(b.code).toBe(2)
    expect(b.stderr).toMatch(
      /^probekit: --sysctl kernel.nope: no such setting \(known here: debug.kprobes-optimization, kernel.pid_max, kernel.threads-max\)\n$/,
    )
    const c = run('-p', 'p irq_exit', '--sysctl', 'debug.kprobes_optimization=2', '--', COMPUTE)
    expect(c.code).toBe(2)
    expect(c.stderr).toMatch(/^probekit: --sysctl debug.kprobes_optimization=2: invalid value[^\n]*\n$/)
    const d = run('--sysctl', 'debug.kprobes_optimization=0', '--', COMPUTE)
    expect(d.code).toBe(2)
    expect(d.stderr).toMatch(
      /no such setting \(known here: kernel.pid_max, kernel.threads-max\); debug.kprobes_optimization is there when the run has kernel probes/,
    )
  })
})
