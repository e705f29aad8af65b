// kill(2) of a process group and of everyone (kill_something_info): kill(0) reaches every
// process of the caller's group, kill(-PGID) that group's, kill(-1) everyone but init and the
// caller, and a group nobody is in is ESRCH. busybox sh runs it natively (in a session of its
// own, so the signals stay inside it) and under the kernel; the outputs must be equal. kill(-1)
// is checked under the kernel only (natively it would reach the host's processes).

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'

const BUSYBOX = '/bin/busybox'
const available = process.platform === 'linux' && process.arch === 'x64' && existsSync(BUSYBOX)

const SCRIPT = `
trap 'echo parent TERM' TERM
trap 'echo parent USR1' USR1
/bin/busybox sh -c 'trap "echo child TERM" TERM; kill -TERM 0; echo child after'
echo parent after
kill -USR1 0; echo group=$?
kill -TERM -999999 2>/dev/null; echo nogroup=$?
kill -0 0; echo zero=$?
`

describe.skipIf(!available)('kill of a process group', () => {
  it('reaches every process of the group, as natively', () => {
    // detached: setsid() in the child, so its group holds only the script's processes (spawnSync
    // honours it, though its option type leaves it out).
    const inItsOwnSession = { detached: true, encoding: 'utf8' as const, env: {} }
    const native = spawnSync(BUSYBOX, ['sh', '-c', SCRIPT], inItsOwnSession)
    expect(native.stdout).toContain('child TERM')
    const r = runGuest(new Uint8Array(readFileSync(BUSYBOX)), [BUSYBOX, 'sh', '-c', SCRIPT], {
      path: BUSYBOX,
      maxInstructions: 500_000_000,
    })
    expect({ stdout: r.stdout, stderr: r.stderr, status: r.status }, r.detail).toEqual({
      stdout: native.stdout,
      stderr: native.stderr,
      status: native.status,
    })
  })

  it('kill(-1) reaches every process but init (the program, pid 1) and the caller', () => {
    // pid 1 is the shell: its background child sends kill(-1), which must reach the other child
    // (a sleep, killed by SIGTERM: 143) and neither the shell (its trap stays silent) nor itself.
    const script = `trap 'echo init TERM' TERM
/bin/busybox sleep 5 & s=$!
/bin/busybox sh -c 'trap "echo caller TERM" TERM; kill -TERM -1; echo kill=$?'
wait $s; echo sleep=$?
/bin/busybox sh -c 'kill -0 -1; echo alone=$?' 2>/dev/null`
    const r = runGuest(new Uint8Array(readFileSync(BUSYBOX)), [BUSYBOX, 'sh', '-c', script], {
      path: BUSYBOX,
      maxInstructions: 500_000_000,
    })
    expect({ stdout: r.stdout, status: r.status }, r.detail).toEqual({
      stdout: 'kill=0\nsleep=143\nalone=1\n',
      status: 0,
    })
  })
})
