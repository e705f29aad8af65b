// End to end through bin/probekit.js, as a user runs it: the shim, tsx, the
// source condition, exit codes and what lands on stdout/stderr.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

function probekit(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  delete env.FORCE_COLOR
  // From an unrelated directory, to show the command does not depend on the cwd.
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: tmpdir(),
    env,
    encoding: 'utf8',
    timeout: 30_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A user error: exit 2 and exactly one line on stderr, with no stack trace. */
function expectUsageError(r: ReturnType<typeof probekit>, message: RegExp) {
  expect(r.code).toBe(2)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(/^probekit: .*\n$/)
  expect(r.stderr).toMatch(message)
  expect(r.stderr).not.toMatch(/\n\s+at /)
}

describe('probekit (spawned)', () => {
  it('--help lists the commands and exits 0', () => {
    const r = probekit('--help')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Usage: probekit/)
    expect(r.stdout).toContain('decode')
    expect(r.stderr).toBe('')
  })

  it('--version prints the package version', () => {
    const r = probekit('--version')
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(version)
  })

  it('rejects bad hex', () => {
    expectUsageError(probekit('decode', '55', 'zz'), /bad hex bytes 'zz'/)
  })

  it('rejects an odd number of hex digits', () => {
    expectUsageError(probekit('decode', '4889e'), /bad hex bytes '4889e'/)
  })

  it('rejects an unknown option, with a suggestion', () => {
    expectUsageError(probekit('decode', '--adress', '0', 'cc'), /unknown option '--adress'.*--address/)
  })

  it('rejects an unknown command', () => {
    expectUsageError(probekit('frobnicate'), /unknown command 'frobnicate'/)
  })

  it('rejects a missing byte string', () => {
    expectUsageError(probekit('decode'), /missing required argument 'hex'/)
  })

  it('rejects a non-canonical address', () => {
    expectUsageError(probekit('decode', '--address', '0x0000800000000000', 'cc'), /not canonical/)
  })

  it('decodes int3 at a kernel address', () => {
    const r = probekit('decode', '--address', '0xffffffff81000000', 'cc')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/ffffffff81000000\s+cc\s+int3\s+breakpoint/)
  })

  it('prints what decoded, then says where the bytes stop making sense', () => {
    const r = probekit('decode', '--address', '0x401000', '55', 'e800')
    expect(r.code).toBe(2)
    expect(r.stdout).toMatch(/00401000\s+55\s+push rbp/)
    expect(r.stderr).toBe('probekit: cannot decode the bytes at 0x401001 (offset 1): truncated instruction\n')
  })
})
