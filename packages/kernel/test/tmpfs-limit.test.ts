// The in-memory file system is a tmpfs with a size (issue 17, "Hostile
// guests are contained"): a guest that fills /tmp gets ENOSPC as on a full
// disk, the host's heap stays bounded, and the space comes back when the
// file goes; host files are read range by range, so a 64 GiB sparse file
// can be read at both ends with the host's memory bounded, and copying it
// up for writing is ENOSPC. The guest is Debian's busybox-static (skipped
// without /bin/busybox); the file layer's accounting is also checked
// directly.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { ENOSPC, Kernel, type OpenFile, RegularFile, ShmemSb, Vfs } from '../src/index.js'
import { available, BUSYBOX } from './support/busybox-suite.js'
import { nodeHostDirectory } from './support/host-directory.js'
import { guestImage } from './support/run.js'

const MiB = 1024 * 1024
const RAM = 32 * MiB

// A full collection before each measure, so that only what is still held counts (not garbage not yet collected).
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Bytes the host holds in its JS heap and array buffers (guest RAM included, allocated before). */
const hostBytes = () => {
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}

function busybox(script: string, options: { tmpfsSize?: number; setup?: (k: Kernel) => void } = {}) {
  let stdout = ''
  let stderr = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image: guestImage(),
    memorySize: RAM,
    ...(options.tmpfsSize !== undefined ? { tmpfsSize: options.tmpfsSize } : {}),
    stdout: (d) => {
      stdout += dec.decode(d)
    },
    stderr: (d) => {
      stderr += dec.decode(d)
    },
  })
  kernel.vfs.writeFile('/bin/busybox', new Uint8Array(readFileSync(BUSYBOX)))
  options.setup?.(kernel)
  kernel.boot()
  const before = hostBytes()
  kernel.spawn('/bin/busybox', ['sh', '-c', script], ['PATH=/nonexistent', 'LC_ALL=C'])
  const { result, exit } = kernel.run(4_000_000_000)
  const grown = hostBytes() - before
  return { stdout, stderr, status: exit?.status ?? null, detail: `${result.reason}: ${result.detail}`, grown }
}

/** busybox df's numbers for one line: [1K-blocks, used, available]. */
const dfLines = (out: string) =>
  [...out.matchAll(/^tmpfs\s+(\d+)\s+(\d+)\s+(\d+)\s/gm)].map((m) => [
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
  ])

describe.skipIf(!available)('a guest filling tmpfs', () => {
  it('gets ENOSPC as on a full disk, with the host heap bounded, and the space back after rm', {
    timeout: 300_000,
  }, () => {
    const r = busybox(
      'df /tmp; cat /dev/zero > /tmp/big; echo status $?; ls -s /tmp/big; df /tmp; rm /tmp/big; df /tmp; cat /dev/zero > /tmp/again',
    )
    expect(r.status, `${r.detail}\n${r.stderr}`).toBe(1)
    // The same message and status as busybox natively writing to a full device.
    const native = spawnSync(BUSYBOX, ['sh', '-c', 'cat /dev/zero > /dev/full; echo status $?'], {
      encoding: 'utf8',
    })
    expect(r.stderr).toBe(native.stderr.repeat(2))
    expect(r.stdout).toContain(native.stdout)
    const [empty, full, freed] = dfLines(r.stdout)
    // size: half of RAM, in 1K blocks; full: nothing available; rm gives every block back.
    expect(empty[0]).toBe(RAM / 2 / 1024)
    expect(full).toEqual([empty[0], empty[0], 0])
    expect(freed).toEqual(empty)
    // The file holds what was free before (ls -s: 1K blocks).
    expect(Number(/^\s*(\d+) \/tmp\/big$/m.exec(r.stdout)?.[1])).toBe(empty[2])
    // Filled again and left full: the host holds the file's pages (the limit) and not much else (the
    // margin: the emulator's caches, and buffers the collector has not swept yet).
    expect(r.grown).toBeGreaterThan(RAM / 2 - 4 * MiB)
    expect(r.grown).toBeLessThan(RAM / 2 + 32 * MiB)
  })

  it('a kernel option sizes it; an unlinked file still open keeps its space until the last close', {
    timeout: 300_000,
  }, () => {
    const r = busybox(
      'df /tmp; exec 3>/tmp/f; /bin/busybox dd if=/dev/zero bs=4096 count=100 >&3 2>/dev/null; rm /tmp/f; df /tmp; exec 3>&-; df /tmp',
      { tmpfsSize: 4 * MiB },
    )
    expect(r.status, `${r.detail}\n${r.stderr}`).toBe(0)
    const [before, open, closed] = dfLines(r.stdout)
    expect(before[0]).toBe(4096)
    expect(open[1] - before[1]).toBe(400)
    expect(closed).toEqual(before)
  })

  it('truncate up makes a hole that takes no space; fallocate reserves it, all or ENOSPC', {
    timeout: 300_000,
  }, () => {
    const r = busybox(
      [
        'df /tmp',
        'truncate -s 1G /tmp/sparse; ls -s /tmp/sparse; df /tmp',
        'fallocate -l 1M /tmp/res; ls -ls /tmp/res; df /tmp',
        'fallocate -l 1G /tmp/toobig; echo status $?',
      ].join('; '),
      { tmpfsSize: 8 * MiB },
    )
    const [start, afterHole, afterAlloc] = dfLines(r.stdout)
    expect(afterHole).toEqual(start)
    expect(r.stdout).toMatch(/^\s*0 \/tmp\/sparse$/m)
    expect(afterAlloc[1] - start[1]).toBe(1024)
    expect(r.stdout).toMatch(/^\s*1024 -rw-r--r--\s+1 root\s+root\s+1048576 /m)
    expect(r.stderr).toMatch(/fallocate: .*No space left on device/)
    expect(r.stdout).toMatch(/status 1$/m)
  })

  it('a file larger than RAM cannot be executed (ENOMEM)', { timeout: 300_000 }, () => {
    const r = busybox('truncate -s 64M /tmp/huge; chmod +x /tmp/huge; /tmp/huge; echo status $?')
    expect(r.stderr).toBe('sh: /tmp/huge: Cannot allocate memory\n')
    expect(r.stdout).toMatch(/status 126$/m)
  })
})

describe.skipIf(!available)('a 64 GiB sparse host file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-sparse-'))
  const path = join(dir, 'big')
  const SIZE = 64 * 1024 * MiB
  const fd = openSync(path, 'w')
  writeSync(fd, 'the first line of a very sparse file\n', 0)
  writeSync(fd, 'and its very last line\n', SIZE - 23)
  // The length is exact whatever the host's file system does with the holes.
  truncateSync(path, SIZE)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('is read at both ends and in the middle with the host memory bounded', { timeout: 300_000 }, () => {
    const r = busybox(
      [
        'head -c 37 /mnt/big',
        'tail -c 23 /mnt/big',
        // Page 8 388 607 of 16 777 216: the middle, a hole.
        'dd if=/mnt/big bs=4096 skip=8388607 count=1 2>/dev/null | od -A d -t x1',
        'ls -l /mnt/big',
      ].join('; '),
      { setup: (k) => k.vfs.mountHost('/mnt', nodeHostDirectory(dir)) },
    )
    expect(r.status, `${r.detail}\n${r.stderr}`).toBe(0)
    expect(r.stdout).toContain('the first line of a very sparse file\nand its very last line\n')
    expect(r.stdout).toContain('0000000 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n*\n0004096\n')
    expect(r.stdout).toMatch(new RegExp(` ${SIZE} .* /mnt/big\n`))
    expect(r.grown).toBeLessThan(16 * MiB)
  })

  it('copying it up for a write is ENOSPC, and the host file is unchanged', { timeout: 300_000 }, () => {
    const before = statSync(path)
    const r = busybox('echo more >> /mnt/big; echo status $?; df /mnt', {
      setup: (k) => k.vfs.mountHost('/mnt', nodeHostDirectory(dir), { readOnly: false }),
    })
    expect(r.stderr).toMatch(/No space left on device/)
    expect(r.stdout).toMatch(/^status 1$/m)
    const after = statSync(path)
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs])
    expect(r.grown).toBeLessThan(16 * MiB)
  })
})

describe('the file layer accounts its pages against the size', () => {
  const file = (vfs: Vfs) => vfs.writeFile('/tmp/f', new Uint8Array(0), 0o644)
  const at = (pos: number, flags = 1) => ({ pos, flags }) as unknown as OpenFile

  it('a write that fills it part way is short; the next is ENOSPC; truncate down gives pages back', () => {
    const vfs = new Vfs()
    vfs.shmem.setSize(3 * 4096)
    const f = file(vfs)
    expect(f.write(at(100), new Uint8Array(5 * 4096).fill(7))).toBe(3 * 4096 - 100)
    expect(f.writeAt(3 * 4096, new Uint8Array(1))).toBe(-ENOSPC)
    expect(vfs.shmem.freeBlocks).toBe(0)
    expect(f.truncate(4096)).toBe(0)
    expect(vfs.shmem.freeBlocks).toBe(2)
    // The bytes kept are the ones written (the hole before them reads as zeros).
    expect([...f.readAt(98, 4)]).toEqual([0, 0, 7, 7])
    // A hole far out costs nothing.
    expect(f.truncate(1 << 40)).toBe(0)
    expect([f.size(), vfs.shmem.freeBlocks, f.blocks()]).toEqual([1 << 40, 2, 8])
  })

  it('an unlinked file gives its pages back at its last close, not before', () => {
    const vfs = new Vfs()
    vfs.shmem.setSize(4 * 4096)
    const f = file(vfs)
    f.writeAt(0, new Uint8Array(4 * 4096))
    f.open()
    expect(vfs.unlink(vfs.mkdirp('/tmp'), 'f')).toBe(0)
    expect(vfs.shmem.freeBlocks).toBe(0)
    f.close()
    expect(vfs.shmem.freeBlocks).toBe(4)
  })

  it('a file still mapped keeps its pages until reclaim finds it unmapped', () => {
    const sb = new ShmemSb()
    sb.setSize(2 * 4096)
    let mapped = true
    sb.mapped = () => mapped
    const f = new RegularFile(new Uint8Array(0), 0o100644, sb)
    f.writeAt(0, new Uint8Array(2 * 4096))
    f.unlinked()
    expect(sb.freeBlocks).toBe(0)
    mapped = false
    // A charge that would not fit reclaims the orphan first.
    expect(sb.charge(2)).toBe(true)
  })
})
