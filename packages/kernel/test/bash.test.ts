// Debian's bash-static (a real-world glibc binary we did not build) runs
// shell scripts under the kernel exactly as it runs them natively: loops,
// arithmetic, functions, pipelines, command substitution, here-documents
// and external commands (the fixture programs, and bash-static itself,
// visible at the same paths through read-only host mounts). Each script in
// test/bash/ runs natively and emulated; stdout, stderr and the exit status
// must be identical. Needs /bin/bash-static (apt-get install bash-static)
// on an x86-64 Linux host; otherwise the tests are reported as skipped.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { nodeHostDirectory } from './support/host-directory.js'
import { runGuest } from './support/run.js'

const BASH = '/bin/bash-static'
const scripts = fileURLToPath(new URL('bash/', import.meta.url)).replace(/\/$/, '')
const fixtureBin = fileURLToPath(new URL('../fixtures/bin', import.meta.url))
const available = process.platform === 'linux' && process.arch === 'x64' && existsSync(BASH)

/** The environment both runs get: external commands are found through PATH in the fixtures. */
const env = (work: string) => ({ PATH: fixtureBin, WORK: work, LC_ALL: 'C' })

function native(script: string) {
  const work = mkdtempSync(join(tmpdir(), 'probekit-bash-'))
  try {
    const r = spawnSync(BASH, [script], {
      cwd: '/',
      env: env(work),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return { stdout: r.stdout, stderr: r.stderr, status: r.status }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

function emulated(script: string) {
  const r = runGuest(new Uint8Array(readFileSync(BASH)), [BASH, script], {
    path: BASH,
    env: Object.entries(env('/tmp')).map(([k, v]) => `${k}=${v}`),
    memorySize: 256 * 1024 * 1024,
    maxInstructions: 3_000_000_000,
    setup: (k) => {
      k.vfs.mountHost(fixtureBin, nodeHostDirectory(fixtureBin))
      k.vfs.mountHost(scripts, nodeHostDirectory(scripts))
    },
  })
  return { run: r, result: { stdout: r.stdout, stderr: r.stderr, status: r.status } }
}

describe.skipIf(!available)(`${BASH} runs scripts under the kernel as it does natively`, () => {
  for (const name of readdirSync(scripts).filter((f) => f.endsWith('.sh'))) {
    it(name, { timeout: 60_000 }, () => {
      const script = join(scripts, name)
      const want = native(script)
      // The native run really exercised the script (guards against an empty comparison).
      expect(want.stdout.length).toBeGreaterThan(0)
      const { run, result } = emulated(script)
      expect(result, run.detail).toEqual(want)
      expect([...run.kernel.unimplementedInstructions.keys()]).toEqual([])
      // No syscall answered with ENOSYS (rseq included: glibc registers it for every thread).
      expect([...run.kernel.unimplemented.keys()]).toEqual([])
    })
  }
})
