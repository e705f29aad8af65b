// probekit run's output to the host behaves as a program's own would: a
// reader that goes away (`| head`) kills the guest writer with SIGPIPE, a
// slow reader is waited for (no data lost), a full disk gives the guest
// ENOSPC - each compared with the native run of the same command, never an
// "internal error". Trace lines are probekit's own output: when they cannot
// be written the run stops with one line and exit 1. Skipped where Debian's
// busybox-static is absent.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runWithClosed } from './closed-pipe.js'

const BUSYBOX = '/bin/busybox'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const available =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  existsSync('/bin/bash') &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
if (!available) console.warn(`run-host-io: skipped, needs Linux x86-64, /bin/bash and a static ${BUSYBOX}`)
const emulator = [process.execPath, bin, 'run', '--mount', '/bin']
const hello = fileURLToPath(new URL('../../kernel/fixtures/bin/hello', import.meta.url))

/** Run a bash command line with PROG standing for the program, natively and under probekit run. */
function both(line: string) {
  const run = (prog: string) =>
    spawnSync('/bin/bash', ['-c', line.replaceAll('PROG', prog)], { encoding: 'utf8', timeout: 120_000 })
  const native = run(BUSYBOX)
  const emulated = run(`${process.execPath} ${bin} run --mount /bin -- ${BUSYBOX}`)
  return { native, emulated }
}

describe.skipIf(!available)('probekit run: host output as a program sees it', () => {
  it('a reader that goes away: the writer dies of SIGPIPE quietly (status 141), as natively', {
    timeout: 120_000,
  }, () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's ${PIPESTATUS[0]}, not a template
    const { native, emulated } = both('PROG seq 1 100000 | head -2; echo "status ${PIPESTATUS[0]}"')
    expect(native.stdout).toBe('1\n2\nstatus 141\n')
    expect({ stdout: emulated.stdout, stderr: emulated.stderr }).toEqual({
      stdout: native.stdout,
      stderr: '',
    })
  })

  it('a slow reader is waited for: every byte arrives', { timeout: 120_000 }, () => {
    const { native, emulated } = both('PROG seq 1 100000 | (sleep 0.5; wc -c)')
    expect(Number(native.stdout)).toBeGreaterThan(65536)
    expect({ stdout: emulated.stdout, stderr: emulated.stderr }).toEqual({
      stdout: native.stdout,
      stderr: '',
    })
  })

  it('a full disk: the guest write gets ENOSPC and reports it itself', { timeout: 120_000 }, () => {
    const { native, emulated } = both('PROG echo hi > /dev/full; echo "status $?"')
    expect(native.stderr).toContain('No space left on device')
    expect({ stdout: emulated.stdout, stderr: emulated.stderr }).toEqual({
      stdout: native.stdout,
      stderr: native.stderr,
    })
  })

  it('a stderr whose reader has gone: the guest dies of SIGPIPE, as natively', {
    timeout: 120_000,
  }, async () => {
    const guest = [BUSYBOX, 'sh', '-c', 'read x; echo oops >&2; echo after']
    const native = await runWithClosed('stderr', guest)
    const emulated = await runWithClosed('stderr', [...emulator, '--', ...guest])
    expect(native).toEqual({ status: 141, other: '' })
    expect(emulated).toEqual(native)
  })

  it('a slow reader of stderr is waited for too', { timeout: 120_000 }, () => {
    const { native, emulated } = both(
      `PROG sh -c '${BUSYBOX} seq 1 100000 >&2' 2>&1 >/dev/null | (sleep 0.5; wc -c)`,
    )
    expect(Number(native.stdout)).toBeGreaterThan(65536)
    expect({ stdout: emulated.stdout, stderr: emulated.stderr }).toEqual({
      stdout: native.stdout,
      stderr: '',
    })
  })

  it('a full stderr: the guest write gets ENOSPC, as natively', { timeout: 120_000 }, () => {
    const { native, emulated } = both(`PROG sh -c 'echo x >&2; echo "status $?"' 2>/dev/full; echo "exit $?"`)
    expect(native.stdout).toBe('status 1\nexit 0\n')
    expect(emulated.stdout).toBe(native.stdout)
  })

  it("probekit's own message on a gone stderr does not change the exit status", {
    timeout: 120_000,
  }, async () => {
    // probekit says "killed by SIGKILL" on stderr; with nobody to read it the status is still 137.
    const guest = [BUSYBOX, 'sh', '-c', 'read x; kill -9 $$']
    const native = await runWithClosed('stderr', guest)
    expect(native.status).toBe(137)
    expect(await runWithClosed('stderr', [...emulator, '--', ...guest])).toEqual(native)
  })

  it('trace lines on a stderr whose reader has gone stop the run: exit 1, the output cut short', {
    timeout: 120_000,
  }, async () => {
    const seq = [BUSYBOX, 'seq', '1', '100000']
    const full = spawnSync(seq[0], seq.slice(1), { encoding: 'utf8' }).stdout
    const r = await runWithClosed('stderr', [
      ...emulator,
      '-p',
      'p:w vfs_write',
      '--',
      BUSYBOX,
      'sh',
      '-c',
      `read x; exec ${seq.join(' ')}`,
    ])
    // Before, the lines were dropped and the program ran to the end (exit 0, every byte).
    expect(r.status).toBe(1)
    expect(r.other.length).toBeLessThan(full.length)
    expect(full.startsWith(r.other)).toBe(true)
  })
})

describe.skipIf(!existsSync('/dev/full'))('probekit run: trace output that cannot be written', () => {
  it('--trace to a full disk: one line, exit 1, the run stopped', { timeout: 60_000 }, () => {
    const r = spawnSync(emulator[0], [bin, 'run', '-p', 'p:x do_group_exit', '--trace', '/dev/full', hello], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 60_000,
    })
    expect({ status: r.status, stderr: r.stderr }).toEqual({
      status: 1,
      stderr:
        'probekit: --trace /dev/full: no space left on device (ENOSPC); the run was stopped (1 trace event not written)\n',
    })
    expect(r.stdout).toBe('hello, world\n')
  })
})
