// probekit run with a kretprobe on a function that sleeps: a busybox
// pipeline's readers wait on their pipes inside vfs_read, and the trace shows
// each read once with the bytes it returned, as Linux's kprobe_events would
// (never -ERESTART* codes of calls abandoned and started again). A function
// that sleeps needs more kretprobe instances than CPUs (MAXACTIVE 16), as the
// kretprobe documentation says. Skipped where Debian's busybox-static is
// absent.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const BUSYBOX = '/bin/busybox'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const available =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
const PIPELINE = '/bin/busybox seq 1 3000 | /bin/busybox sort -r | /bin/busybox md5sum'
/** seq 1 3000's output, which sort and then md5sum read whole. */
const SEQ_BYTES = 9 * 2 + 90 * 3 + 900 * 4 + 2001 * 5

describe.skipIf(!available)('probekit run -p r:... vfs_read on a pipeline', () => {
  it('prints each read once with its byte count; the output is the native one', { timeout: 60_000 }, () => {
    const opts = {
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    }
    const native = spawnSync('/bin/sh', ['-c', PIPELINE], opts)
    const r = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '--mount',
        '/bin',
        '-p',
        'r16:rr vfs_read ret=$retval:s64',
        '--',
        BUSYBOX,
        'sh',
        '-c',
        PIPELINE,
      ],
      opts,
    )
    expect(r.status).toBe(0)
    expect(r.stdout).toBe(native.stdout)
    const hits = [
      ...r.stderr.matchAll(/^\s*(\S+)-(\d+)\s+\[\d+\].*rr: \(ksys_read\+\S+ <- vfs_read\) ret=(-?\d+)$/gm),
    ].map((m) => ({ pid: Number(m[2]), ret: Number(m[3]) }))
    expect(hits.length).toBeGreaterThan(4)
    expect(hits.filter((h) => h.ret < 0)).toEqual([])
    // Two readers (sort, md5sum) each read the whole stream, and then end of file once.
    const bytes = new Map<number, number>()
    for (const h of hits) bytes.set(h.pid, (bytes.get(h.pid) ?? 0) + h.ret)
    expect([...bytes.values()].filter((n) => n === SEQ_BYTES)).toHaveLength(2)
    for (const [pid, n] of bytes)
      if (n === SEQ_BYTES) expect(hits.filter((h) => h.pid === pid && h.ret === 0)).toHaveLength(1)
  })

  it('with the default MAXACTIVE (NR_CPUS) some returns are missed, and the run says how many', {
    timeout: 60_000,
  }, () => {
    const r = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '--mount',
        '/bin',
        '-p',
        'r:rr vfs_read ret=$retval:s64',
        '--',
        BUSYBOX,
        'sh',
        '-c',
        PIPELINE,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    )
    expect(r.status).toBe(0)
    const traced = r.stderr.split('\n').filter((l) => l.includes('<- vfs_read')).length
    const m = /^probekit: rr: (\d+) returns? missed \(maxactive 1: .*r16:rr\)$/m.exec(r.stderr)
    expect(m).not.toBeNull()
    // Every read is either traced or counted: the r16 run above traced them all.
    const full = spawnSync(
      process.execPath,
      [
        bin,
        'run',
        '--mount',
        '/bin',
        '-p',
        'r16:rr vfs_read ret=$retval:s64',
        '--',
        BUSYBOX,
        'sh',
        '-c',
        PIPELINE,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    )
    expect(full.stderr).not.toMatch(/missed/)
    const all = full.stderr.split('\n').filter((l) => l.includes('<- vfs_read')).length
    expect(traced + Number(m?.[1])).toBe(all)
  })
})
