// probekit run on a real-world binary: Debian's bash-static runs a script
// that starts external programs (found through PATH in a --mount'ed
// directory) and other bash processes, with the same stdout, stderr and
// exit status as natively. Skipped where /bin/bash-static is absent
// (apt-get install bash-static). The kernel's own tests run more scripts.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const BASH = '/bin/bash-static'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const kernelDir = new URL('../../kernel/', import.meta.url)
const fixtureBin = fileURLToPath(new URL('fixtures/bin', kernelDir))
const scripts = fileURLToPath(new URL('test/bash', kernelDir))
const script = join(scripts, 'external.sh')
const available = process.platform === 'linux' && process.arch === 'x64' && existsSync(BASH)

describe.skipIf(!available)('probekit run bash-static', () => {
  it('runs a script with external commands exactly as natively', { timeout: 60_000 }, () => {
    const work = mkdtempSync(join(tmpdir(), 'probekit-bash-'))
    const opts = {
      cwd: '/',
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    }
    try {
      const native = spawnSync(BASH, [script], {
        ...opts,
        env: { PATH: fixtureBin, WORK: work, LC_ALL: 'C' },
      })
      const emulated = spawnSync(
        process.execPath,
        [bin, 'run', '--mount', fixtureBin, '--mount', scripts, '--', BASH, script],
        { ...opts, env: { PATH: fixtureBin, WORK: '/tmp', LC_ALL: 'C' } },
      )
      expect(native.stdout).toContain('hello, world')
      expect({ stdout: emulated.stdout, status: emulated.status }).toEqual({
        stdout: native.stdout,
        status: native.status,
      })
      // The guest's stderr, then only probekit's own reports (rseq: glibc's optional registration).
      expect(emulated.stderr.startsWith(native.stderr)).toBe(true)
      for (const line of emulated.stderr.slice(native.stderr.length).split('\n').filter(Boolean))
        expect(line).toMatch(/^probekit: unimplemented syscall 334 \(rseq\)/)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  })
})
