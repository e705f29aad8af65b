// st_ino belongs to one kernel: its file system numbers inodes in the
// order programs first see them, so the same run prints the same inode
// numbers whatever other kernels the process made before (a process-wide
// counter once made `ls -i` depend on the test order).

import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { Kernel } from '../src/index.js'
import { guestImage, runGuest } from './support/run.js'

const BUSYBOX = '/bin/busybox'
const staticBusybox =
  existsSync(BUSYBOX) && !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

describe('inode numbers', () => {
  it.skipIf(!staticBusybox)('are the same in every run of a program, whatever kernels came before', () => {
    const program = new Uint8Array(readFileSync(BUSYBOX))
    const script =
      'mkdir /tmp/d; echo x > /tmp/d/f; stat -c "%i %n" / /tmp /tmp/d /tmp/d/f /bin/busybox; ls -id /dev/null'
    const run = () =>
      runGuest(program, ['sh', '-c', script], { path: BUSYBOX, files: { [BUSYBOX]: program } })
    const first = run()
    expect(first.status).toBe(0)
    // Another kernel in between, making files of its own.
    const other = new Kernel({ image: guestImage(), memorySize: 32 * 1024 * 1024 })
    for (let i = 0; i < 50; i++) other.vfs.writeFile(`/tmp/f${i}`, new Uint8Array(1))
    const second = run()
    expect(second.stdout).toBe(first.stdout)
    // The root is inode 1, as on tmpfs; every name its own number.
    const inos = first.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[0])
    expect(inos[0]).toBe('1')
    expect(new Set(inos).size).toBe(inos.length)
  })
})
