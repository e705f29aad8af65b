// probekit run's output to the host behaves as a program's own would: a
// reader that goes away (`| head`) kills the guest writer with SIGPIPE, a
// slow reader is waited for (no data lost), a full disk gives the guest
// ENOSPC - each compared with the native run of the same command, never an
// "internal error". Skipped where Debian's busybox-static is absent.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const BUSYBOX = '/bin/busybox'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const available =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  existsSync('/bin/bash') &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

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
})
