// probekit run connects the guest's stdin to the host's, and --mount makes a
// host directory readable (read-only) inside the guest.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { hostDirectory } from '../src/host-directory.js'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const BUSYBOX = '/bin/busybox'
const dir = mkdtempSync(join(tmpdir(), 'probekit-io-'))

/** A static ELF at 0x400000 around raw code (entry right after the headers). */
function elf(code: number[]): Uint8Array {
  const b = new Uint8Array(120 + code.length)
  const v = new DataView(b.buffer)
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1])
  v.setUint16(16, 2, true)
  v.setUint16(18, 62, true)
  v.setBigUint64(24, 0x400078n, true)
  v.setBigUint64(32, 64n, true)
  v.setUint16(54, 56, true)
  v.setUint16(56, 1, true)
  v.setUint32(64, 1, true)
  v.setUint32(68, 5, true)
  v.setBigUint64(80, 0x400000n, true)
  v.setBigUint64(96, BigInt(b.length), true)
  v.setBigUint64(104, BigInt(b.length), true)
  b.set(code, 120)
  return b
}
const sys = (nr: number) => [0xb8, nr, 0, 0, 0, 0x0f, 0x05]
/** read(0, rsp-256, 256) ; write(1, same, n) ; exit(n) */
const ECHO = elf([
  0x31,
  0xff,
  0x48,
  0x8d,
  0xb4,
  0x24,
  0,
  0xff,
  0xff,
  0xff,
  0xba,
  0,
  1,
  0,
  0,
  ...sys(0),
  0x89,
  0xc2,
  0xbf,
  1,
  0,
  0,
  0,
  ...sys(1),
  0x89,
  0xc7,
  ...sys(231),
])

describe('probekit run: stdio and mounts', () => {
  it('gives the program the host stdin', () => {
    const prog = join(dir, 'echo')
    writeFileSync(prog, ECHO, { mode: 0o755 })
    const r = spawnSync(process.execPath, [bin, 'run', prog], {
      input: 'through stdin\n',
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(r.stdout).toBe('through stdin\n')
    expect(r.status).toBe(14)
  })

  it('hostDirectory lists, stats and reads a host tree, and nothing else', () => {
    const root = mkdtempSync(join(tmpdir(), 'probekit-mount-'))
    writeFileSync(join(root, 'a.txt'), 'alpha', { mode: 0o644 })
    const h = hostDirectory(root)
    expect(h.list('')).toEqual(['a.txt'])
    expect(h.stat('a.txt')).toMatchObject({ type: 'file', size: 5, perm: 0o644 })
    symlinkSync('a.txt', join(root, 'link'))
    expect(h.stat('link')).toMatchObject({ type: 'symlink', target: 'a.txt' })
    // pread: just the range asked for, fewer bytes at the end of the file.
    expect(new TextDecoder().decode(h.read('a.txt', 1, 3)!)).toBe('lph')
    expect(new TextDecoder().decode(h.read('a.txt', 3, 100)!)).toBe('ha')
    expect(h.stat('missing')).toBeNull()
  })
  it.skipIf(!existsSync(BUSYBOX))(
    "the guest's environment is the caller's: nothing the launcher sets for node",
    () => {
      const run = (env: NodeJS.ProcessEnv) =>
        spawnSync(process.execPath, [bin, 'run', '--', BUSYBOX, 'env'], { encoding: 'utf8', env })
      const base = { PATH: '/usr/bin:/bin', HOME: '/tmp', LANG: 'C' }
      expect(run(base).stdout.split('\n').sort()).toEqual(['', 'HOME=/tmp', 'LANG=C', 'PATH=/usr/bin:/bin'])
      // A variable the caller set itself is the guest's, even one the launcher also sets.
      expect(run({ ...base, MALLOC_ARENA_MAX: '4' }).stdout).toContain('MALLOC_ARENA_MAX=4\n')
    },
  )
})
