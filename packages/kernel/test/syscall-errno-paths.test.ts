// The path, descriptor and offset calls the syscall fuzzer (issue 17) found
// answered otherwise than Linux, each corner case once (fixtures/pathcalls.c):
// filename_create's and open's trailing slashes and dots, O_EXCL and
// O_CREAT through symlinks, unlink/rmdir/rename/link's checks in
// do_*at's order, RENAME_EXCHANGE and RENAME_WHITEOUT, getdents64's order
// and cursor on tmpfs, 64-bit offsets (lseek, pwrite64, SEEK_DATA/HOLE),
// fallocate's and fcntl's checks, the syscall number's upper half. Where
// the host is x86-64 Linux with a tmpfs, every line must be the native
// run's; everywhere, the lines below are Linux's answers as documented.

import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { runGuest } from './support/run.js'
import { makeScratch } from './support/syscall-fuzz.js'

const BIN = new URL('../fixtures/bin/pathcalls', import.meta.url)
const onHost = process.platform === 'linux' && process.arch === 'x64'

describe('path and descriptor corner cases (pathcalls)', () => {
  const scratch = onHost ? makeScratch() : '/tmp/pathcalls'
  afterAll(() => {
    if (onHost) rmSync(scratch, { recursive: true, force: true })
  })
  let ours = ''

  it('answers as Linux documents', () => {
    const run = runGuest(new Uint8Array(readFileSync(BIN)), ['pathcalls', scratch], {
      setup: (k) => k.vfs.mkdirp(scratch),
    })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    ours = run.stdout
    const lines = new Set(ours.split('\n'))
    for (const l of [
      'mkdir d/ = EEXIST', // filename_create: the name exists
      'mkdir e/ = 0', // a trailing slash is for a directory
      'symlink x/ = ENOENT', // ... and nothing else
      'open f/ creat = EISDIR', // open_last_lookups: O_CREAT and a trailing slash
      'open f/. = ENOTDIR', // "." after a non-directory
      'open BAD creat|directory = EINVAL', // build_open_flags before getname
      'open l creat excl = EEXIST', // O_EXCL does not follow the symlink
      'open dangling creat = 0', // O_CREAT follows it and makes the target
      'access made = 0',
      'F_GETFL = 32768', // O_LARGEFILE on a 64-bit kernel, O_CLOEXEC not a file flag
      'unlink . = EISDIR',
      'rmdir .. = ENOTEMPTY',
      'rename . x = errno 16', // EBUSY
      'rename d d/s/t = EINVAL', // into its own subtree
      'rename d/s/ d = ENOTEMPTY', // over its ancestor
      'renameat2 exchange nope = ENOENT',
      'f2 is a 0:0 device = 1', // RENAME_WHITEOUT
      'chmod l 0600 nofollow = errno 95', // a symlink's mode: EOPNOTSUPP
      'fchmod O_PATH = EBADF',
      'getdents 10 = errno 22', // nothing fits: EINVAL
      'getdents 72 = . .. c (72)', // newest first
      'getdents rest = b a (48)', // the cursor stays: r/new comes before it
      'getdents again = . .. new c b a (144)',
      'lseek dir end = EINVAL', // dcache_dir_lseek
      'lseek cur = 9223372036854775807', // all 64 bits
      'pwrite64 LLONG_MAX = EINVAL', // rw_verify_area
      'SEEK_HOLE 8192 = 12288',
      'fallocate past RLIMIT_FSIZE = errno 27', // EFBIG
      'F_DUPFD int arg = 7',
      'F_GET_SEALS = 1', // tmpfs files come sealed
      'fcntl cmd 2^32+F_GETFD = 0',
      "getppid with rax's upper half set = 1", // the number is eax's
      'sigaltstack again = 0', // a stack at -1 holds no sp
      'clock_gettime REALTIME_ALARM = EINVAL', // no RTC
    ])
      expect(lines, l).toContain(l)
  }, 120_000)

  it.runIf(onHost && scratch.startsWith('/dev/shm/'))('answers every call as the native run on tmpfs', () => {
    const native = spawnSync(BIN.pathname, [scratch], { encoding: 'utf8', timeout: 60_000 })
    expect(native.status, native.stderr).toBe(0)
    expect(ours.split('\n')).toEqual(native.stdout.split('\n'))
  })
})
