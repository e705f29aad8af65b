// Ctrl-C under `probekit run`, as bin/probekit.js receives it (a terminal sends SIGINT to the whole
// foreground group; kill -INT reaches the wrapper alone): the first is the console's ^C, SIGINT to
// the program's process group, which may catch it or die of it (exit 130, quietly, as in a shell);
// a second stops a program that ignores it. Either way what was printed stays, and the end-of-run
// reports (--stats) are still written.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const BUSYBOX = '/bin/busybox'

/** Start probekit run, send `presses` Ctrl-Cs once the program said "ready", one per "ready" seen. */
function interrupted(args: string[], presses: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [bin, 'run', ...args], { env: { ...process.env, NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    let sent = 0
    child.stdout.on('data', (d) => {
      stdout += d
      const ready = stdout.split('ready').length - 1
      while (sent < Math.min(ready, presses)) {
        sent++
        child.kill('SIGINT')
      }
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('exit', (code) => done({ code, stdout, stderr }))
  })
}

describe.skipIf(!existsSync(BUSYBOX))('probekit run: Ctrl-C', () => {
  it('the program dies of SIGINT: exit 130, no message, --stats still printed', {
    timeout: 120_000,
  }, async () => {
    const r = await interrupted(
      ['-p', 'p:myopen do_sys_open', '--stats', BUSYBOX, 'sh', '-c', 'echo ready; while :; do :; done'],
      1,
    )
    expect(r.stdout).toBe('ready\n')
    expect(r.stderr).toMatch(/^ {2}myopen +\d+ +0\n$/m)
    expect(r.stderr).not.toMatch(/killed by|internal error/)
    expect(r.code).toBe(130)
  })

  it('a program that catches SIGINT handles it and ends as it chooses', { timeout: 120_000 }, async () => {
    const r = await interrupted(
      [BUSYBOX, 'sh', '-c', 'trap "echo caught INT; exit 7" INT; echo ready; while :; do :; done'],
      1,
    )
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 7,
      stdout: 'ready\ncaught INT\n',
      stderr: '',
    })
  })

  it('a program that ignores SIGINT is stopped by a second Ctrl-C: one line, exit 130', {
    timeout: 120_000,
  }, async () => {
    // The trap echoes "ready" again once the first SIGINT arrived, and only then is the second sent.
    const r = await interrupted(
      [BUSYBOX, 'sh', '-c', 'trap "echo ready again" INT; echo ready; while :; do :; done'],
      2,
    )
    expect(r.stdout).toBe('ready\nready again\n')
    expect(r.stderr).toBe(`probekit: ${BUSYBOX}: interrupted (Ctrl-C twice): the run was stopped\n`)
    expect(r.code).toBe(130)
  })
})
