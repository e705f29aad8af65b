// probekit run -f EVENT:FILTER: ftrace event filters (Documentation/trace/
// events.rst, "Event filtering") on kernel and user probes, end to end: a
// hit is written (ftrace line or JSON) only when its event's filter matches,
// --stats counts every hit as kprobe_profile does, and a bad filter is a
// one-line error with tracefs's parse_error text and its column.

import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixtures = new URL('../../kernel/fixtures/', import.meta.url)
const program = (name: string) => fileURLToPath(new URL(`bin/${name}`, fixtures))
const MYPROG = program('myprog')

function run(args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The lines of an event, without the ftrace prefix (task, CPU, flags, timestamp). */
const lines = (stderr: string, event: string) =>
  stderr
    .split('\n')
    .filter((l) => l.includes(` ${event}: (`))
    .map((l) => l.replace(/^ *\S+-\d+ +\[\d{3}\] d\.\.\.\. +\d+\.\d{6}: /, ''))

/** --stats's line for an event: its hits and misses. */
function stats(stderr: string, event: string): [number, number] | undefined {
  const m = new RegExp(`^  ${event} +(\\d+) +(\\d+)$`, 'm').exec(stderr)
  return m ? [Number(m[1]), Number(m[2])] : undefined
}

// myprog calls myfunc(x, y) = x*x + 3y + 1 on these, in this order.
const CALLS = [
  [1, 2],
  [2, 3],
  [5, -1],
  [10, 7],
  [-4, 0],
]
const entry = `p:myfunc ${MYPROG}:myfunc x=%di:s64 y=%si:s64`
const exit = `r:myret ${MYPROG}:myfunc ret=$retval:s64`
const xy = (l: string) => /x=(-?\d+) y=(-?\d+)$/.exec(l)?.slice(1).map(Number)

describe('probekit run -f: event filters', () => {
  it('writes only the hits the filter matches; --stats still counts every hit', () => {
    const r = run(['-p', entry, '-f', 'myfunc:x > 2', '--stats', '--', MYPROG])
    expect(r.code).toBe(0)
    expect(lines(r.stderr, 'myfunc').map(xy)).toEqual(CALLS.filter(([x]) => x > 2))
    expect(stats(r.stderr, 'myfunc')).toEqual([CALLS.length, 0])
  })

  it('&& binds tighter than ||, ! and parentheses; s64 compares signed', () => {
    const r = run(['-p', entry, '-f', 'myfunc:x < 0 || y == 3 && !(x == 1)', '--', MYPROG])
    expect(r.code).toBe(0)
    expect(lines(r.stderr, 'myfunc').map(xy)).toEqual([
      [2, 3],
      [-4, 0],
    ])
  })

  it('each event has its own filter; a return probe filters on $retval, GROUP/EVENT names an event', () => {
    const r = run([
      '-p',
      entry,
      '-p',
      exit,
      '-f',
      'myfunc:y == -1',
      '-f',
      'uprobes/myret:ret >= 20 && comm == "myprog" && common_pid == 1',
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    expect(lines(r.stderr, 'myfunc').map(xy)).toEqual([[5, -1]])
    const rets = CALLS.map(([x, y]) => x * x + 3 * y + 1).filter((v) => v >= 20)
    expect(lines(r.stderr, 'myret').map((l) => Number(/ret=(-?\d+)$/.exec(l)?.[1]))).toEqual(rets)
  })

  it('a filter no hit matches writes nothing; "0" is no filter', () => {
    const none = run(['-p', entry, '-f', 'myfunc:comm ~ "sh*"', '--stats', '--', MYPROG])
    expect(none.code).toBe(0)
    expect(lines(none.stderr, 'myfunc')).toEqual([])
    expect(stats(none.stderr, 'myfunc')).toEqual([CALLS.length, 0])
    const all = run(['-p', entry, '-f', 'myfunc:0', '--', MYPROG])
    expect(lines(all.stderr, 'myfunc').map(xy)).toEqual(CALLS)
  })

  it('kernel probes: strings by glob, the entry arguments at a return, --json', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probekit-filter-'))
    const r = run([
      '-p',
      'p:open do_sys_open dfd=$arg1:s32 name=+0($arg2):ustring',
      '-p',
      'r:opened do_sys_open name=+0($arg2):ustring ret=$retval:s64',
      '-f',
      'open:name ~ "miss*" && dfd == -100',
      '-f',
      'opened:ret < 0 && __probe_func.function == do_sys_open',
      '--json',
      '--',
      program('fileio'),
      dir,
    ])
    expect(r.code).toBe(0)
    const hits = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
    const opens = hits.filter((h) => h.event === 'open')
    expect(opens.map((h) => h.args)).toEqual([{ dfd: -100, name: 'missing.txt' }])
    const failed = hits.filter((h) => h.event === 'opened')
    expect(failed.length).toBeGreaterThan(0)
    for (const h of failed) expect(h.args.ret).toBeLessThan(0)
    expect(failed.map((h) => h.args.name)).toContain('missing.txt')
  })

  it('a bad filter is a one-line error naming the column, before anything runs', () => {
    const cases: [string[], RegExp][] = [
      [
        ['-p', entry, '-f', 'myfunc:x == "a"'],
        /^probekit: bad filter for uprobes\/myfunc 'x == "a"': Expecting numeric field \(column 7\): x is a number\n$/,
      ],
      [
        ['-p', entry, '-f', 'myfunc:z > 1'],
        /^probekit: bad filter for uprobes\/myfunc 'z > 1': Field not found \(column 3\): z\n$/,
      ],
      [
        ['-p', entry, '-f', 'myfunc:(x > 1'],
        /^probekit: bad filter for uprobes\/myfunc '\(x > 1': Too many '\(' \(column 1\)\n$/,
      ],
      [['-p', entry, '-f', 'nosuch:x > 1'], /^probekit: -f 'nosuch:x > 1': no probe event nosuch /],
      [['-p', entry, '-f', 'x > 1'], /^probekit: -f 'x > 1': expected EVENT:FILTER/],
      [['-f', 'myfunc:x > 1'], /^probekit: -f 'myfunc:x > 1': there are no probes/],
      [
        ['-p', entry, '-f', 'myfunc:x > 1', '-f', 'myfunc:y > 1'],
        /^probekit: -f 'myfunc:y > 1': event uprobes\/myfunc already has a filter/,
      ],
    ]
    for (const [args, message] of cases) {
      const r = run([...args, '--', MYPROG])
      expect([args, r.code]).toEqual([args, 2])
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(message)
    }
  })
})
