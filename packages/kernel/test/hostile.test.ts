// Hostile guests are contained (fixtures/hostile.c): a fork bomb meets
// threads-max and fork fails with EAGAIN; pids wrap round below pid_max;
// unbounded recursion dies of SIGSEGV at RLIMIT_STACK as natively; a
// hundred thousand open/close cycles and reading /dev/zero for ever leave
// the kernel's memory where it was; an endless loop stops at the budget;
// and no path, symlink, /proc link or descriptor trick reaches a host file
// outside the tree the guest was given, nor changes one.

import { spawnSync } from 'node:child_process'
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Kernel } from '../src/index.js'
import { nodeHostDirectory } from './support/host-directory.js'
import { guestImage, runGuest } from './support/run.js'

const FIXTURE = new URL('../fixtures/bin/hostile', import.meta.url)
const program = new Uint8Array(readFileSync(FIXTURE))
const MIB = 1024 * 1024
const onHost = process.platform === 'linux' && process.arch === 'x64'

/** The fixture run natively (only the modes that are safe there): stdout and the shell's status. */
function native(args: string[]): { stdout: string; status: number } {
  const r = spawnSync(FIXTURE.pathname, args, {
    env: {},
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const signals: Record<string, number> = { SIGSEGV: 11, SIGKILL: 9 }
  return { stdout: r.stdout, status: r.signal ? 128 + (signals[r.signal] ?? 0) : (r.status ?? -1) }
}

/** A kernel running the fixture, advanced in slices so memory can be watched while it runs. */
function start(args: string[], memorySize = 32 * MIB, setup?: (k: Kernel) => void) {
  let stdout = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image: guestImage(),
    memorySize,
    stdout: (d) => {
      stdout += dec.decode(d)
    },
  })
  kernel.vfs.writeFile('/bin/hostile', program)
  setup?.(kernel)
  kernel.boot()
  kernel.spawn('/bin/hostile', ['hostile', ...args])
  return { kernel, output: () => stdout }
}

describe('a fork bomb', () => {
  it('stops at threads-max: fork fails with EAGAIN, every process is reaped, and fork works again after', () => {
    const r = runGuest(program, ['/bin/hostile', 'forkbomb'], {
      memorySize: 32 * MIB,
      setup: (k) => {
        // A small limit keeps the test short; the default comes from memory (below).
        expect(k.sysctls.set('kernel.threads-max', '48')).toBe(0)
      },
    })
    // RLIMIT_NPROC is Linux's default for the memory (max_threads / 2); root is not held to it.
    expect(r.stdout).toBe(
      'RLIMIT_NPROC 128/128, threads-max 48, pid_max 32768\n' +
        'fork failed: EAGAIN\n' +
        'children before it: some\n' +
        'reaped all: yes, ECHILD after: yes\n' +
        'fork after: ok\n',
    )
    expect(r.status).toBe(0)
    expect(r.kernel.tasks.size).toBe(1) // init, a zombie now: nothing else is left
  })

  it('threads-max and RLIMIT_NPROC come from the memory size, as set_max_threads derives them', () => {
    for (const mib of [32, 256]) {
      const k = new Kernel({ image: guestImage(), memorySize: mib * MIB })
      const maxThreads = (mib * MIB) / (16384 * 8)
      expect(k.sysctls.get('kernel.threads-max')?.read()).toBe(`${maxThreads}\n`)
      expect(k.sysctls.get('kernel.pid_max')?.read()).toBe('32768\n')
    }
    const k = new Kernel({ image: guestImage(), memorySize: 32 * MIB })
    // proc_dointvec_minmax's bounds: pid_max from RESERVED_PIDS + 1 to 4M, threads-max from 20.
    expect(k.sysctls.set('kernel.pid_max', '300')).toBe(-22)
    expect(k.sysctls.set('kernel.pid_max', '4194305')).toBe(-22)
    expect(k.sysctls.set('kernel.pid_max', 'many')).toBe(-22)
    expect(k.sysctls.set('kernel.threads-max', '19')).toBe(-22)
    expect(k.sysctls.set('kernel.pid_max', '301\n')).toBe(0)
  })

  it('pids wrap round below pid_max to RESERVED_PIDS (300), skipping those in use', () => {
    const r = runGuest(program, ['/bin/hostile', 'pidwrap', '500'], {
      memorySize: 32 * MIB,
      setup: (k) => {
        expect(k.sysctls.set('kernel.pid_max', '400')).toBe(0)
      },
    })
    // Children get 2..399, then 300..399 again, then 300 on: pid 1 (the parent) is never handed out.
    expect(r.stdout).toBe('500 forks: 2 wrap-arounds, highest pid 399, first after a wrap 300\n')
    expect(r.status).toBe(0)
  })
})

describe('unbounded recursion', () => {
  it.each([[[]], [['1024']]])(
    'dies of SIGSEGV at RLIMIT_STACK, with the stack bounded by it (%j)',
    (limit) => {
      const r = runGuest(program, ['/bin/hostile', 'recurse', ...limit], { memorySize: 32 * MIB })
      expect(r.status).toBe(128 + 11)
      expect(r.stdout).toBe(`RLIMIT_STACK ${limit[0] ?? 8192} KiB\n`)
      const log = r.kernel.printk.text()
      expect(log).toMatch(/hostile\[1\]: segfault at [0-9a-f]+ ip [0-9a-f]+ sp [0-9a-f]+ error 6/)
      expect(log).not.toMatch(/Out of memory/)
    },
  )

  it.each([[[]], [['1024']], [['300']]])(
    'a SIGSEGV handler on an alternate stack sees the fault at the limit (%j)',
    (limit) => {
      const r = runGuest(program, ['/bin/hostile', 'stackdepth', ...limit], { memorySize: 32 * MIB })
      expect(r.stdout).toBe(
        `RLIMIT_STACK ${limit[0] ?? 8192} KiB\nsignal SIGSEGV, si_code SEGV_MAPERR, fault at the stack limit: yes\n`,
      )
      expect(r.status).toBe(0)
    },
  )

  it('a limit above the old fixed 8 MiB lets the stack grow further', () => {
    const r = runGuest(program, ['/bin/hostile', 'stackdepth', '16384'], { memorySize: 48 * MIB })
    expect(r.stdout).toBe(
      'RLIMIT_STACK 16384 KiB\nsignal SIGSEGV, si_code SEGV_MAPERR, fault at the stack limit: yes\n',
    )
  })

  it.runIf(onHost)('ends as the native run does', () => {
    for (const args of [['recurse'], ['recurse', '1024'], ['stackdepth', '300'], ['stackdepth']]) {
      const emulated = runGuest(program, ['/bin/hostile', ...args], { memorySize: 32 * MIB })
      expect({ stdout: emulated.stdout, status: emulated.status }).toEqual(native(args))
    }
  })
})

describe('descriptors and /dev/zero', () => {
  it('100 000 open/close, dup/close and pipe/close cycles reuse the numbers and leave memory as it was', () => {
    const run = start(['openclose', '100000'])
    const used: number[] = []
    let exit = null
    while (!exit) {
      exit = run.kernel.run(20_000_000).exit
      used.push(run.kernel.machine.frames.used)
    }
    expect(run.output()).toBe(
      '100000 cycles, descriptors reused every time: yes\nlowest free after: the same\n',
    )
    expect(exit.status).toBe(0)
    // While it ran, the frames in use did not move (its struct files and pipes are freed and reused).
    const running = used.slice(0, -1)
    expect(running.length).toBeGreaterThan(2)
    expect(Math.max(...running) - Math.min(...running)).toBe(0)
  }, 120_000)

  it('reading /dev/zero for ever stops at the budget, the memory in use flat all the way', () => {
    const run = start(['devzero', '0'])
    const used: number[] = []
    for (let i = 0; i < 4; i++) {
      expect(run.kernel.run(10_000_000).exit).toBeNull()
      used.push(run.kernel.machine.frames.used)
    }
    expect(new Set(used.slice(1)).size).toBe(1)
    expect(run.kernel.init?.state).not.toBe('zombie')
  }, 120_000)

  it('an endless loop runs out of its instruction budget without exiting', () => {
    const r = runGuest(program, ['/bin/hostile', 'loop'], { maxInstructions: 5_000_000 })
    expect(r.status).toBeNull()
    expect(r.detail).toMatch(/budget|instructions/)
  })

  it.runIf(onHost)('prints what the native run prints', () => {
    for (const args of [
      ['openclose', '1000'],
      ['devzero', '64'],
    ]) {
      const emulated = runGuest(program, ['/bin/hostile', ...args], { memorySize: 32 * MIB })
      expect({ stdout: emulated.stdout, status: emulated.status }).toEqual(native(args))
    }
  })
})

describe('escapes from the tree the guest was given', () => {
  const SECRET = 'TOP-SECRET-7f3a9c'
  const top = mkdtempSync(join(tmpdir(), 'probekit-hostile-'))
  const given = join(top, 'given')
  const secret = join(top, 'secret')
  writeFileSync(secret, `${SECRET}\n`)
  mkdirSync(join(given, 'sub'), { recursive: true })
  mkdirSync(join(given, 'emptydir'))
  writeFileSync(join(given, 'inner.txt'), 'inner\n')
  writeFileSync(join(given, 'sub/deep.txt'), 'deep\n')
  writeFileSync(join(given, 'big.txt'), '0123456789\n')
  writeFileSync(join(given, 'victim.txt'), 'victim\n')
  // The host's own symlinks pointing out of the tree, and a loop.
  symlinkSync('../secret', join(given, 'link-rel'))
  symlinkSync(secret, join(given, 'link-abs'))
  symlinkSync('../../../../../../secret', join(given, 'link-up'))
  symlinkSync('..', join(given, 'dirlink'))
  symlinkSync('loop-b', join(given, 'loop-a'))
  symlinkSync('loop-a', join(given, 'loop-b'))
  afterAll(() => rmSync(top, { recursive: true, force: true }))

  /** Every entry under top: kind, bytes or target, mode and mtime (what a write would change). */
  function snapshot(dir = top): Record<string, string> {
    const out: Record<string, string> = {}
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      const st = lstatSync(p)
      const what = st.isSymbolicLink()
        ? `-> ${readlinkSync(p)}`
        : st.isDirectory()
          ? 'dir'
          : readFileSync(p).toString('hex')
      out[p] = `${what} ${st.mode.toString(8)} ${st.mtimeMs} ${st.nlink}`
      if (st.isDirectory() && !st.isSymbolicLink()) Object.assign(out, snapshot(p))
    }
    out[dir] = `${lstatSync(dir).mtimeMs}`
    return out
  }

  function tryEscapes(mount: 'subdirectory' | 'root') {
    const before = snapshot()
    const dir = mount === 'root' ? '/' : '/mnt/given'
    const run = start(['escape', dir, secret], 32 * MIB, (k) => {
      // Writable as probekit run mounts the host: writes change an in-memory layer only.
      if (mount === 'root')
        k.vfs.mountHost('/', nodeHostDirectory(given), { readOnly: false, hide: ['/dev', '/proc', '/sys'] })
      else k.vfs.mountHost(dir, nodeHostDirectory(given), { readOnly: false })
    })
    const { exit } = run.kernel.run(2_000_000_000)
    expect(exit?.status).toBe(0)
    expect(snapshot()).toEqual(before)
    return run.output()
  }

  const blocked = [
    'read DIR/../secret: ENOENT',
    'read DIR/../../../../../../../../secret: ENOENT',
    'read /../../../secret: ENOENT',
    'read SECRET: ENOENT',
    'read DIR/../../..SECRET: ENOENT',
    'read DIR/link-rel (-> ../secret): ENOENT',
    'read DIR/link-abs (-> SECRET): ENOENT',
    'read DIR/link-up (-> ../../../../../../secret): ENOENT',
    'read DIR/dirlink/secret (dirlink -> ..): ENOENT',
    'read DIR/loop-a (loop-a -> loop-b -> loop-a): ELOOP',
    'read DIR/mk-rel: ENOENT',
    'read DIR/mk-abs: ENOENT',
    'read DIR/mk-proc: ENOENT',
    'read DIR/mk-self: ELOOP',
    'open DIR/mk-rel O_NOFOLLOW: ELOOP',
    'read /proc/self/root/SECRET: ENOENT',
    'read /proc/self/root/../../secret: ENOENT',
    'read /proc/self/cwd/../secret: ENOENT',
    'read ../secret from DIR: ENOENT',
    'openat(DIR, ../secret): ENOENT',
    'openat(DIR, ../../../../secret): ENOENT',
    'openat(DIR, SECRET): ENOENT',
    'read /proc/self/fd/DIRFD/../secret: ENOENT',
    'read ../secret after fchdir: ENOENT',
    'read ../../../../secret after fchdir: ENOENT',
    'openat(O_PATH DIR, ../secret): ENOENT',
    'read on an O_PATH fd: opened, read EBADF',
    'write on an O_PATH fd: EBADF',
    // chroot(2) into DIR, then the classic way out (chroot into a subdirectory with the cwd left
    // above it, climb, chroot("."): as on Linux it leaves DIR, but not the tree the guest was given.
    'chroot: read /../secret: ENOENT',
    'chroot: read SECRET: ENOENT',
    'chroot: read SECRET after climbing: ENOENT',
  ]
  // What the guest was given it may read, and change - in its own view.
  const allowed = [
    'read DIR/inner.txt: read "inner."',
    'read /proc/self/cwd/inner.txt: read "inner."',
    'openat(DIR, inner.txt): read "inner."',
    'read /proc/self/fd/DIRFD/inner.txt: read "inner."',
    'reopen an O_PATH fd through /proc/self/fd: read "inner."',
    'write DIR/inner.txt: ok',
    'read DIR/inner.txt again: read "pwned."',
    'unlink DIR/victim.txt: ok',
    'rmdir DIR/emptydir: ok',
    'rename DIR/sub/deep.txt -> DIR/moved.txt: ok',
    'create through DIR/link-rel: ok',
    'read DIR/link-rel after: read "planted."',
    'chroot DIR: ok',
    'chdir / in the chroot: ok',
    'chroot: read /inner.txt: read "inner."',
    'chroot /jail with cwd outside it: ok',
    'chroot . after climbing: ok',
  ]

  it.each(['subdirectory', 'root'] as const)(
    'mounted as a %s: every way out fails, nothing outside is read, no host file changes',
    (mount) => {
      const out = tryEscapes(mount)
      expect(out).not.toContain(SECRET)
      const lines = out.split('\n')
      for (const line of [...blocked, ...allowed]) expect(lines).toContain(line)
      // Nothing the program tried crashed it or the kernel: it got to its last attempt.
      expect(lines).toContain('create DIR/new.txt: ok')
      // Out of the chroot, up to the root of what was given: DIR's inner.txt is there when DIR is that root.
      expect(lines).toContain(
        mount === 'root'
          ? 'chroot: read inner.txt after climbing: read "inner."'
          : 'chroot: read inner.txt after climbing: ENOENT',
      )
    },
  )
})
