// chroot(2) (fixtures/chroot.c): the root a task's path walks start from and ".." stops at, in its
// fs_struct (copied by fork, shared by a thread: CLONE_FS); getcwd and /proc/PID/{root,cwd} seen
// from it; its errors in ksys_chroot's order, EPERM once capset took CAP_SYS_CHROOT out of the
// effective set; and the classic way out (chroot into a subdirectory, climb from the cwd left
// outside, chroot(".")), which leaves the chroot as on Linux but not the tree the kernel was given.
// Compared line for line with the native run where the tests run as root.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'

const FIXTURE = new URL('../fixtures/bin/chroot', import.meta.url)
const asRoot = process.getuid?.() === 0 && process.platform === 'linux' && process.arch === 'x64'

function emulated() {
  const r = runGuest(new Uint8Array(readFileSync(FIXTURE)), ['/bin/chroot', '/scratch'], {
    setup: (k) => void k.vfs.mkdirp('/scratch'),
  })
  expect(r.detail).not.toMatch(/error|oops/)
  expect(r.stderr).toBe('')
  expect(r.status).toBe(0)
  expect(r.kernel.unimplemented.size).toBe(0)
  return r.stdout
}

describe('chroot', () => {
  it('errors, the root inside, fork and threads, the way out: as natively', () => {
    const out = emulated()
    const lines = out.split('\n')
    for (const line of [
      'chroot DIR/jail/none: ENOENT',
      'chroot DIR/jail/etc/file: ENOTDIR',
      'chroot DIR/jail/loop: ELOOP',
      'chroot NULL: EFAULT',
      'chroot NAME_MAX+: ENAMETOOLONG',
      'chroot DIR/jail without it: EPERM',
      'chroot DIR/jail with it: ok',
      'getcwd: /',
      'read /../../../outside: ENOENT',
      'read /abs (-> /etc/file): "inside"',
      'read /up (-> ../../../outside): ENOENT',
      'stat /.. is /: yes',
      'readlink /proc/self/root: /',
      'child: read /etc/file: "inside"',
      'exec\'d inside: read /etc/file: "inside"',
      'getcwd: (unreachable)DIR/jail',
      'getcwd after climbing: (unreachable)/',
      'after a thread\'s chroot: read /etc/file: "inside"',
      'parent: read DIR/outside: "outside"',
      'parent: read /etc/file: ENOENT',
    ])
      expect(lines).toContain(line)
    if (asRoot) {
      const dir = mkdtempSync(join(tmpdir(), 'probekit-chroot-'))
      try {
        const native = spawnSync(FIXTURE.pathname, [dir], { encoding: 'utf8' })
        expect(native.status).toBe(0)
        expect(out).toBe(native.stdout)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  })
})
