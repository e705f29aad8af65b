// Interactive or piped, the same run (issue 17, determinism): the same program given the same input
// prints the same bytes, leaves the same trace - timestamps included, which are guest time, so the
// same instructions and cycles up to every hit - and the same --stats, whether its stdin and stdout
// are a terminal (util-linux script(1)'s pseudo-terminal, the input typed a line at a time) or a pipe
// and a file. The program is the kernel fixture linenum: raw read(2)s of one byte and write(2)s, so
// nothing it does depends on whether a descriptor is a terminal (libc's stdio would buffer
// differently: that difference is Linux's too, not the host's leaking in).

import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const SCRIPT = '/usr/bin/script'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const linenum = fileURLToPath(new URL('../../kernel/fixtures/bin/linenum', import.meta.url))
const scratch = mkdtempSync(join(tmpdir(), 'probekit-tty-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The same environment for both runs (the guest gets probekit's): nothing of the terminal's session in it. */
const ENV = { PATH: '/usr/bin:/bin', HOME: '/root', LANG: 'C', NO_COLOR: '1', TERM: 'dumb' }
const INPUT = ['first line', '', 'the third, longer than the others', 'x', 'last'].map((l) => `${l}\n`)

/** probekit run's arguments: every read's and write's size and result traced to FILE, counted with --stats. */
const args = (trace: string) => [
  'run',
  '--stats',
  '--trace',
  trace,
  '-p',
  'p:rd vfs_read count=$arg3:u64',
  '-p',
  'r:rdret vfs_read ret=$retval:s64',
  '-p',
  'p:wr ksys_write fd=$arg1:s32 count=$arg3:u64',
  '-p',
  'p:exit do_group_exit code=$arg1:s32',
  linenum,
]

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

interface Run {
  status: number | null
  stdout: string
  stats: string
  trace: string
}

function piped(): Run {
  const trace = join(scratch, 'piped.trace')
  const r = spawnSync(process.execPath, [bin, ...args(trace)], {
    env: ENV,
    input: INPUT.join(''),
    encoding: 'utf8',
    timeout: 300_000,
  })
  if (r.error) throw r.error
  return { status: r.status, stdout: r.stdout, stats: r.stderr, trace: readFileSync(trace, 'utf8') }
}

/** On a terminal: stdin and stdout the pseudo-terminal (no echo, no CR added), a line typed at a time, then ^D. */
function onTerminal(): Promise<Run> {
  const trace = join(scratch, 'tty.trace')
  const stats = join(scratch, 'tty.stats')
  const line = [
    'stty -echo -onlcr',
    'echo START',
    `exec env -i ${Object.entries(ENV)
      .map(([k, v]) => quote(`${k}=${v}`))
      .join(' ')} ${[process.execPath, bin, ...args(trace)].map(quote).join(' ')} 2>${quote(stats)}`,
  ].join('; ')
  return new Promise((done, fail) => {
    const c = spawn(SCRIPT, ['-qec', line, '/dev/null'], { env: { ...process.env, ...ENV } })
    let out = ''
    let typed = false
    c.stdout.on('data', (d) => {
      out += d
      if (!typed && out.includes('START\n')) {
        typed = true
        // Typed one line at a time, a little apart: the program meets them as a person's typing.
        for (const [i, l] of INPUT.entries()) setTimeout(() => c.stdin.write(l), 100 * i)
        setTimeout(() => c.stdin.write('\x04'), 100 * INPUT.length) // ^D at a line's start: EOF
      }
    })
    c.on('error', fail)
    c.on('exit', (status) => {
      done({
        status,
        stdout: out.slice(out.indexOf('START\n') + 'START\n'.length),
        stats: readFileSync(stats, 'utf8'),
        trace: readFileSync(trace, 'utf8'),
      })
    })
  })
}

describe.skipIf(!existsSync(SCRIPT) || process.platform !== 'linux')(
  'probekit run: a terminal or pipes, the same run',
  () => {
    it('the same output, status, trace (guest timestamps) and --stats', { timeout: 600_000 }, async () => {
      const p = piped()
      const t = await onTerminal()
      // What linenum makes of the input, as natively: numbered, reversed lines and the summary; status = lines.
      const native = spawnSync(linenum, { input: INPUT.join(''), encoding: 'utf8' })
      expect(native.stdout).toMatch(/^1: enil tsrif\n2: \n[\s\S]*\n5: tsal\nlines 5 bytes 53 sum \d+\n$/)
      expect({ stdout: p.stdout, status: p.status }).toEqual({ stdout: native.stdout, status: native.status })
      // One read per byte and its return, one write per line: the trace is the system calls themselves.
      const count = (trace: string, event: string) =>
        trace.split('\n').filter((l) => l.includes(` ${event}: `)).length
      expect(count(p.trace, 'rd')).toBe(54) // 53 bytes and the EOF
      expect(count(p.trace, 'wr')).toBe(6)
      expect(p.stats).toMatch(/^ {2}rd +54 +0\n {2}rdret +54 +0\n {2}wr +6 +0\n {2}exit +1 +0\n$/)
      expect(t).toEqual(p)
    })
  },
)
