// /proc (src/fs/proc/): real guest programs read it as they read Linux's.
// fixtures/procfs.c prints its own /proc/self/maps, links, fd/, stat,
// status, cmdline, environ and auxv, and those of a child it forks and
// execs; the lines are checked against what the kernel mapped (the ELF's
// segments, the heap and mappings the program made, the stack), against
// Linux's formats, and, on an x86-64 Linux host, against the same program
// run natively (the oracle for the format). Debian's busybox-static reads
// /proc/self/status, /proc/self/fd, /proc/cpuinfo and /proc/meminfo when
// installed at /bin/busybox; those tests are skipped, with the reason,
// otherwise.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { cpuid } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { Kernel, OpenFile, PF_W, PF_X, PT_LOAD, parseElf, RegularFile } from '../src/index.js'
import { guestImage, runGuest } from './support/run.js'

const FIXTURE = new URL('../fixtures/bin/procfs', import.meta.url)
const program = new Uint8Array(readFileSync(FIXTURE))
const onHost = process.platform === 'linux' && process.arch === 'x64'
const BUSYBOX = '/bin/busybox'
const busybox =
  onHost && existsSync(BUSYBOX) && !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))
if (!busybox) console.warn(`procfs busybox tests skipped: no static ${BUSYBOX} on an x86-64 Linux host`)

const PAGE = 4096

/**
 * show_map_vma's line: "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " and, for a named mapping, spaces
 * to column 73 and the name.
 */
const MAPS_LINE =
  /^([0-9a-f]{8,})-([0-9a-f]{8,}) ([r-][w-][x-][ps]) ([0-9a-f]{8,}) ([0-9a-f]{2}):([0-9a-f]{2}) (\d+) (?: *(\S.*))?$/

interface MapsLine {
  start: number
  end: number
  perms: string
  offset: number
  dev: string
  ino: number
  name: string
}

function parseMaps(text: string): MapsLine[] {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => {
      const m = MAPS_LINE.exec(line)
      expect(m, line).not.toBeNull()
      const [, start, end, perms, offset, major, minor, ino, name = ''] = m as RegExpExecArray
      // The name starts at column 73 (seq_setwidth 25 + 6 * 8 - 1, then seq_pad's space).
      if (name !== '') expect(line.indexOf(name, 50), line).toBe(73)
      else expect(line.endsWith(`${ino} `), line).toBe(true)
      return {
        start: Number.parseInt(start, 16),
        end: Number.parseInt(end, 16),
        perms,
        offset: Number.parseInt(offset, 16),
        dev: `${major}:${minor}`,
        ino: Number(ino),
        name,
      }
    })
}

/** The addresses `procfs maps` reports on its first line. */
function addresses(line: string): Record<string, number> {
  return Object.fromEntries(
    [...line.matchAll(/(\w+)=0x([0-9a-f]+)/g)].map(([, k, v]) => [k, Number.parseInt(v, 16)]),
  )
}

const covering = (lines: MapsLine[], addr: number) => lines.filter((l) => l.start <= addr && addr < l.end)

/** What `procfs self` printed after "label: ", NULs as \0. */
const field = (out: string, label: string) => out.match(new RegExp(`^${label}: (.*)$`, 'm'))?.[1]

function native(args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync(FIXTURE.pathname, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  expect(r.status, r.stderr).toBe(0)
  return r.stdout
}

/** A /proc file read from the host (no task asks, so no /proc/self), as a guest's read(2) reads it. */
function hostRead(k: Kernel, path: string): Uint8Array {
  const node = k.vfs.lookup(path)
  if (typeof node === 'number') throw new Error(`${path}: ${node}`)
  const f = new OpenFile(node, 0, path)
  const parts: number[] = []
  for (;;) {
    const r = f.read(64)
    if (!(r instanceof Uint8Array)) throw new Error(`${path}: read gave ${String(r)}`)
    if (r.length === 0) return Uint8Array.from(parts)
    parts.push(...r)
  }
}

/** The keys of "Key:\tvalue" lines (status) or "key\t: value" lines (cpuinfo), in order. */
const keys = (text: string, sep: RegExp) =>
  text
    .split('\n')
    .filter((l) => sep.test(l))
    .map((l) => l.split(sep)[0])

/** a's items appear in b in the same order. */
function isSubsequence(a: string[], b: string[]): boolean {
  let i = 0
  for (const x of b) if (x === a[i]) i++
  return i === a.length
}

describe('/proc read by guest programs', () => {
  it("/proc/self/maps: Linux's line format, the ELF's segments, [heap], the program's own mappings, [stack]", () => {
    const r = runGuest(program, ['procfs', 'maps'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    const [first, ...rest] = r.stdout.split('\n')
    const at = addresses(first)
    const lines = parseMaps(rest.join('\n'))
    const exe = r.kernel.vfs.lookup('/bin/procfs')
    if (!(exe instanceof RegularFile)) throw new Error('no /bin/procfs')
    // binfmt_elf's mappings of the PT_LOAD segments: page-rounded, private, at the segment's file offset.
    const segments = parseElf(program).programHeaders.filter((ph) => ph.type === PT_LOAD)
    expect(lines.slice(0, segments.length)).toEqual(
      segments.map((ph) => ({
        start: Math.floor(ph.vaddr / PAGE) * PAGE,
        end: Math.ceil((ph.vaddr + ph.memsz) / PAGE) * PAGE,
        perms: `r${ph.flags & PF_W ? 'w' : '-'}${ph.flags & PF_X ? 'x' : '-'}p`,
        offset: ph.offset - (ph.vaddr % PAGE),
        dev: '00:01',
        ino: r.kernel.vfs.inoOf(exe),
        name: '/bin/procfs',
      })),
    )
    expect(covering(lines, at.main)).toMatchObject([{ perms: 'r-xp', name: '/bin/procfs' }])
    // The heap grew twice (two brk calls): one [heap] line, as vma_merge leaves it.
    expect(lines.filter((l) => l.name === '[heap]')).toEqual([
      {
        start: at.heap,
        end: at.heap + 3 * PAGE,
        perms: 'rw-p',
        offset: 0,
        dev: '00:00',
        ino: 0,
        name: '[heap]',
      },
    ])
    expect(covering(lines, at.anon)).toEqual([
      { start: at.anon, end: at.anon + 2 * PAGE, perms: 'rw-p', offset: 0, dev: '00:00', ino: 0, name: '' },
    ])
    // Its own file, opened through /proc/self/exe and mapped at file offset 4096.
    expect(covering(lines, at.file)).toEqual([
      {
        start: at.file,
        end: at.file + PAGE,
        perms: 'r--p',
        offset: PAGE,
        dev: '00:01',
        ino: r.kernel.vfs.inoOf(exe),
        name: '/bin/procfs',
      },
    ])
    expect(covering(lines, at.stack)).toMatchObject([{ perms: 'rw-p', name: '[stack]', offset: 0, ino: 0 }])
    // In address order, not overlapping.
    lines.slice(1).forEach((l, i) => {
      expect(l.start).toBeGreaterThanOrEqual(lines[i].end)
    })
  })

  it.runIf(onHost)(
    '/proc/self/maps: the same lines for the program, its heap and mappings as native Linux',
    () => {
      const emulated = runGuest(program, ['procfs', 'maps']).stdout.split('\n')
      const host = native(['maps']).split('\n')
      const view = (out: string[], path: string) => {
        const at = addresses(out[0])
        const lines = parseMaps(out.slice(1).join('\n'))
        const shape = (l: MapsLine | undefined) =>
          l && { size: l.end - l.start, perms: l.perms, offset: l.offset }
        return {
          // The segments are at fixed addresses (not PIE); the rest may move, so compare sizes.
          segments: lines
            .filter((l) => l.name === path && l.end <= 0x1000000)
            .map(({ start, end, perms, offset }) => ({ start, end, perms, offset })),
          heap: shape(lines.find((l) => l.name === '[heap]')),
          anon: shape(covering(lines, at.anon)[0]),
          file: shape(covering(lines, at.file)[0]),
          fileNamed: covering(lines, at.file)[0]?.name === path,
          stack: covering(lines, at.stack)[0]?.name,
        }
      }
      expect(view(emulated, '/bin/procfs')).toEqual(view(host, FIXTURE.pathname))
    },
  )

  it('/proc/PID/maps read from the host lists each VMA of a spawned task', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
    k.vfs.writeFile('/bin/procfs', program)
    k.boot()
    const task = k.spawn('/bin/procfs', ['procfs', 'maps'])
    const lines = parseMaps(new TextDecoder().decode(hostRead(k, `/proc/${task.pid}/maps`)))
    expect(lines.map(({ start, end, perms }) => ({ start, end, perms }))).toEqual(
      task.mm.vmas.map((v) => ({
        start: v.start,
        end: v.end,
        perms: `${v.prot & 1 ? 'r' : '-'}${v.prot & 2 ? 'w' : '-'}${v.prot & 4 ? 'x' : '-'}${v.shared ? 's' : 'p'}`,
      })),
    )
    expect(lines.map((l) => l.name)).toEqual(
      task.mm.vmas.map((v) => (v.kind === 'file' ? '/bin/procfs' : v.name)),
    )
    // No task asks: there is no /proc/self for the host.
    expect(k.vfs.lookup('/proc/self')).toBeLessThan(0)
  })

  it("/proc/kallsyms: every guest kernel symbol as s_show prints it, do_fork at kallsyms' address", () => {
    const r = runGuest(program, ['procfs', 'cat', '/proc/kallsyms'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    for (const l of lines) expect(l).toMatch(/^[0-9a-f]{16} [a-zA-Z] \S+$/)
    expect(lines).toHaveLength(r.kernel.kallsyms.all().length)
    const doFork = lines.filter((l) => l.endsWith(' do_fork'))
    const addr = BigInt.asUintN(64, BigInt(r.kernel.symbol('do_fork')))
      .toString(16)
      .padStart(16, '0')
    expect(doFork).toHaveLength(1)
    expect(doFork[0]).toMatch(new RegExp(`^${addr} [tT] do_fork$`))
    // In address order, as kallsyms lists them.
    const addrs = lines.map((l) => BigInt(`0x${l.slice(0, 16)}`))
    addrs.slice(1).forEach((a, i) => {
      expect(a >= addrs[i]).toBe(true)
    })
  })

  it('/proc/self: exe, cwd and fd/ links (a pipe reopened through its link), comm, cmdline, environ, stat, status, auxv', () => {
    const env = ['HOME=/root', 'EMPTY=', 'SPACED=a b']
    const r = runGuest(program, ['procfs', 'self', 'two words', ''], { env })
    expect(r.status, r.stderr + r.detail).toBe(0)
    const out = r.stdout
    expect(out).toContain('/proc/self is getpid(): yes\n')
    expect(out).toContain('/proc/self/exe -> /bin/procfs\n')
    expect(out).toContain('/proc/self/cwd -> /tmp\n')
    const fds = [...out.matchAll(/^\/proc\/self\/fd\/(\d+) -> (.*)$/gm)].map(([, fd, target]) => [
      Number(fd),
      target,
    ])
    const pipe = fds[3][1]
    expect(pipe).toMatch(/^pipe:\[\d+\]$/)
    // Both ends of the pipe, then the directory's own descriptor, closed again before readlink (as natively).
    expect(fds).toEqual([
      [0, '/dev/console'],
      [1, '/dev/console'],
      [2, '/dev/stderr-console'],
      [3, pipe],
      [4, pipe],
      [5, 'error'],
    ])
    expect(out).toContain('reopened pipe reads: through the link\n')
    expect(field(out, 'comm')).toBe('procfs')
    expect(field(out, 'cmdline')).toBe('procfs\\0self\\0two words\\0\\0')
    expect(field(out, 'environ')).toBe(`${env.join('\\0')}\\0`)
    // stat: 52 fields, comm in parentheses, Linux's order.
    const stat = (field(out, 'stat') ?? '').split(' ')
    expect(stat).toHaveLength(52)
    expect(stat.slice(0, 8)).toEqual(['1', '(procfs)', 'R', '0', '1', '1', '0', '-1'])
    const n = (i: number) => Number(stat[i - 1])
    expect(n(20)).toBe(1) // num_threads
    expect(n(23)).toBeGreaterThan(0) // vsize
    expect(n(24)).toBeGreaterThan(0) // rss
    expect(n(26)).toBeLessThan(n(27)) // startcode < endcode
    expect(n(28)).toBeLessThan(n(48)) // startstack: argc, below the strings
    // arg_start .. env_end: argv's and the environment's strings, back to back.
    const strings = ['procfs', 'self', 'two words', '', ...env].reduce((s, a) => s + a.length + 1, 0)
    expect(n(51) - n(48)).toBe(strings)
    expect(n(50)).toBe(n(49))
    // status: Linux's "Key:\tvalue" lines.
    const status = out.slice(out.indexOf('Name:\t'), out.indexOf('auxv: '))
    for (const l of status.trimEnd().split('\n')) expect(l).toMatch(/^[A-Za-z_]+:\t/)
    expect(status).toMatch(
      /^Name:\tprocfs\nUmask:\t0022\nState:\tR \(running\)\nTgid:\t1\nNgid:\t0\nPid:\t1\nPPid:\t0\n/,
    )
    for (const l of status.split('\n').filter((x) => /^(Vm|Rss)/.test(x)))
      expect(l).toMatch(/^\w+:\t[ \d]{8} kB$/)
    expect(Number(status.match(/^VmRSS:\t *(\d+) kB$/m)?.[1])).toBeGreaterThan(0)
    expect(status).toMatch(/^Threads:\t1$/m)
    expect(out).toMatch(
      /^auxv: \d+ bytes, ends with AT_NULL: yes, AT_PAGESZ 4096, AT_ENTRY is getauxval's: yes$/m,
    )
    if (onHost) {
      // The same lines in the same order as Linux's status (which has a few more).
      const host = native(['self'], { HOME: '/root' })
      const hostStatus = host.slice(host.indexOf('Name:\t'), host.indexOf('auxv: '))
      expect(isSubsequence(keys(status, /:\t/), keys(hostStatus, /:\t/))).toBe(true)
      expect(host).toContain("AT_ENTRY is getauxval's: yes")
    }
  })

  it("/proc/PID of a forked and exec'd child: cmdline, environ, exe and stat match what it was given; /proc lists it until reaped", () => {
    const r = runGuest(program, ['procfs', 'spawn'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    const want = (exe: string, pid: number) =>
      [
        'child cmdline: procfs-child\\0wait\\0two words\\0\\0last\\0',
        'child environ: FOO=bar\\0EMPTY=\\0SPACED=a b\\0',
        `/proc/${pid}/exe -> ${exe}`,
        // It was exec'd as /proc/self/exe: comm is that name's last part, as on Linux.
        'child stat: pid matches yes, comm (exe), state S, ppid is getpid(): yes',
        '/proc lists the child: yes, itself: yes',
        'child exited 0',
        `after wait, /proc/${pid} exists: no`,
        '',
      ].join('\n')
    expect(r.stdout).toBe(want('/bin/procfs', 2))
    if (onHost) {
      const host = native(['spawn'])
      const pid = Number(host.match(/^\/proc\/(\d+)\/exe/m)?.[1])
      expect(host).toBe(want(FIXTURE.pathname, pid))
    }
  })

  it('/proc/PID/cmdline, environ and auxv of a process kernel.spawn started, read from the host', () => {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
    k.vfs.writeFile('/bin/procfs', program)
    k.boot()
    const argv = ['procfs', 'wait', 'é ü', '']
    const envp = ['LANG=C.UTF-8', 'X=']
    const task = k.spawn('/bin/procfs', argv, envp)
    const text = (p: string) => new TextDecoder().decode(hostRead(k, `/proc/${task.pid}/${p}`))
    expect(text('cmdline')).toBe(argv.map((a) => `${a}\0`).join(''))
    expect(text('environ')).toBe(envp.map((a) => `${a}\0`).join(''))
    expect(text('comm')).toBe('procfs\n')
    const auxv = hostRead(k, `/proc/${task.pid}/auxv`)
    const words = [...new BigUint64Array(auxv.buffer, auxv.byteOffset, auxv.length / 8)].map(Number)
    const at = (type: number) => words[words.findIndex((w, i) => i % 2 === 0 && w === type) + 1]
    expect(at(6)).toBe(PAGE) // AT_PAGESZ
    expect(at(9)).toBe(parseElf(program).entry) // AT_ENTRY
    expect(at(16)).toBe(cpuid(k.machine.cpus[0], 1, 0)[3] >>> 0) // AT_HWCAP
    expect(words.slice(-2)).toEqual([0, 0])
    expect(k.vfs.lookup(`/proc/${task.pid}/exe`, k.vfs.root, true)).toMatchObject({ target: '/bin/procfs' })
  })

  it('/proc/cpuinfo: a block per vCPU, every value from its cpuid', () => {
    const r = runGuest(program, ['procfs', 'cat', '/proc/cpuinfo'], { cpus: 2 })
    expect(r.status, r.stderr + r.detail).toBe(0)
    const blocks = r.stdout.split('\n\n').filter((b) => b !== '')
    expect(blocks).toHaveLength(2)
    expect(r.stdout.endsWith('power management:\n\n')).toBe(true)
    blocks.forEach((b, i) => {
      const cpu = r.kernel.machine.cpus[i]
      const value = (key: string) => b.match(new RegExp(`^${key}\\t+: ?(.*)$`, 'm'))?.[1]
      const [level, ebx, ecx, edx] = cpuid(cpu, 0, 0)
      const str = (...regs: number[]) => Buffer.from(Int32Array.from(regs).buffer).toString('latin1')
      expect(value('processor')).toBe(String(i))
      expect(value('vendor_id')).toBe(str(ebx, edx, ecx))
      expect(value('cpuid level')).toBe(String(level))
      const brand = str(...[0x80000002, 0x80000003, 0x80000004].flatMap((l) => cpuid(cpu, l, 0)))
      expect(value('model name')).toBe(brand.replace(/\0+$/, ''))
      const sig = cpuid(cpu, 1, 0)[0]
      expect(value('cpu family')).toBe(String((sig >> 8) & 0xf))
      expect(value('model')).toBe(String(((sig >> 4) & 0xf) | (((sig >> 16) & 0xf) << 4)))
      expect(value('apicid')).toBe(String(cpuid(cpu, 1, 0)[1] >>> 24))
      // The flags: Linux's names of exactly the bits cpuid sets (leaf 1 EDX/ECX, 0x80000001 EDX/ECX).
      expect(value('flags')).toBe(
        'fpu tsc msr pae cx8 pge cmov pat clflush mmx fxsr sse sse2 syscall nx rdtscp lm cx16 lahf_lm',
      )
      const bits = (leaf: number, reg: number) => cpuid(cpu, leaf, 0)[reg] >>> 0
      expect(bits(1, 3).toString(2).replace(/0/g, '')).toHaveLength(13) // fpu .. sse2
      expect(bits(0x80000001, 3).toString(2).replace(/0/g, '')).toHaveLength(4) // syscall nx rdtscp lm
      expect(value('address sizes')).toBe('40 bits physical, 48 bits virtual')
    })
    if (onHost && existsSync('/proc/cpuinfo')) {
      const host = readFileSync('/proc/cpuinfo', 'utf8').split('\n\n')[0]
      const sep = /\t*: ?|:$/
      expect(
        isSubsequence(
          keys(blocks[0], /:/).map((k) => k.trim()),
          keys(host, /:/).map((k) => k.trim()),
        ),
      ).toBe(true)
      // The same tabs after each key as Linux's.
      for (const l of blocks[0].split('\n')) expect(host).toContain(l.split(sep)[0])
    }
  })

  it("/proc/meminfo: MemTotal is the machine's memory, MemFree what the frame allocator has left", () => {
    const memorySize = 96 * 1024 * 1024
    const r = runGuest(program, ['procfs', 'cat', '/proc/meminfo'], { memorySize })
    expect(r.status, r.stderr + r.detail).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    // show_val_kb: the label padded to 16 columns, the value in 8.
    for (const l of lines) expect(l).toMatch(/^[A-Za-z()_]+: *\d+ kB$/)
    for (const l of lines) expect(l.length).toBe(16 + 8 + 3)
    const kb = (label: string) => Number(r.stdout.match(new RegExp(`^${label}: +(\\d+) kB$`, 'm'))?.[1])
    expect(kb('MemTotal')).toBe(memorySize / 1024)
    // Free when cat read it: less than all (the kernel and the program hold frames), more than now (its pages are back).
    expect(kb('MemFree')).toBeGreaterThan(0)
    expect(kb('MemFree')).toBeLessThan(kb('MemTotal'))
    expect(kb('MemFree')).toBeLessThanOrEqual((memorySize - r.kernel.machine.frames.used * PAGE) / 1024)
    expect(kb('SwapTotal')).toBe(0)
    if (onHost && existsSync('/proc/meminfo')) {
      const host = readFileSync('/proc/meminfo', 'utf8')
      expect(isSubsequence(keys(r.stdout, /:/), keys(host, /:/))).toBe(true)
    }
  })

  it('/proc/filesystems and /proc/mounts', () => {
    const r = runGuest(program, ['procfs', 'cat', '/proc/filesystems', '/proc/mounts'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    expect(r.stdout).toBe(
      'nodev\ttmpfs\nnodev\tproc\nnodev\tsockfs\nnodev\tpipefs\ntmpfs / tmpfs rw,relatime 0 0\nproc /proc proc rw,relatime 0 0\n',
    )
  })
})

describe.skipIf(!busybox)(`${BUSYBOX} reads /proc`, () => {
  const run = (argv: string[], cpus = 1) =>
    runGuest(new Uint8Array(readFileSync(BUSYBOX)), [BUSYBOX, ...argv], {
      path: BUSYBOX,
      env: ['PATH=/nonexistent', 'LC_ALL=C'],
      cpus,
      maxInstructions: 2_000_000_000,
    })

  it('cat /proc/self/status', () => {
    const r = run(['cat', '/proc/self/status'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    expect(r.stdout).toMatch(
      /^Name:\tbusybox\nUmask:\t0022\nState:\tR \(running\)\nTgid:\t1\nNgid:\t0\nPid:\t1\nPPid:\t0\n/,
    )
    expect(r.stdout).toMatch(/^VmRSS:\t *[1-9]\d* kB$/m)
    const native = spawnSync(BUSYBOX, ['cat', '/proc/self/status'], { encoding: 'utf8' }).stdout
    expect(isSubsequence(keys(r.stdout, /:\t/), keys(native, /:\t/))).toBe(true)
  })

  it('ls /proc/self/fd', () => {
    const r = run(['sh', '-c', 'ls /proc/self/fd; ls /proc/self/'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    // stdin, stdout, stderr, and 3: the directory ls is reading.
    expect(r.stdout).toBe(
      '0\n1\n2\n3\nauxv\ncmdline\ncomm\ncwd\nenviron\nexe\nfd\nmaps\nroot\nstat\nstatus\n',
    )
  })

  it('cat /proc/cpuinfo', () => {
    const r = run(['cat', '/proc/cpuinfo'], 2)
    expect(r.status, r.stderr + r.detail).toBe(0)
    expect(r.stdout.match(/^processor\t: \d+$/gm)).toEqual(['processor\t: 0', 'processor\t: 1'])
    expect(r.stdout).toContain('model name\t: probekit x86-64 emulator\n')
  })

  it('cat /proc/meminfo, and free reads it', () => {
    const r = run(['sh', '-c', 'cat /proc/meminfo; free -k'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    expect(r.stdout).toMatch(/^MemTotal: +131072 kB$/m)
    expect(r.stdout).toMatch(/^Mem: +131072 +\d+ +\d+ +0 +0 +\d+$/m)
  })

  it('ps lists the processes from /proc/PID/stat and cmdline', () => {
    // The shell runs its applets in children of its own (the standalone shell): sleep, then ps.
    const r = run(['sh', '-c', 'sleep 1 & ps -o pid,ppid,stat,comm,args; wait'])
    expect(r.status, r.stderr + r.detail).toBe(0)
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/ +/).slice(0, 5))
    // Whether sleep has reached its sleep yet is the scheduler's business; ps, reading, runs.
    expect(
      rows.map(([pid, ppid, stat, comm, args]) => [pid, ppid, stat === 'R' || stat === 'S', comm, args]),
    ).toEqual([
      ['1', '0', true, 'busybox', '/bin/busybox'],
      ['2', '1', true, 'sleep', 'sleep'],
      ['3', '1', true, 'ps', '{ps}'],
    ])
    expect(rows[2][2]).toBe('R')
  })
})
