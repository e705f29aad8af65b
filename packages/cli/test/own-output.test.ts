// probekit's own output (help, decode's table, messages) to a reader that has
// gone or a full disk: the end a program killed by SIGPIPE has (status 141,
// quiet), or one line and exit 1 - never a Node stack trace or a changed code.

import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runWithClosed } from './closed-pipe.js'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
/** A table of more than a pipe buffer (84 KB > 64 KiB): EPIPE even if the pipe closed late. */
const nops = Array.from({ length: 4_000 }, () => '90')

describe('probekit: its own output', () => {
  it('decode to a reader that has gone: status 141, nothing on stderr', { timeout: 60_000 }, async () => {
    expect(await runWithClosed('stdout', [process.execPath, bin, 'decode', ...nops])).toEqual({
      status: 141,
      other: '',
    })
  })

  it('a user error whose stderr has gone still exits 2', { timeout: 60_000 }, async () => {
    const r = await runWithClosed('stderr', [process.execPath, bin, 'run', '--cpus', '17', bin])
    expect(r).toEqual({ status: 2, other: '' })
  })

  it.runIf(existsSync('/dev/full'))('--help to a full disk: one line, exit 1', { timeout: 60_000 }, () => {
    const full = openSync('/dev/full', 'w')
    try {
      const r = spawnSync(process.execPath, [bin, '--help'], {
        stdio: ['ignore', full, 'pipe'],
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
        timeout: 60_000,
      })
      expect({ status: r.status, stderr: r.stderr }).toEqual({
        status: 1,
        stderr: 'probekit: stdout: no space left on device (ENOSPC)\n',
      })
    } finally {
      closeSync(full)
    }
  })
})
