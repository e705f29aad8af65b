// probekit run --json (one JSON object per probe hit), --stats (kprobe_profile's
// hits and misses at the end) and -P FILE (probe definitions from a file),
// end to end on the bundled programs.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixture = (name: string) => fileURLToPath(new URL(`../../kernel/fixtures/bin/${name}`, import.meta.url))
const FILEIO = fixture('fileio')
const MYPROG = fixture('myprog')

function run(args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** The JSON objects on stderr (hits), each with its timestamp checked and taken out. */
function hits(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      const o = JSON.parse(l)
      expect(Number.isSafeInteger(o.timestamp_ns)).toBe(true)
      delete o.timestamp_ns
      return o
    })
}

const tmp = () => mkdtempSync(join(tmpdir(), 'probekit-json-'))

describe('probekit run --json (probe hits)', () => {
  it("gives fileio's first do_sys_open and its return as JSON objects, (fault) as null", () => {
    const r = run([
      '--json',
      '-p',
      'p do_sys_open dfd=%di:s32 filename=+0(%si):ustring bad=+0(%si):u64',
      '-p',
      'r do_sys_open ret=$retval:s64 comm=$comm',
      '--',
      FILEIO,
    ])
    expect(r.code).toBe(0)
    // The ftrace lines are replaced: every trace line is an object.
    expect(r.stderr).not.toMatch(/d\.\.\.\./)
    const [entry, ret] = hits(r.stderr)
    expect(entry).toEqual({
      type: 'hit',
      cpu: 0,
      pid: 1,
      comm: 'fileio',
      group: 'kprobes',
      event: 'p_do_sys_open_0',
      probe: 'p',
      address: '0xffffffff81003050',
      symbol: 'do_sys_open+0x0/0x59',
      where: 'do_sys_open+0x0/0x59',
      // A kernel read of a user address faults, as on Linux.
      args: { dfd: -100, filename: 'data.txt', bad: null },
      faults: ['bad'],
    })
    expect(ret).toEqual({
      type: 'hit',
      cpu: 0,
      pid: 1,
      comm: 'fileio',
      group: 'kprobes',
      event: 'r_do_sys_open_0',
      probe: 'r',
      address: '0xffffffff81003050',
      symbol: 'do_sys_open+0x0/0x59',
      return_address: '0xffffffff810030cc',
      where: 'sys_open+0x1c/0x1e <- do_sys_open',
      args: { ret: 3, comm: 'fileio' },
    })
  })

  it("gives myprog's myfunc uprobe hits typed: s64 numbers, a u64 past 2^53 as text, hex and char as ftrace prints them, arrays", () => {
    const r = run([
      '--json',
      '-p',
      `p:user/myfunc ${MYPROG}:myfunc x=%di:s64 y=%si:s32 u=%di:u64 h=%di:x8 c=+0(%sp):char b=+0(%sp):u8[4] f=+0(\\0):u8[2]`,
      '-p',
      `r ${MYPROG}:myfunc ret=$retval:s64`,
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    const all = hits(r.stderr)
    expect(all).toHaveLength(10)
    expect(all[0]).toEqual({
      type: 'hit',
      cpu: 0,
      pid: 1,
      comm: 'myprog',
      group: 'user',
      event: 'myfunc',
      probe: 'p',
      address: '0x4011b0',
      where: '0x4011b0',
      args: { x: 1, y: 2, u: 1, h: '0x1', c: 'b', b: [98, 16, 64, 0], f: [null, null] },
      faults: ['f[0]', 'f[1]'],
    })
    expect(all[1]).toEqual({
      type: 'hit',
      cpu: 0,
      pid: 1,
      comm: 'myprog',
      group: 'uprobes',
      event: 'r_myprog_myfunc_0',
      probe: 'r',
      address: '0x4011b0',
      return_address: '0x401062',
      where: '0x401062 <- 0x4011b0',
      args: { ret: 8 },
    })
    // myfunc(-4, 0): x as s64 is -4, as u64 2^64 - 4 (not a double exactly: its decimal text).
    expect(all[8].args).toMatchObject({ x: -4, y: 0, u: '18446744073709551612', h: '0xfc' })
    expect(all.filter((h) => h.probe === 'r').map((h) => (h.args as { ret: number }).ret)).toEqual([
      8, 14, 23, 122, 17,
    ])
  })

  it('with --strace, applies to both streams', () => {
    const r = run([
      '--json',
      '--strace',
      '-e',
      'trace=exit_group',
      '-p',
      `p ${MYPROG}:myfunc x=%di:s64`,
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    const objects = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l))
    expect(objects.filter((o) => o.type === 'hit')).toHaveLength(5)
    expect(objects.filter((o) => o.type !== 'hit').length).toBeGreaterThan(0)
  })

  it('without probes or --strace is an error', () => {
    const r = run(['--json', '--', MYPROG])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      'probekit: --json goes with probes (-p, -P) or --strace: there is nothing to print as JSON\n',
    )
  })
})

describe('probekit run --stats', () => {
  it("prints kprobe_profile's hits and misses per event at the end", () => {
    const r = run([
      '--stats',
      '-p',
      `p:myfunc ${MYPROG}:myfunc x=%di:s64`,
      '-p',
      `r ${MYPROG}:myfunc`,
      '-p',
      'p do_sys_open',
      '-p',
      'r1 sys_exit_group',
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    const row = (event: string, hits: number, misses: number) =>
      `  ${event.padEnd(44)} ${String(hits).padStart(15)} ${String(misses).padStart(15)}\n`
    expect(
      r.stderr.endsWith(
        row('myfunc', 5, 0) +
          row('r_myprog_myfunc_0', 5, 0) +
          row('p_do_sys_open_0', 0, 0) +
          row('r_sys_exit_group_0', 0, 0),
      ),
    ).toBe(true)
  })

  // A static busybox (as run-sleeping.test.ts uses): sort and md5sum sleep in vfs_read at once.
  const busybox =
    process.arch === 'x64' &&
    existsSync('/bin/busybox') &&
    !readFileSync('/bin/busybox').includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
  it.skipIf(!busybox)(
    "counts a kretprobe's misses (nmissed) as kprobe_profile does",
    { timeout: 60_000 },
    () => {
      const pipeline = '/bin/busybox seq 1 3000 | /bin/busybox sort -r | /bin/busybox md5sum'
      const r = run([
        '--stats',
        '--mount',
        '/bin',
        '-p',
        'r:rr vfs_read',
        '--',
        '/bin/busybox',
        'sh',
        '-c',
        pipeline,
      ])
      expect(r.code).toBe(0)
      const traced = r.stderr.split('\n').filter((l) => l.includes(' rr: (')).length
      const missed = Number(/^probekit: rr: (\d+) returns? missed/m.exec(r.stderr)?.[1])
      expect(missed).toBeGreaterThan(0)
      // Hits are the returns written; misses the kretprobe's nmissed (the line above says how many).
      expect(r.stderr).toContain(
        `\n  ${'rr'.padEnd(44)} ${String(traced).padStart(15)} ${String(missed).padStart(15)}\n`,
      )
    },
  )

  it('without probes is an error', () => {
    const r = run(['--stats', '--', MYPROG])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('probekit: --stats: there are no probes (-p, -P) to count\n')
  })
})

describe('probekit run -P FILE', () => {
  it('reads definitions one per line, skipping comments and blank lines, after the -p ones', () => {
    const file = join(tmp(), 'probes.txt')
    writeFileSync(
      file,
      `# myprog's function\n\n  p:myfunc ${MYPROG}:myfunc x=%di:s64   # its first argument\n\t\nr ${MYPROG}:myfunc ret=$retval:s64\n`,
    )
    const r = run(['--stats', '-P', file, '-p', 'p do_sys_open', '--', MYPROG])
    expect(r.code).toBe(0)
    const lines = r.stderr.split('\n')
    expect(lines.filter((l) => / myfunc: \(0x4011b0\) x=-?\d+$/.test(l))).toHaveLength(5)
    expect(lines.filter((l) => / r_myprog_myfunc_0: \(0x401062 <- 0x4011b0\) ret=\d+$/.test(l))).toHaveLength(
      5,
    )
    // -p first, then the file's lines in order.
    expect(lines.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/ +/)[0])).toEqual([
      'p_do_sys_open_0',
      'myfunc',
      'r_myprog_myfunc_0',
    ])
  })

  it('names the file and line of a bad definition, and of a duplicate event', () => {
    const dir = tmp()
    const file = join(dir, 'bad.txt')
    writeFileSync(file, '# two probes\np do_sys_open\n\np:bad do_sys_open name=+0(%si):u8[65]\n')
    let r = run(['-P', file, '--', FILEIO])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      `probekit: ${file}:4: bad probe definition 'p:bad do_sys_open name=+0(%si):u8[65]': Array number is too big (column 35)\n`,
    )
    r = run(['-p', 'p do_sys_open', '-P', file, '--', FILEIO])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(
      `probekit: ${file}:2 'p do_sys_open': event p_do_sys_open_0 already exists (EEXIST)\n`,
    )
  })

  it('a missing file is a one-line error (exit 2)', () => {
    const file = join(tmp(), 'none.txt')
    const r = run(['-P', file, '--', FILEIO])
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`probekit: -P ${file}: no such file\n`)
  })
})
