// probekit run --tmpfs-size: the size= of the in-memory file system that
// holds the guest's writes (tmpfs, mm/shmem.c). Past it a write gets ENOSPC
// and the guest says so itself, as on a full tmpfs; statfs (df) reports the
// size; without the option it is half of --memory, tmpfs's default. A value
// that is not a size is one line on stderr and exit 2. The guest is Debian's
// busybox-static (skipped where it is absent).

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import pc from 'picocolors'
import { describe, expect, it } from 'vitest'
import { runCli } from '../src/program.js'

const BUSYBOX = '/bin/busybox'
const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const hello = fileURLToPath(new URL('../../kernel/fixtures/bin/hello', import.meta.url))
const busybox =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
if (!busybox) console.warn(`run-tmpfs: the guest runs skipped, needs Linux x86-64 and a static ${BUSYBOX}`)

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 300_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A shell in the guest, with busybox's directory shown to it. */
const sh = (options: string[], script: string) =>
  run(...options, '--mount', '/bin', '--', BUSYBOX, 'sh', '-c', script)

/** 2 MiB of zeros into /tmp, then its status and the file's size; then df's line for / (1K blocks). */
const FILL =
  'dd if=/dev/zero of=/tmp/big bs=64k count=32; echo "status $?"; wc -c < /tmp/big; df -k / | tail -n 1'

describe('probekit run --tmpfs-size', () => {
  it('refuses what is not a size from 4K to 64G in whole pages, in one line', async () => {
    for (const value of ['0', '1.5M', 'lots', '100G', '5K', '-1M', '0x100000', '']) {
      // In-process: the option is checked before anything is read or run.
      let stdout = ''
      let stderr = ''
      const code = await runCli(['run', '--tmpfs-size', value, hello], {
        stdout: { write: (s: string) => (stdout += s) },
        stderr: { write: (s: string) => (stderr += s) },
        colors: pc.createColors(false),
      })
      expect(code, value).toBe(2)
      expect(stdout).toBe('')
      expect(stderr).toBe(
        `probekit: --tmpfs-size must be a size from 4K to 64G such as 512M or 1G, in whole 4K pages (got '${value}')\n`,
      )
    }
  })

  it.runIf(busybox)(
    'past the size a write gets ENOSPC, and df reports the size',
    { timeout: 300_000 },
    () => {
      const r = sh(['--tmpfs-size', '1M'], FILL)
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(/^dd: error writing '\/tmp\/big': No space left on device\n/)
      const [status, size, df] = r.stdout.trim().split('\n')
      expect(status).toBe('status 1')
      // What fitted: at most the 1 MiB, and no more than a few pages short of it (the
      // guest's other files take the rest).
      expect(Number(size)).toBeLessThanOrEqual(1024 * 1024)
      expect(Number(size)).toBeGreaterThan(1024 * 1024 - 16 * 4096)
      const [fs, blocks, used, avail] = df.split(/\s+/)
      expect(fs).toBe('tmpfs')
      expect(Number(blocks)).toBe(1024)
      expect(Number(used) + Number(avail)).toBe(1024)
    },
  )

  it.runIf(busybox)('a size it fits in: the same write succeeds', { timeout: 300_000 }, () => {
    const r = sh(['--tmpfs-size', '4M'], FILL)
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('32+0 records in\n32+0 records out\n')
    const [status, size, df] = r.stdout.trim().split('\n')
    expect(status).toBe('status 0')
    expect(Number(size)).toBe(2 * 1024 * 1024)
    expect(Number(df.split(/\s+/)[1])).toBe(4096)
  })

  it.runIf(busybox)('without it: half of --memory, as tmpfs', { timeout: 300_000 }, () => {
    const r = sh(['--memory', '64M'], 'df -k / | tail -n 1')
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(Number(r.stdout.split(/\s+/)[1])).toBe(32 * 1024)
  })
})
