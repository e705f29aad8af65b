// The siginfo a SA_SIGINFO SIGCHLD handler gets (do_notify_parent): the exit
// code or the signal in si_status, by si_code. The fixture prints what its
// handler saw for each kind of child end; emulated must equal native.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'

const bin = new URL('../fixtures/bin/sigchld', import.meta.url)
const fixture = () => new Uint8Array(readFileSync(bin))
const native = process.platform === 'linux' && process.arch === 'x64'

describe('SIGCHLD siginfo', () => {
  it('si_code and si_status as Linux gives them: exit code, killing signal, stop signal', () => {
    const r = runGuest(fixture(), ['sigchld'])
    expect(r.status, r.detail).toBe(0)
    expect(r.stdout).toBe(
      [
        'exit(7)                si_code=CLD_EXITED si_status=7 si_pid is the child: yes si_uid=0',
        'kill SIGTERM           si_code=CLD_KILLED si_status=15 si_pid is the child: yes si_uid=0',
        'kill SIGSTOP           si_code=CLD_STOPPED si_status=19 si_pid is the child: yes si_uid=0',
        'kill SIGKILL (stopped) si_code=CLD_KILLED si_status=9 si_pid is the child: yes si_uid=0',
        'exit(255)              si_code=CLD_EXITED si_status=255 si_pid is the child: yes si_uid=0',
        '',
      ].join('\n'),
    )
  })

  it.skipIf(!native)('the same lines natively', () => {
    const n = spawnSync(bin.pathname, [], { encoding: 'utf8' })
    expect(runGuest(fixture(), ['sigchld']).stdout).toBe(n.stdout)
  })
})
