// Debian's bash-static (a real-world glibc binary we did not build) runs
// shell scripts under the kernel exactly as it runs them natively: loops,
// arithmetic, functions, pipelines, command substitution, here-documents
// and external commands (the fixture programs, and bash-static itself,
// visible at the same paths through read-only host mounts). Each script in
// test/bash/ runs natively and emulated; stdout, stderr and the exit status
// must be identical, except for what is a race natively (RACY below). The
// emulated run is deterministic: it runs twice and must give the same
// output and the same guest instruction count. Needs /bin/bash-static (apt-get install bash-static)
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

/**
 * Lines a script may or may not print natively, by the host's scheduling.
 * substitution.sh: `args x y z | { read -r l; ... }` - args writes its stdout
 * in two writev calls and then says "args: exiting with 4" on stderr, unless
 * the reader (which takes one line) has exited before the second write: then
 * args dies of SIGPIPE and says nothing. Natively either happens (mostly the
 * line; without it more often on a loaded host). The emulated run is
 * deterministic (checked below), so it takes one of the two every time, and
 * the native run is compared with these lines left out of both.
 */
const RACY: Record<string, readonly string[]> = {
  'substitution.sh': ['args: exiting with 4\n'],
}

const withoutRacy = (name: string, r: { stdout: string; stderr: string; status: number | null }) => {
  let { stderr } = r
  for (const line of RACY[name] ?? []) stderr = stderr.split(line).join('')
  return { ...r, stderr }
}

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
      // Deterministic: a second run in a fresh kernel prints the same and counts the same instructions.
      const again = emulated(script)
      expect(again.result).toEqual(result)
      expect(again.run.kernel.machine.totalInstructions()).toBe(run.kernel.machine.totalInstructions())
      expect(withoutRacy(name, result), run.detail).toEqual(withoutRacy(name, want))
      expect([...run.kernel.unimplementedInstructions.keys()]).toEqual([])
      // No syscall answered with ENOSYS (rseq included: glibc registers it for every thread).
      expect([...run.kernel.unimplemented.keys()]).toEqual([])
    })
  }
})
