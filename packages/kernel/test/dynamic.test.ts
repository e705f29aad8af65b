// The host's dynamically linked programs run under the kernel as they do
// natively: binfmt_elf maps the program and its interpreter (ld.so), ld.so
// maps the shared libraries from the page cache, and the guest sees the
// host's files through an in-memory layer that no guest write gets past.
// Scripts run through their #! interpreter. The native run is the oracle;
// a test whose program is not on this host is skipped, saying so.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Kernel, RegularFile, type Task } from '../src/index.js'
import { nodeHostDirectory } from './support/host-directory.js'
import { guestImage } from './support/run.js'

const LDSO = '/lib64/ld-linux-x86-64.so.2'
const dynamic = process.platform === 'linux' && process.arch === 'x64' && existsSync(LDSO)
const have = (p: string) => dynamic && existsSync(p)
// HOME nowhere: a bash whose stdin is a socket (node's pipes) would read ~/.bashrc natively.
const ENV = ['PATH=/usr/bin:/bin', 'LC_ALL=C', 'HOME=/nonexistent']

/**
 * Boot with the host's files under an in-memory layer, as `probekit run` does by default
 * (the host's /etc/passwd and /etc/group replace the kernel's root-only ones).
 */
function boot(stdin = '') {
  let stdout = ''
  let stderr = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    memorySize: 256 * 1024 * 1024,
    stdout: (d) => {
      stdout += dec.decode(d)
    },
    stderr: (d) => {
      stderr += dec.decode(d)
    },
    stdin: new TextEncoder().encode(stdin),
  })
  k.vfs.mountHost('/', nodeHostDirectory('/'), { readOnly: false, hide: ['/dev', '/proc', '/sys'] })
  k.boot()
  return { k, out: () => ({ stdout, stderr }) }
}

function emulated(argv: string[], options: { stdin?: string; cwd?: string } = {}) {
  const { k, out } = boot(options.stdin)
  k.spawn(argv[0], argv, ENV, { cwd: options.cwd ?? '/' })
  const { exit, result } = k.run(20_000_000_000)
  return { ...out(), status: exit?.status ?? -1, detail: result.detail, k }
}

function native(argv: string[], options: { stdin?: string; cwd?: string } = {}) {
  const r = spawnSync(argv[0], argv.slice(1), {
    input: options.stdin ?? '',
    encoding: 'utf8',
    env: Object.fromEntries(ENV.map((e) => e.split('=') as [string, string])),
    cwd: options.cwd ?? '/',
  })
  return { stdout: r.stdout, stderr: r.stderr, status: r.status ?? -1 }
}

const cases: { name: string; argv: string[]; stdin?: string }[] = [
  { name: 'ls', argv: ['/usr/bin/ls', '/usr/share/doc/bash'] },
  { name: 'ls -a of a directory with symlinks', argv: ['/usr/bin/ls', '-a', '/lib64'] },
  { name: 'cat', argv: ['/usr/bin/cat', '/etc/shells', '/etc/hostname'] },
  { name: 'sort -r', argv: ['/usr/bin/sort', '-r', '/etc/shells'] },
  { name: 'sha256sum', argv: ['/usr/bin/sha256sum', '/etc/shells', '/usr/bin/ls'] },
  { name: 'wc', argv: ['/usr/bin/wc', '/etc/passwd', '/etc/group'] },
  { name: 'head', argv: ['/usr/bin/head', '-n', '3', '/etc/services'] },
  { name: 'tr from stdin', argv: ['/usr/bin/tr', 'a-z', 'A-Z'], stdin: 'dynamically linked\n' },
  { name: 'date -u -d @0', argv: ['/usr/bin/date', '-u', '-d', '@0'] },
  { name: 'grep -c', argv: ['/usr/bin/grep', '-c', 'root', '/etc/passwd'] },
  { name: 'grep without a match exits 1', argv: ['/usr/bin/grep', 'no-such-user-here', '/etc/passwd'] },
  { name: 'sed', argv: ['/usr/bin/sed', '-n', '-e', 's/bin/BIN/p', '/etc/shells'] },
  { name: 'awk', argv: ['/usr/bin/awk', '-F:', '{ n += 1 } END { print n, $1 }', '/etc/passwd'] },
  {
    name: 'bash -c with builtins, expansions and a subshell',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    argv: ['/bin/bash', '-c', 'x=$(echo sub); echo "$x ${#x} $((6*7))"; (exit 3); echo $?'],
  },
  {
    name: 'a bash pipeline of dynamic programs',
    argv: ['/bin/bash', '-c', 'ls /usr/bin | sort | head -5 | wc -l'],
  },
  {
    name: 'head -c of /dev/zero through od',
    argv: [
      '/bin/bash',
      '-c',
      'head -c 16 /dev/zero | od -An -tx1; head -c 8 /dev/urandom | wc -c; echo x > /dev/null; echo $?',
    ],
  },
  { name: 'bash with a missing command', argv: ['/bin/bash', '-c', 'no-such-command-xyz; echo "status $?"'] },
  // The host's owners, groups, link counts, sizes (directories' too) and blocks (ls's total); long-iso
  // dates are the files' own, not the guest clock's. /etc/mtab is a symlink, shown as one.
  {
    name: 'ls -ln of /etc: owners, link counts, sizes and blocks',
    argv: ['/usr/bin/ls', '-ln', '--time-style=long-iso', '/etc'],
  },
  {
    name: "ls -l of /etc: owner and group names from the host's /etc/passwd and /etc/group",
    argv: ['/usr/bin/ls', '-l', '--time-style=long-iso', '/etc'],
  },
  {
    name: 'stat -c of host files, directories and a symlink',
    argv: [
      '/usr/bin/stat',
      '-c',
      '%n %u %g %h %s %b %F %A',
      '/',
      '/etc',
      '/etc/shadow',
      '/etc/passwd',
      '/etc/alternatives',
      '/etc/mtab',
      '/usr/bin/ls',
      '/usr/share/doc',
      '/usr/lib/x86_64-linux-gnu',
    ],
  },
]

describe.skipIf(!dynamic)(`dynamically linked programs (${LDSO})`, () => {
  for (const c of cases) {
    it.runIf(have(c.argv[0]))(`${c.name} prints and exits as natively`, () => {
      const want = native(c.argv, c)
      const got = emulated(c.argv, c)
      expect({ stdout: got.stdout, stderr: got.stderr, status: got.status }, got.detail).toEqual(want)
    })
  }

  it.runIf(have('/bin/bash'))(
    "processes running bash share libc's text frames; libc's written data pages are each one's own",
    () => {
      const { k } = boot()
      // What each process maps as it begins to exit (before its memory goes): libc's text and data frames.
      const seen = new Map<number, { text: number; data: number; file: unknown }>()
      const tracer = {
        reportExit: (t: Task) => {
          const libc = t.mm.vmas.filter((v) => v.name.includes('libc.so') && v.file)
          const text = libc.find((v) => (v.prot & 4) !== 0)!
          const data = libc.find((v) => (v.prot & 2) !== 0)!
          seen.set(t.pid, {
            text: t.mm.space.lookup(text.start)!.frame,
            data: t.mm.space.lookup(data.start)?.frame ?? -1,
            file: text.file,
          })
        },
      }
      // bash runs a second bash (fork, then execve: a fresh address space that maps libc on its own).
      const a = k.spawn('/bin/bash', ['bash', '-c', '/bin/bash -c "exit 0"; exit 0'], ENV)
      k.tracehooks.attach(a, {
        ...tracer,
        reportClone: (_p: Task, child: Task) => k.tracehooks.attach(child, tracer),
      })
      expect(k.run(2_000_000_000).exit?.status).toBe(0)
      expect(seen.size).toBe(2)
      const [sa, sb] = [...seen.values()]
      expect(sa.file).toBeInstanceOf(RegularFile)
      expect(sb.file).toBe(sa.file)
      expect(sa.text).toBe(sb.text)
      // ld.so's relocations wrote libc's data: each process has its own copy.
      expect(sa.data).toBeGreaterThan(0)
      expect(sa.data).not.toBe(sb.data)
    },
  )

  it.runIf(have('/usr/bin/od'))(
    "/dev/urandom is the kernel's seeded stream: two runs read the same bytes",
    () => {
      const argv = ['/usr/bin/od', '-An', '-tx1', '-N16', '/dev/urandom']
      const first = emulated(argv)
      expect(first.stdout).toMatch(/^( [0-9a-f]{2}){16}\n$/)
      expect(emulated(argv).stdout).toBe(first.stdout)
    },
  )

  it.runIf(have('/usr/bin/cat'))(
    '/proc/self/maps of a dynamic program lists it, ld.so, libc, [heap] and [stack] with their permissions and offsets',
    () => {
      const { stdout, status } = emulated(['/usr/bin/cat', '/proc/self/maps'])
      expect(status).toBe(0)
      const line = (re: RegExp) => stdout.split('\n').find((l) => re.test(l))
      // The program's text: r-xp at its file offset; ld.so's and libc's text likewise.
      expect(line(/^5555[0-9a-f]+-[0-9a-f]+ r-xp [0-9a-f]{8} \d\d:\d\d \d+ +\/usr\/bin\/cat$/)).toBeDefined()
      expect(line(/ r-xp [0-9a-f]{8} \d\d:\d\d \d+ +\/.*ld-linux-x86-64\.so\.2$/)).toBeDefined()
      expect(line(/ r-xp [0-9a-f]{8} \d\d:\d\d \d+ +\/.*libc\.so\.6$/)).toBeDefined()
      expect(line(/ rw-p [0-9a-f]{8} \d\d:\d\d \d+ +\/.*libc\.so\.6$/)).toBeDefined()
      expect(line(/ rw-p 00000000 00:00 0 +\[heap\]$/)).toBeDefined()
      expect(line(/ rw-p 00000000 00:00 0 +\[stack\]$/)).toBeDefined()
    },
  )

  it('a #! script runs its interpreter with the optional argument and its own path; a file without x is EACCES', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probekit-script-'))
    const script = join(dir, 'args.sh')
    writeFileSync(script, '#!/bin/bash -e\necho "$0 | $*"\nfalse\necho not reached\n', { mode: 0o755 })
    const r = emulated([script, 'one', 'two'])
    expect({ stdout: r.stdout, status: r.status }).toEqual({ stdout: `${script} | one two\n`, status: 1 })
    writeFileSync(join(dir, 'plain.sh'), '#!/bin/sh\necho hi\n', { mode: 0o644 })
    const denied = emulated(['/bin/bash', '-c', `${join(dir, 'plain.sh')}; echo "status $?"`])
    expect(denied.stdout).toBe('status 126\n')
    expect(denied.stderr).toMatch(/Permission denied/)
    writeFileSync(join(dir, 'nointerp.sh'), '#!/no/such/interpreter\n', { mode: 0o755 })
    const missing = emulated(['/bin/bash', '-c', `${join(dir, 'nointerp.sh')}; echo "status $?"`])
    expect(missing.stdout).toBe('status 127\n')
    expect(missing.stderr).toMatch(
      /nointerp\.sh: (cannot execute: required file not found|.*bad interpreter)/,
    )
  })

  it.runIf(have('/bin/bash') && existsSync('/etc/shadow'))(
    "a copied-up host file keeps the host's owner and group, its blocks are the copy's; a new file is root's",
    () => {
      const host = statSync('/etc/shadow')
      const r = emulated([
        '/bin/bash',
        '-c',
        'head -c 5000 /dev/zero >> /etc/shadow && echo > /tmp/new-file && stat -c "%u %g %h %s %b" /etc/shadow /tmp/new-file',
      ])
      const size = host.size + 5000
      expect(r.stdout).toBe(
        `${host.uid} ${host.gid} ${host.nlink} ${size} ${Math.ceil(size / 4096) * 8}\n0 0 1 1 8\n`,
      )
    },
  )

  it('no guest write reaches the host: write, rename, delete and truncate in a host directory change only the guest view', () => {
    const dir = mkdtempSync(join(tmpdir(), 'probekit-overlay-'))
    writeFileSync(join(dir, 'keep.txt'), 'original\n')
    writeFileSync(join(dir, 'gone.txt'), 'delete me\n')
    const before = readdirSync(dir).map((n) => [
      n,
      readFileSync(join(dir, n), 'utf8'),
      statSync(join(dir, n)).mode,
    ])
    const r = emulated(
      [
        '/bin/bash',
        '-c',
        'echo changed > keep.txt && echo new > new.txt && rm gone.txt && mv new.txt moved.txt && : > keep.txt && mkdir sub && ls && wc -c keep.txt',
      ],
      { cwd: dir },
    )
    expect(r.stdout).toBe('keep.txt\nmoved.txt\nsub\n0 keep.txt\n')
    expect(r.status).toBe(0)
    const after = readdirSync(dir).map((n) => [
      n,
      readFileSync(join(dir, n), 'utf8'),
      statSync(join(dir, n)).mode,
    ])
    expect(after).toEqual(before)
  })
})
