// probekit run --strace: a syscall tracer built on utrace engines, compared
// with the real strace -f running every fixture program natively (skipped,
// saying why, where strace is not installed). The calls that completed are
// the same, by name and count; the same set where native timing decides
// the counts (threads, a child killed mid-way); and the lines strace prints
// for a deterministic call are the same text.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixtureDir = fileURLToPath(new URL('../../kernel/fixtures/bin/', import.meta.url))
const fixture = (name: string) => `${fixtureDir}${name}`
const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p))
const BUSYBOX = '/bin/busybox'
const staticBusybox =
  existsSync(BUSYBOX) && !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
const native = process.platform === 'linux' && process.arch === 'x64'
if (!STRACE) console.warn('strace is not installed: the comparisons with native strace -f are skipped')

/** Calls served by the vDSO natively (no syscall) are real syscalls here: there is no vDSO. */
const VDSO = new Set(['clock_gettime', 'gettimeofday', 'time', 'getcpu'])

function probekit(args: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
    cwd,
    // Both runs read /dev/null: what stdin is (node's socket pair, a terminal) is not the program's doing.
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Emulated: the strace lines of a run (--strace-file), and its stdout. */
function emulated(argv: string[], extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-strace-'))
  const file = join(dir, 'trace')
  const r = probekit(['--isolated', '--strace-file', file, ...extra, ...argv], dir)
  return {
    ...r,
    lines: readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  }
}

/** Native: strace -f's lines (without the program's own execve, which probekit run does not make). */
function straced(argv: string[], extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-native-'))
  const file = join(dir, 'trace')
  const r = spawnSync(STRACE as string, ['-f', '-q', '-o', file, ...extra, ...argv], {
    encoding: 'utf8',
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^\d+ +/, ''))
  return { stdout: r.stdout, lines: lines.slice(lines[0]?.startsWith('execve(') ? 1 : 0) }
}

/** The names of the calls that returned (a '= ?' call was cut short by the task's end or a signal). */
function completed(lines: readonly string[]): string[] {
  const names: string[] = []
  for (const raw of lines) {
    const l = raw.replace(/^\[pid +\d+\] /, '')
    const m = /^(?:<\.\.\. )?([a-z_0-9]+)(?:\(| resumed>)/.exec(l)
    if (!m || l.endsWith('<unfinished ...>') || / = \?( |$)/.test(l)) continue
    if (!VDSO.has(m[1])) names.push(m[1])
  }
  return names.sort()
}

describe('probekit run --strace', () => {
  it('prints each call as strace does, the program output untouched, and the exit', () => {
    const r = probekit(['--strace', fixture('hello')])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('hello, world\n')
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines).toContain(
      'writev(1, [{iov_base="hello, world", iov_len=12}, {iov_base="\\n", iov_len=1}], 2) = 13',
    )
    expect(lines.slice(-2)).toEqual(['exit_group(0)                           = ?', '+++ exited with 0 +++'])
  })

  it('-e trace= filters the calls (signals and exits still print); --json gives one object per call', () => {
    const r = emulated([fixture('hello')], ['-e', 'trace=writev,exit_group'])
    expect(r.lines.map((l) => l.replace(/\(.*/, ''))).toEqual([
      'writev',
      'exit_group',
      '+++ exited with 0 +++',
    ])
    const j = emulated([fixture('hello')], ['--json', '-e', 'trace=writev'])
    const objects = j.lines.map((l) => JSON.parse(l))
    expect(objects[0]).toMatchObject({ pid: 1, syscall: 'writev', retval: 13 })
    expect(objects[0].text).toMatch(/^writev\(1, \[\{iov_base="hello, world"/)
    expect(objects.at(-1)).toEqual({ pid: 1, exit: { code: 0 } })
    expect(probekit(['-e', 'trace=nosuchcall', fixture('hello')])).toMatchObject({
      code: 2,
      stderr: "probekit: -e trace=nosuchcall: invalid system call 'nosuchcall'\n",
    })
  })

  it('a process tree: [pid N] prefixes once there are several tasks, children followed from their first call, signals and exits', () => {
    const r = emulated([fixture('proctree')])
    expect(r.code).toBe(0)
    expect(r.lines.some((l) => /^\[pid +\d+\] (fork|clone)\(/.test(l))).toBe(true)
    expect(r.lines).toContainEqual(expect.stringMatching(/^\[pid +\d+\] \+\+\+ exited with 7 \+\+\+$/))
    expect(r.lines).toContainEqual(expect.stringMatching(/^(\[pid +\d+\] )?\+\+\+ killed by SIGTERM \+\+\+$/))
    // si_status: the exit code for CLD_EXITED (child 0's _exit(7)), the signal for CLD_KILLED.
    expect(r.lines).toContainEqual(
      expect.stringMatching(
        /--- SIGCHLD \{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=\d+, si_uid=0, si_status=7, /,
      ),
    )
    expect(r.lines).toContainEqual(
      expect.stringMatching(
        /--- SIGCHLD \{si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=\d+, si_uid=0, si_status=SIGTERM, /,
      ),
    )
  })

  describe.skipIf(!STRACE || !native)('against native strace -f, every fixture program', () => {
    // How far a child gets before a SIGKILL, how often a futex waits, or how a parent's and a child's
    // output interleave depends on the host's timing natively: for these the same set of calls, not
    // the same counts, and the same output lines.
    const timing = (name: string) =>
      ['proctree', 'shellcalls', 'linuxabi-musl-O2'].includes(name) || name.startsWith('threads')
    // glibc's linuxabi reads /sys/devices/system/cpu/possible natively; the guest has no /sys.
    const environment: Record<string, string> = {
      'linuxabi-glibc-O2': 'reads /sys/devices/system/cpu/possible natively; the guest has no /sys',
    }
    for (const name of readdirSync(fixtureDir).sort()) {
      it.skipIf(name in environment)(
        `${name}: the same completed calls${timing(name) ? ' (as a set)' : ''}`,
        () => {
          const argv = [fixture(name)]
          const n = straced(argv)
          const e = emulated(argv)
          // A parent and its children writing to one pipe interleave as the host schedules them natively.
          const lines = (out: string) => (timing(name) ? out.split('\n').sort() : out)
          expect(lines(e.stdout)).toEqual(lines(n.stdout))
          // The guest's stdout is the kernel's console, a character device where the native run has a
          // pipe, so glibc's isatty probe (ioctl TCGETS) is one call more: not counted on either side.
          const calls = (lines: string[]) => completed(lines).filter((c) => c !== 'ioctl')
          if (timing(name)) expect([...new Set(calls(e.lines))]).toEqual([...new Set(calls(n.lines))])
          else expect(calls(e.lines)).toEqual(calls(n.lines))
        },
      )
    }

    it.skipIf(!staticBusybox)('busybox cat of a missing file: the same lines, errno and all', () => {
      const argv = [BUSYBOX, 'cat', '/no/such/file']
      const filter = ['-e', 'trace=openat,write,exit_group']
      const n = straced(argv, filter)
      const e = emulated(argv, filter)
      // strace pads to the result column counting its pid prefix: compare with the padding folded.
      const fold = (lines: string[]) => lines.map((l) => l.replace(/ +=/, ' ='))
      expect(fold(e.lines)).toEqual(fold(n.lines))
      expect(e.lines).toContain(
        'openat(AT_FDCWD, "/no/such/file", O_RDONLY) = -1 ENOENT (No such file or directory)',
      )
    })
  })
})
