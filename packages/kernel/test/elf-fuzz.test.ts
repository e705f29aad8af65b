// Mutated ELF headers and program headers (issue 17): every mutation of a
// real executable's e_* and p_* fields, set to boundary values or to seeded
// random ones, or cut short at a header boundary, is either run or refused
// with a one-line ElfError / ExecError (the errno execve would give), never
// another host exception and never a hang; a kernel that refused one still
// runs a valid program to its end, and a guest's execve of one gets an errno.

import { existsSync, readFileSync } from 'node:fs'

import { describe, expect, it } from 'vitest'
import { TASK_SIZE } from '../src/abi.js'
import { EACCES, EINVAL, ENOENT, ENOEXEC, ENOMEM } from '../src/errno.js'
import { checkExecutable, ElfError, ExecError, Kernel, PT_INTERP, PT_LOAD, type Task } from '../src/index.js'
import { prng } from './support/prng.js'
import { guestImage } from './support/run.js'
import { syscall, tinyElf } from './support/tiny-elf.js'

const HELLO = new Uint8Array(readFileSync(new URL('../fixtures/bin/hello', import.meta.url)))
const LDSO = '/lib64/ld-linux-x86-64.so.2'
const LIBC = '/lib/x86_64-linux-gnu/libc.so.6'
const dynamicHost =
  process.platform === 'linux' && existsSync('/bin/true') && existsSync(LDSO) && existsSync(LIBC)
const TRUE = dynamicHost ? new Uint8Array(readFileSync('/bin/true')) : null
const MEMORY = 32 * 1024 * 1024
/** Instructions an accepted mutant may run: enough for ld.so to give up on a broken program, bounded. */
const BUDGET = 20_000_000

interface Mutant {
  name: string
  bytes: Uint8Array
}

const U64_MAX = (1n << 64n) - 1n
const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength)
const u64 = (b: Uint8Array, o: number) => view(b).getBigUint64(o, true)
const patched = (base: Uint8Array, f: (v: DataView, b: Uint8Array) => void): Uint8Array => {
  const b = base.slice()
  f(view(b), b)
  return b
}

// ELF64 header and program header field offsets and sizes.
const EH = {
  e_type: [16, 2],
  e_machine: [18, 2],
  e_entry: [24, 8],
  e_phoff: [32, 8],
  e_shoff: [40, 8],
} as const
const EH2 = { e_phentsize: [54, 2], e_phnum: [56, 2], e_shnum: [60, 2], e_shstrndx: [62, 2] } as const
const PH = {
  p_type: [0, 4],
  p_flags: [4, 4],
  p_offset: [8, 8],
  p_vaddr: [16, 8],
  p_filesz: [32, 8],
  p_memsz: [40, 8],
  p_align: [48, 8],
} as const

function setField(v: DataView, at: number, size: number, value: bigint): void {
  const x = BigInt.asUintN(size * 8, value)
  if (size === 2) v.setUint16(at, Number(x), true)
  else if (size === 4) v.setUint32(at, Number(x), true)
  else v.setBigUint64(at, x, true)
}

/** The values a field is pushed to: zero, one, the ends of each width, the halves of the address space. */
function boundaries(len: number): bigint[] {
  const L = BigInt(len)
  return [
    0n,
    1n,
    55n,
    56n,
    63n,
    64n,
    0xfffn,
    0x1000n,
    L - 1n,
    L,
    L + 1n,
    0xffffn,
    0xffffffffn,
    1n << 47n,
    BigInt(TASK_SIZE),
    BigInt(TASK_SIZE) - 0x1000n,
    1n << 53n,
    (1n << 63n) - 1n,
    1n << 63n,
    0xffff800000000000n,
    0xffffffff81000000n,
    U64_MAX - 0xfffn,
    U64_MAX,
  ]
}

function phdrs(
  base: Uint8Array,
): { at: number; type: number; offset: bigint; vaddr: bigint; filesz: bigint }[] {
  const v = view(base)
  const phoff = Number(u64(base, 32))
  const out = []
  for (let i = 0; i < v.getUint16(56, true); i++) {
    const at = phoff + i * 56
    out.push({
      at,
      type: v.getUint32(at, true),
      offset: u64(base, at + 8),
      vaddr: u64(base, at + 16),
      filesz: u64(base, at + 32),
    })
  }
  return out
}

/** Every boundary value in every header field, the classic broken layouts, and the file cut at each header boundary. */
function enumerated(base: Uint8Array): Mutant[] {
  const out: Mutant[] = []
  const add = (name: string, f: (v: DataView, b: Uint8Array) => void) =>
    out.push({ name, bytes: patched(base, f) })
  const len = base.length
  add('32-bit class', (_v, b) => {
    b[4] = 1
  })
  add('big-endian', (_v, b) => {
    b[5] = 2
  })
  add('bad magic', (_v, b) => {
    b[1] = 0x46
  })
  for (const [name, [at, size]] of Object.entries({ ...EH, ...EH2 }))
    for (const value of name === 'e_type' || name === 'e_machine'
      ? [0n, 1n, 3n, 4n, 0xffffn]
      : boundaries(len))
      add(`${name} = 0x${BigInt.asUintN(size * 8, value).toString(16)}`, (v) => setField(v, at, size, value))
  const ph = phdrs(base)
  const loads = ph.filter((p) => p.type === PT_LOAD)
  for (const [i, p] of ph.entries()) {
    // Only PT_LOAD and PT_INTERP are read by binfmt_elf; the others get their type changed.
    const read = p.type === PT_LOAD || p.type === PT_INTERP
    for (const [name, [at, size]] of Object.entries(read ? PH : { p_type: PH.p_type })) {
      const values =
        name === 'p_type'
          ? [0n, BigInt(PT_LOAD), BigInt(PT_INTERP), 0xffffffffn]
          : name === 'p_flags'
            ? [0n, 0xffffffffn]
            : name === 'p_align'
              ? [0n, 3n, 0x1001n, 1n << 63n, U64_MAX]
              : boundaries(len)
      for (const value of values)
        add(`phdr ${i} ${name} = 0x${BigInt.asUintN(size * 8, value).toString(16)}`, (v) =>
          setField(v, p.at + at, size, value),
        )
    }
    if (p.type !== PT_LOAD) continue
    add(`phdr ${i} p_memsz < p_filesz`, (v) => v.setBigUint64(p.at + 40, p.filesz - 1n, true))
    add(`phdr ${i} p_offset + p_filesz one byte past the end`, (v) =>
      v.setBigUint64(p.at + 32, BigInt(len) - p.offset + 1n, true),
    )
    add(`phdr ${i} p_vaddr not congruent with p_offset`, (v) => v.setBigUint64(p.at + 16, p.vaddr + 1n, true))
    add(`phdr ${i} a bss as big as memory`, (v) => v.setBigUint64(p.at + 40, BigInt(MEMORY) * 2n, true))
    for (const q of loads)
      if (q !== p)
        add(`phdr ${i} overlapping the load at 0x${q.vaddr.toString(16)}`, (v) =>
          v.setBigUint64(p.at + 16, q.vaddr, true),
        )
  }
  // Many PT_LOADs: a new table at the end of the file, the first load repeated.
  const first = ph.find((p) => p.type === PT_LOAD)
  if (first)
    for (const n of [2, 73, 74, 1000]) {
      const b = new Uint8Array(len + n * 56)
      b.set(base)
      for (let k = 0; k < n; k++) b.set(base.subarray(first.at, first.at + 56), len + k * 56)
      const v = view(b)
      v.setBigUint64(32, BigInt(len), true)
      v.setUint16(56, n, true)
      out.push({ name: `${n} copies of the first PT_LOAD`, bytes: b })
    }
  // Cut short at (and one byte either side of) every header boundary and every segment's ends.
  const cuts = new Set([0, 1, 4, 5, 6, 16, 18, 20, 24, 32, 40, 52, 54, 56, 58, 63, 64, len - 1])
  for (const p of ph) {
    for (const c of [p.at, p.at + 8, p.at + 55, p.at + 56]) cuts.add(c)
    if (p.type === PT_LOAD || p.type === PT_INTERP)
      for (const c of [Number(p.offset), Number(p.offset + p.filesz) - 1]) cuts.add(c)
  }
  for (const c of [...cuts].sort((a, b) => a - b))
    if (c >= 0 && c < len) out.push({ name: `cut at ${c} bytes`, bytes: base.slice(0, c) })
  return out
}

/** PT_INTERP's own failures: the path's length, its NUL, its bytes beyond the file, what it names. */
function interpMutants(base: Uint8Array): Mutant[] {
  const interp = phdrs(base).find((p) => p.type === PT_INTERP)
  if (!interp) return []
  const out: Mutant[] = []
  const add = (name: string, f: (v: DataView, b: Uint8Array) => void) =>
    out.push({ name, bytes: patched(base, f) })
  const at = Number(interp.offset)
  const n = Number(interp.filesz)
  const path = (s: string) => (_v: DataView, b: Uint8Array) => {
    b.fill(0, at, at + n)
    b.set(new TextEncoder().encode(s), at)
  }
  for (const size of [0n, 1n, 2n, 4097n, BigInt(base.length), 1n << 63n, U64_MAX])
    add(`PT_INTERP p_filesz = 0x${size.toString(16)}`, (v) => v.setBigUint64(interp.at + 32, size, true))
  for (const off of [BigInt(base.length), BigInt(base.length - 1), U64_MAX])
    add(`PT_INTERP p_offset = 0x${off.toString(16)}`, (v) => v.setBigUint64(interp.at + 8, off, true))
  add('PT_INTERP without its NUL', (_v, b) => {
    b[at + n - 1] = 0x78
  })
  add('PT_INTERP names a missing file', path('/lib64/ld-linux-x86-64.so.9'))
  add('PT_INTERP names a directory', path('/lib64'))
  add('PT_INTERP names nothing', path(''))
  add('PT_INTERP names the program itself', path('/m'))
  add('PT_INTERP names a file without an execute bit', path('/etc/passwd'))
  add('PT_INTERP names a non-ELF file', path('/bin/notelf'))
  return out
}

/** Seeded random mutations: 1-3 header fields set to boundary or random values, or 1-4 header bytes flipped. */
function randomized(base: Uint8Array, seed: number, count: number): Mutant[] {
  const rand = prng(seed)
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]
  const ph = phdrs(base)
  const headerEnd = Math.max(...ph.map((p) => p.at + 56))
  const out: Mutant[] = []
  for (let k = 0; k < count; k++) {
    const steps: string[] = []
    const bytes = patched(base, (v, b) => {
      if (rand() < 0.3) {
        for (let j = 1 + Math.floor(rand() * 4); j > 0; j--) {
          const o = Math.floor(rand() * headerEnd)
          b[o] ^= 1 << Math.floor(rand() * 8)
          steps.push(`flip byte ${o}`)
        }
        return
      }
      for (let j = 1 + Math.floor(rand() * 3); j > 0; j--) {
        const inHeader = rand() < 0.3
        const [name, [at, size]] = pick(Object.entries(inHeader ? { ...EH, ...EH2 } : PH))
        const p = pick(ph)
        const value =
          rand() < 0.6
            ? pick(boundaries(base.length))
            : BigInt(Math.floor(rand() * 2 ** 32)) << BigInt(Math.floor(rand() * 33))
        setField(v, (inHeader ? 0 : p.at) + at, size, value)
        steps.push(`${inHeader ? '' : `phdr ${ph.indexOf(p)} `}${name} = 0x${value.toString(16)}`)
      }
    })
    out.push({ name: `seed ${seed} #${k}: ${steps.join(', ')}`, bytes })
  }
  return out
}

/** A booted kernel whose init (hello) has run to its end: what it runs next, it runs as an orphan within a budget. */
class Bench {
  kernel!: Kernel
  readonly out = { stdout: '' }
  /** The task run() waits for: the machine stops at the first tick after it is a zombie. */
  private waiting: Task | null = null
  /** Kernels booted, for the record. */
  boots = 0

  constructor() {
    this.reset()
  }

  reset(): void {
    const dec = new TextDecoder()
    const k = new Kernel({
      image: guestImage(),
      memorySize: MEMORY,
      stdout: (d) => {
        this.out.stdout += dec.decode(d)
      },
      stderr: () => {},
      hostTick: () => {
        if (this.waiting?.state === 'zombie') k.machine.stop('the task ended')
      },
    })
    k.vfs.writeFile('/bin/hello', HELLO)
    k.vfs.writeFile('/bin/notelf', new TextEncoder().encode('not an ELF file\n'))
    if (TRUE) {
      k.vfs.writeFile(LDSO, new Uint8Array(readFileSync(LDSO)))
      k.vfs.writeFile(LIBC, new Uint8Array(readFileSync(LIBC)))
    }
    k.boot()
    this.kernel = k
    this.boots++
    this.out.stdout = ''
    expect(this.run('/bin/hello', ['hello'])?.exitCode).toBe(0)
    expect(this.out.stdout).toBe('hello, world\n')
  }

  /**
   * Spawn and run to its end within budget instructions: the task, or null
   * when it is still running then (the kernel is replaced: it would eat
   * every later budget). Throws what spawn throws.
   */
  run(path: string, argv: readonly string[], budget = BUDGET): Task | null {
    this.out.stdout = ''
    const task = this.kernel.spawn(path, argv)
    this.waiting = task
    const { result } = this.kernel.run(budget)
    this.waiting = null
    expect(['stopped', 'budget', 'halted'], result.detail).toContain(result.reason)
    if (task.state === 'zombie') return task
    this.reset()
    return null
  }

  /** hello runs to its end with its output and status. */
  expectHelloRuns(): void {
    const t = this.run('/bin/hello', ['hello'])
    expect(t?.exitCode).toBe(0)
    expect(this.out.stdout).toBe('hello, world\n')
  }
}

/** The refusal is one of ours: an ElfError (ENOEXEC) or an ExecError with an errno execve gives, on one line. */
function expectRefusal(e: unknown, name: string): void {
  if (!(e instanceof ElfError) && !(e instanceof ExecError)) throw new Error(`${name}: ${e}`)
  expect(e.message, name).toMatch(/^[^\n]+$/)
  if (e instanceof ExecError) expect([ENOENT, ENOEXEC, ENOMEM, EACCES, EINVAL], name).toContain(e.errno)
}

const bases: [string, Uint8Array | null, string[]][] = [
  ['fixtures/bin/hello (static)', HELLO, ['hello']],
  ['/bin/true (dynamic, PIE)', TRUE, ['true']],
]

for (const [label, base, argv] of bases) {
  describe.skipIf(base === null)(`mutated ${label}`, () => {
    const bin = base ?? new Uint8Array()
    const mutants = base ? [...enumerated(bin), ...interpMutants(bin), ...randomized(bin, 17, 150)] : []

    it('the unmutated file runs to its end (the mutations start from a valid program)', () => {
      const bench = new Bench()
      bench.kernel.vfs.writeFile('/m', bin)
      expect(bench.run('/m', argv)?.exitCode).toBe(0)
    })

    it(`checkExecutable: ${mutants.length} mutants parse or throw a one-line ElfError`, () => {
      let refused = 0
      for (const m of mutants) {
        try {
          checkExecutable(m.bytes)
        } catch (e) {
          if (!(e instanceof ElfError)) throw new Error(`${m.name}: ${e}`)
          expect(e.message, m.name).toMatch(/^[^\n]+$/)
          refused++
        }
      }
      // Both outcomes happen: the mutations reach past the first check.
      expect(refused).toBeGreaterThan(0)
      expect(refused).toBeLessThan(mutants.length)
    })

    it('kernel.spawn refuses with ElfError/ExecError or runs it; a kernel that refused still runs hello', {
      timeout: 600_000,
    }, () => {
      const bench = new Bench()
      let refused = 0
      let ran = 0
      for (const m of mutants) {
        bench.kernel.vfs.writeFile('/m', m.bytes)
        let parsed = true
        try {
          checkExecutable(m.bytes)
        } catch {
          parsed = false
        }
        try {
          bench.run('/m', argv)
          ran++
          expect(parsed, `${m.name}: spawned what checkExecutable refuses`).toBe(true)
        } catch (e) {
          expectRefusal(e, m.name)
          // The loader's own refusals each, the header check's now and then (they map nothing).
          if (parsed || refused % 25 === 0) bench.expectHelloRuns()
          refused++
        }
      }
      bench.expectHelloRuns()
      expect(refused).toBeGreaterThan(0)
      expect(ran).toBeGreaterThan(0)
    })
  })
}

describe('a guest execve of a mutated file', () => {
  /** execve("/m", NULL, NULL), then exit with -errno: a failed execve returns to the caller. */
  const caller = tinyElf([
    ...[0x48, 0x8d, 0x3d, 0x16, 0x00, 0x00, 0x00], // lea rdi, [rip + 0x16]: the path below
    ...[0x31, 0xf6], // xor esi, esi
    ...[0x31, 0xd2], // xor edx, edx
    ...syscall(59), // execve
    ...[0xf7, 0xd8], // neg eax
    ...[0x89, 0xc7], // mov edi, eax
    ...syscall(231), // exit_group
    ...[0x2f, 0x6d, 0x00], // "/m"
  ])
  let bench: Bench | undefined

  /** The caller's exit status: the errno its execve got, or what the program it became exited with. */
  function execStatus(bytes: Uint8Array | null): number | undefined {
    // No file: a kernel that never had one.
    const b = bytes ? (bench ??= new Bench()) : new Bench()
    if (bytes) b.kernel.vfs.writeFile('/m', bytes)
    b.kernel.vfs.writeFile('/caller', caller)
    const task = b.run('/caller', ['caller'])
    return task ? task.exitCode : undefined
  }

  const hdr = (f: (v: DataView, b: Uint8Array) => void) => patched(HELLO, f)
  const text = Number(u64(HELLO, 32)) + 56 // hello's second PT_LOAD (its text)
  it.each([
    ['the unmutated file: it runs (hello exits 0)', 0, HELLO],
    ['e_phentsize 57', ENOEXEC, hdr((v) => v.setUint16(54, 57, true))],
    ['e_phnum 0', ENOEXEC, hdr((v) => v.setUint16(56, 0, true))],
    ['e_phnum 74 (more than 4096 bytes of headers)', ENOEXEC, hdr((v) => v.setUint16(56, 74, true))],
    ['e_phoff past the end', ENOEXEC, hdr((v) => v.setBigUint64(32, U64_MAX, true))],
    ['e_type REL', ENOEXEC, hdr((v) => v.setUint16(16, 1, true))],
    ['32-bit', ENOEXEC, hdr((_v, b) => (b[4] = 1))],
    ['cut in the program headers', ENOEXEC, HELLO.slice(0, 100)],
    ['a segment past the end of the file', ENOEXEC, hdr((v) => v.setBigUint64(text + 32, 1n << 32n, true))],
    [
      'a segment in the kernel half',
      EINVAL,
      hdr((v) => v.setBigUint64(text + 16, 0xffffffff81000000n, true)),
    ],
    ['a non-canonical segment', EINVAL, hdr((v) => v.setBigUint64(text + 16, 1n << 47n, true))],
    ['p_memsz 2^64-1', EINVAL, hdr((v) => v.setBigUint64(text + 40, U64_MAX, true))],
    ['a bss bigger than memory', ENOMEM, hdr((v) => v.setBigUint64(text + 40, 1n << 40n, true))],
    ['an entry point in the kernel half', EINVAL, hdr((v) => v.setBigUint64(24, 0xffffffff81000000n, true))],
  ])('%s: the caller exits with %s', (_name, status, bytes) => {
    expect(execStatus(bytes)).toBe(status)
  })

  it('a missing file is ENOENT (the caller reports what execve returned)', () => {
    expect(execStatus(null)).toBe(ENOENT)
  })

  it.skipIf(!TRUE)(
    'PT_INTERP: a missing interpreter is ENOENT, a directory EACCES, a bad name ENOEXEC',
    () => {
      const bin = TRUE ?? new Uint8Array()
      const interp = new Map(interpMutants(bin).map((m) => [m.name, m.bytes]))
      const status = (name: string) => execStatus(interp.get(name) ?? null)
      expect(status('PT_INTERP names a missing file')).toBe(ENOENT)
      expect(status('PT_INTERP names nothing')).toBe(ENOENT)
      expect(status('PT_INTERP names a directory')).toBe(EACCES)
      expect(status('PT_INTERP without its NUL')).toBe(ENOEXEC)
      expect(status('PT_INTERP p_filesz = 0x1')).toBe(ENOEXEC)
      expect(status('PT_INTERP p_filesz = 0x1001')).toBe(ENOEXEC)
      expect(status('PT_INTERP names the program itself')).toBe(ENOEXEC)
      expect(status('PT_INTERP names a file without an execute bit')).toBe(EACCES)
      // Linux says ELIBBAD (an interpreter that is not ELF); this kernel's is the ELF loader's ENOEXEC.
      expect(status('PT_INTERP names a non-ELF file')).toBe(ENOEXEC)
    },
  )

  it('seeded mutants: each execve returns the errno spawn gives, or runs the program; the kernel goes on', {
    timeout: 300_000,
  }, () => {
    for (const m of randomized(HELLO, 4242, 40)) {
      bench ??= new Bench()
      bench.kernel.vfs.writeFile('/m', m.bytes)
      let want: number | null = null
      try {
        bench.run('/m', ['m'])
      } catch (e) {
        expectRefusal(e, m.name)
        want = e instanceof ExecError ? e.errno : ENOEXEC
      }
      const status = execStatus(m.bytes)
      if (want !== null) expect(status, m.name).toBe(want)
    }
    bench?.expectHelloRuns()
  })
})
