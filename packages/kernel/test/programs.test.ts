// The fixture programs (fixtures/: static musl and glibc builds, -O2 and -O3)
// under the probekit kernel print exactly what they print natively: stdout, stderr and exit
// status are compared with fixtures/expected, recorded from native runs
// (fixtures/check-native.sh re-checks those natively on this host).

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { syscallName } from '../src/index.js'
import { runGuest } from './support/run.js'

interface Case {
  name: string
  program: string
  args: string[]
  env: Record<string, string>
}

const dir = new URL('../fixtures/', import.meta.url)
const cases: Case[] = JSON.parse(readFileSync(new URL('cases.json', dir), 'utf8'))
const expected = (name: string, ext: string) => readFileSync(new URL(`expected/${name}.${ext}`, dir), 'utf8')

/** Cases that need what is not there yet, with the reason (each one is an open item in the notes). */
const PENDING: Record<string, string> = {}

const onHost = process.platform === 'linux' && process.arch === 'x64'

describe('fixture programs natively (the oracle; x86-64 Linux hosts only)', () => {
  for (const c of cases) {
    it.runIf(onHost)(c.name, () => {
      // As fixtures/check-native.sh runs them: their own env only, stdin from /dev/null, a fresh cwd.
      const cwd = mkdtempSync(join(tmpdir(), 'probekit-native-'))
      const work = mkdtempSync(join(tmpdir(), 'probekit-tmp-'))
      try {
        const program = fileURLToPath(new URL(c.program, dir))
        const r = spawnSync(
          program,
          c.args.map((a) => a.replace('{tmpdir}', work)),
          { cwd, env: c.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
        )
        expect({ stdout: r.stdout, stderr: r.stderr, status: r.status }).toEqual({
          stdout: expected(c.name, 'stdout'),
          stderr: expected(c.name, 'stderr'),
          status: Number(expected(c.name, 'status').trim()),
        })
      } finally {
        rmSync(cwd, { recursive: true, force: true })
        rmSync(work, { recursive: true, force: true })
      }
    })
  }
})

describe('fixture programs under the kernel match their native runs', () => {
  for (const c of cases) {
    const run = () => {
      const path = `/bin/${c.program.split('/').pop()}`
      const r = runGuest(
        new Uint8Array(readFileSync(new URL(c.program, dir))),
        [path, ...c.args.map((a) => a.replace('{tmpdir}', '/tmp'))],
        {
          path,
          env: Object.entries(c.env).map(([k, v]) => `${k}=${v}`),
          maxInstructions: 500_000_000,
        },
      )
      expect({ stdout: r.stdout, stderr: r.stderr, status: r.status }).toEqual({
        stdout: expected(c.name, 'stdout'),
        stderr: expected(c.name, 'stderr'),
        status: Number(expected(c.name, 'status').trim()),
      })
      // Nothing on the way was missing: no syscall answered ENOSYS, no instruction raised #UD for want of an implementation.
      expect({
        syscalls: [...r.kernel.unimplemented.keys()].map(syscallName),
        instructions: [...r.kernel.unimplementedInstructions.keys()],
      }).toEqual({ syscalls: [], instructions: [] })
    }
    if (PENDING[c.name]) it.todo(`${c.name}: ${PENDING[c.name]}`)
    else it(c.name, { timeout: 120_000 }, run)
  }
})
