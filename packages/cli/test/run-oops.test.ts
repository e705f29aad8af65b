// probekit run when the guest kernel's own code oopses (issue 17): the same end as a probe handler's
// oops - the oops report on stderr (the kernel log's lines), one line saying the kernel oopsed and
// that it is a bug, exit status 70 (EXIT_OOPS). The kernel is broken on purpose after its boot: the
// first instruction of do_syscall_64 loads from an unmapped kernel address.

import { Kernel } from '@probekit/kernel'
import pc from 'picocolors'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { EXIT_OOPS } from '../src/cli-error.js'
import { runCli } from '../src/program.js'

const hello = new URL('../../kernel/fixtures/bin/hello', import.meta.url).pathname

afterEach(() => {
  vi.restoreAllMocks()
})

async function run(args: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await runCli(['run', ...args], {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    colors: pc.createColors(false),
  })
  return { code, stdout, stderr }
}

describe('probekit run: a guest-kernel oops', () => {
  it('the oops report, one line saying so, exit 70, as for a handler oops', async () => {
    const boot = Kernel.prototype.boot
    vi.spyOn(Kernel.prototype, 'boot').mockImplementation(function (this: Kernel) {
      boot.call(this)
      // mov rax, [0xffffffffc0000000]
      this.services.textPoke(this.symbol('do_syscall_64'), [0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0xc0])
    })
    const r = await run([hello])
    expect(r.code).toBe(EXIT_OOPS)
    const lines = r.stderr.split('\n')
    expect(lines[0]).toBe('BUG: unable to handle page fault for address: ffffffffc0000000')
    expect(lines[1]).toBe('Oops: 0000 [#1] CPU: 0')
    expect(lines).toContain('CPU: 0 PID: 1 Comm: hello')
    expect(lines).toContain('Kernel panic - not syncing: Fatal exception')
    expect(lines.at(-2)).toMatch(
      /^probekit: the kernel oopsed: BUG: unable to handle page fault for address: ffffffffc0000000; IP: do_syscall_64\+0x0\/0x[0-9a-f]+; this is a bug in probekit$/,
    )
    expect(lines.at(-1)).toBe('')
  })

  it('with --dmesg the report is in the log printed once, not again', async () => {
    const boot = Kernel.prototype.boot
    vi.spyOn(Kernel.prototype, 'boot').mockImplementation(function (this: Kernel) {
      boot.call(this)
      this.services.textPoke(this.symbol('do_syscall_64'), [0x0f, 0x0b]) // ud2
    })
    const r = await run(['--dmesg', hello])
    expect(r.code).toBe(EXIT_OOPS)
    expect(r.stderr.match(/invalid opcode: 0000 \[#1\] CPU: 0/g)).toHaveLength(1)
    expect(r.stderr).toMatch(/\] Kernel panic - not syncing: Fatal exception\n/)
    expect(r.stderr).toMatch(
      /\nprobekit: the kernel oopsed: invalid opcode: 0000 \[#1\]; IP: do_syscall_64\+0x0\//,
    )
  })
})
