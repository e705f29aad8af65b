// Debian's busybox-static (a real-world glibc binary we did not build, a
// hundred programs in one) runs its applets under the kernel exactly as it
// runs them natively: text tools (sort, uniq, sed, grep, awk, cut, tr, od),
// checksums, archives and compression (tar, gzip, bzip2), arithmetic and
// formatting (expr, printf, seq, date, bc, dc), user names, directory
// listing, errors, and its own shell running pipelines of applets (a writer
// whose reader has gone dies of SIGPIPE). Each
// command line runs natively and emulated with the same stdin, environment
// and input files (test/busybox/, visible at the same path through a
// read-only host mount); stdout, stderr and the exit status must be
// identical. Needs /bin/busybox (apt-get install busybox-static) on an
// x86-64 Linux host; otherwise the tests are reported as skipped.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { available, BUSYBOX, type Case, cases, emulated, env } from './support/busybox-suite.js'

function native(c: Case) {
  const work = c.work ? mkdtempSync(join(tmpdir(), 'probekit-busybox-')) : null
  const r = spawnSync(BUSYBOX, c.argv, {
    cwd: '/',
    env: work ? { ...env, W: work } : env,
    encoding: 'utf8',
    input: c.stdin ?? '',
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  if (work) rmSync(work, { recursive: true, force: true })
  return { stdout: r.stdout, stderr: r.stderr, status: r.status }
}

describe.skipIf(!available)(`${BUSYBOX} runs its applets under the kernel as it does natively`, () => {
  for (const c of cases) {
    it(c.name, { timeout: 60_000 }, () => {
      const want = native(c)
      // The native run really did something (guards against an empty comparison): output, or grep's "no match".
      expect(want.stdout.length + want.stderr.length + (want.status ?? 0)).toBeGreaterThan(0)
      const { run, result } = emulated(c)
      expect(result, run.detail).toEqual(want)
      expect([...run.kernel.unimplementedInstructions.keys()]).toEqual([])
      expect([...run.kernel.unimplemented.keys()]).toEqual([])
    })
  }
})
