// Loading a static x86-64 ELF executable into a fresh address space and
// building its initial stack (argc, argv, envp, auxv) as Linux's
// binfmt_elf does.

import { type Cpu, cpuid } from '@probekit/x86-emu'
import type { RegularFile } from '../fs/vfs.js'
import { type Mm, PAGE, PROT_EXEC, PROT_READ, PROT_WRITE, pageDown, pageUp } from '../mm/mm.js'
import type { PageCache } from '../mm/page-cache.js'
import { utf8Encode } from '../utf8.js'
import { ElfError, type ElfFile, ET_DYN, ET_EXEC, PF_W, PF_X, PT_INTERP, PT_LOAD, parseElf } from './elf.js'

export const STACK_TOP = 0x7ffffffff000
export const STACK_SIZE = 8 * 1024 * 1024
/** Where a static-pie executable (ET_DYN without an interpreter) is placed. */
export const PIE_BASE = 0x555555554000

export const AT_NULL = 0
export const AT_PHDR = 3
export const AT_PHENT = 4
export const AT_PHNUM = 5
export const AT_PAGESZ = 6
export const AT_BASE = 7
export const AT_FLAGS = 8
export const AT_ENTRY = 9
export const AT_UID = 11
export const AT_EUID = 12
export const AT_GID = 13
export const AT_EGID = 14
export const AT_PLATFORM = 15
export const AT_HWCAP = 16
export const AT_CLKTCK = 17
export const AT_SECURE = 23
export const AT_RANDOM = 25
export const AT_HWCAP2 = 26
export const AT_EXECFN = 31

export interface LoadedProgram {
  entry: number
  sp: number
  brk: number
  elf: ElfFile
}

/** Check that bytes are a static x86-64 executable we can run; throws ElfError with a one-line reason. */
export function checkExecutable(bytes: Uint8Array): ElfFile {
  const elf = parseElf(bytes)
  if (elf.type !== ET_EXEC && elf.type !== ET_DYN)
    throw new ElfError('not an executable (ELF type is neither EXEC nor DYN)')
  if (elf.programHeaders.some((p) => p.type === PT_INTERP)) {
    throw new ElfError('dynamically linked executables are not supported (build it with -static)')
  }
  if (!elf.programHeaders.some((p) => p.type === PT_LOAD))
    throw new ElfError('the ELF file has no loadable segments')
  return elf
}

export interface ExecArgs {
  filename: string
  argv: readonly string[]
  envp: readonly string[]
  /** 16 bytes for AT_RANDOM (deterministic by default). */
  random?: Uint8Array
}

/** AT_HWCAP is CPUID leaf 1 EDX, as on Linux/x86. */
export function loadExecutable(
  mm: Mm,
  bytes: Uint8Array,
  args: ExecArgs,
  cpu: Cpu,
  /** When given, read-only segments map the file's page-cache frames (shared text). */
  cache?: { pageCache: PageCache; file: RegularFile },
): LoadedProgram {
  const elf = checkExecutable(bytes)
  const bias = elf.type === ET_DYN ? PIE_BASE : 0
  let brk = 0
  let phdrAddr = 0
  const ehPhoff = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(32, true))
  for (const ph of elf.programHeaders) {
    if (ph.type !== PT_LOAD) continue
    const start = pageDown(ph.vaddr + bias)
    const end = pageUp(ph.vaddr + bias + ph.memsz)
    const prot = PROT_READ | (ph.flags & PF_W ? PROT_WRITE : 0) | (ph.flags & PF_X ? PROT_EXEC : 0)
    const pgoff = ph.offset - (ph.vaddr + bias - start)
    mm.addVma({
      start,
      end,
      prot,
      kind: 'file',
      name: args.filename,
      shared: false,
      pgoff,
      ...(cache ? { file: cache.file } : {}),
    })
    const pageAligned = (ph.vaddr - ph.offset) % PAGE === 0
    if (cache && (ph.flags & PF_W) === 0 && pageAligned && ph.memsz === ph.filesz) {
      // Shared text: map the page-cache frames read-only (copy-on-write if ever written).
      for (let va = start; va < end; va += PAGE) {
        const frame = cache.pageCache.frame(cache.file, (ph.offset + (va - (ph.vaddr + bias))) / PAGE)
        mm.frames.get(frame)
        mm.space.map(va, frame, { user: true, writable: false, nx: (ph.flags & PF_X) === 0 })
      }
    } else mm.write(ph.vaddr + bias, bytes.subarray(ph.offset, ph.offset + ph.filesz))
    brk = Math.max(brk, end)
    if (ehPhoff >= ph.offset && ehPhoff < ph.offset + ph.filesz)
      phdrAddr = ph.vaddr + bias + (ehPhoff - ph.offset)
  }
  mm.brkStart = brk
  mm.brk = brk
  mm.addVma({
    start: STACK_TOP - STACK_SIZE,
    end: STACK_TOP,
    prot: PROT_READ | PROT_WRITE,
    kind: 'stack',
    name: '[stack]',
    shared: false,
  })

  // The stack as Linux builds it (fs/exec.c, binfmt_elf.c create_elf_tables), from the top down:
  // an 8-byte NULL word, the file name (AT_EXECFN), the environment strings and the argument
  // strings (each copied last to first, so in memory they ascend: argv[0] lowest, the last
  // environment string just below the file name), then, 16-byte aligned, the platform string
  // and the 16 AT_RANDOM bytes, then the pointer tables. Programs rely on the order: glibc's
  // GLIBC_TUNABLES parser reads one byte past the end of the last string it parses, which is
  // the file name or, after it, the NULL word.
  let sp = STACK_TOP - 8
  mm.write(sp, new Uint8Array(8))
  const pushBytes = (b: Uint8Array): number => {
    sp -= b.length
    mm.write(sp, b)
    return sp
  }
  const pushString = (s: string) => pushBytes(utf8Encode(`${s}\0`))
  /** copy_strings: the last string first, so the first one ends up lowest. */
  const pushStrings = (list: readonly string[]): number[] => {
    const at = new Array<number>(list.length)
    for (let i = list.length - 1; i >= 0; i--) at[i] = pushString(list[i])
    return at
  }
  const execfn = pushString(args.filename)
  const envPtrs = pushStrings(args.envp)
  const argPtrs = pushStrings(args.argv)
  sp -= sp % 16 // arch_align_stack, without the randomisation
  const platform = pushString('x86_64')
  const random = pushBytes(args.random ?? Uint8Array.from({ length: 16 }, (_, i) => (i * 37 + 11) & 0xff))
  const auxv: [number, number][] = [
    [AT_PHDR, phdrAddr],
    [AT_PHENT, 56],
    [AT_PHNUM, elf.programHeaders.length],
    [AT_PAGESZ, PAGE],
    [AT_BASE, 0],
    [AT_FLAGS, 0],
    [AT_ENTRY, elf.entry + bias],
    [AT_UID, 0],
    [AT_EUID, 0],
    [AT_GID, 0],
    [AT_EGID, 0],
    [AT_PLATFORM, platform],
    [AT_HWCAP, cpuid(cpu, 1, 0)[3] >>> 0],
    [AT_CLKTCK, 100],
    [AT_SECURE, 0],
    [AT_RANDOM, random],
    [AT_HWCAP2, 0],
    [AT_EXECFN, execfn],
    [AT_NULL, 0],
  ]
  const words: number[] = [args.argv.length, ...argPtrs, 0, ...envPtrs, 0, ...auxv.flat()]
  sp = Math.floor((sp - words.length * 8) / 16) * 16
  const table = new Uint8Array(words.length * 8)
  const v = new DataView(table.buffer)
  words.forEach((w, i) => {
    v.setBigUint64(i * 8, BigInt.asUintN(64, BigInt(w)), true)
  })
  mm.write(sp, table)
  return { entry: elf.entry + bias, sp, brk, elf }
}
