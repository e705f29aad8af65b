// Loading an x86-64 ELF executable into a fresh address space and building
// its initial stack (argc, argv, envp, auxv) as Linux's binfmt_elf does. A
// dynamically linked one (PT_INTERP) gets its interpreter (ld.so) mapped
// too and starts there, with AT_BASE and AT_ENTRY telling ld.so where each
// is. Segments are file mappings: their pages come from the page cache on
// first touch (shared by every process mapping the file), copied on write.

import { type Cpu, cpuid, OutOfMemory } from '@probekit/x86-emu'
import { TASK_SIZE } from '../abi.js'
import { EINVAL, ENOMEM } from '../errno.js'
import { errnoMessage } from '../errno-names.js'
import type { RegularFile } from '../fs/vfs.js'
import { type Mm, PAGE, PROT_EXEC, PROT_READ, PROT_WRITE, pageDown, pageUp, type Vma } from '../mm/mm.js'
import { utf8Decode, utf8Encode } from '../utf8.js'
import {
  ElfError,
  type ElfFile,
  ET_DYN,
  ET_EXEC,
  PF_W,
  PF_X,
  type ProgramHeader,
  PT_INTERP,
  PT_LOAD,
  parseElf,
} from './elf.js'

export const STACK_TOP = 0x7ffffffff000
export const STACK_SIZE = 8 * 1024 * 1024
const STACK_EXPAND = 128 * 1024
/** Where an ET_DYN program is placed: ELF_ET_DYN_BASE with randomization off (as under setarch -R). */
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

/** An executable file: its bytes, and the file (for page-cache mappings) when it is one. */
export interface ExecImage {
  bytes: Uint8Array
  file?: RegularFile
}

/** An error with the errno execve returns (a missing interpreter: ENOENT). */
export class ExecError extends Error {
  constructor(
    readonly errno: number,
    message: string,
  ) {
    super(message)
  }
}

export interface LoadedProgram {
  entry: number
  sp: number
  brk: number
  elf: ElfFile
}

/** sizeof(struct elf64_phdr). */
const PHDR_SIZE = 56
/** load_elf_phdrs: the table must fit in ELF_MIN_ALIGN bytes. */
const ELF_MIN_ALIGN = 4096
/** PATH_MAX: the longest PT_INTERP binfmt_elf reads. */
const PATH_MAX = 4096
/** The most address space an interpreter's segments may span. */
const INTERP_SPAN_MAX = 2 ** 40

/**
 * Check that bytes are an x86-64 executable we can run, as load_elf_binary's
 * checks before it maps anything (all -ENOEXEC); throws ElfError with a
 * one-line reason.
 */
export function checkExecutable(bytes: Uint8Array): ElfFile {
  const elf = parseElf(bytes)
  if (elf.type !== ET_EXEC && elf.type !== ET_DYN)
    throw new ElfError('not an executable (ELF type is neither EXEC nor DYN)')
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const phentsize = v.getUint16(54, true)
  if (elf.programHeaders.length > 0 && phentsize !== PHDR_SIZE)
    throw new ElfError(`malformed ELF: e_phentsize is ${phentsize}, not ${PHDR_SIZE}`)
  if (elf.programHeaders.length * PHDR_SIZE > ELF_MIN_ALIGN)
    throw new ElfError(
      `malformed ELF: ${elf.programHeaders.length} program headers (at most ${ELF_MIN_ALIGN / PHDR_SIZE})`,
    )
  if (!elf.programHeaders.some((p) => p.type === PT_LOAD))
    throw new ElfError('the ELF file has no loadable segments')
  interpreterOf(elf, bytes)
  return elf
}

/**
 * The interpreter a dynamically linked executable names (PT_INTERP, the first
 * one), or null. As binfmt_elf reads it: 2 to PATH_MAX bytes ending in a NUL
 * (else ElfError; Linux's read past the end of the file is -EIO, here ENOEXEC).
 */
export function interpreterOf(elf: ElfFile, bytes: Uint8Array): string | null {
  const ph = elf.programHeaders.find((p) => p.type === PT_INTERP)
  if (!ph) return null
  if (ph.filesz < 2 || ph.filesz > PATH_MAX)
    throw new ElfError(`malformed ELF: the interpreter's name is ${ph.filesz} bytes (2 to ${PATH_MAX})`)
  if (ph.offset + ph.filesz > bytes.length)
    throw new ElfError("malformed ELF: the interpreter's name lies outside the file")
  const raw = bytes.subarray(ph.offset, ph.offset + ph.filesz)
  if (raw[raw.length - 1] !== 0)
    throw new ElfError("malformed ELF: the interpreter's name does not end in a NUL")
  return utf8Decode(raw.subarray(0, raw.indexOf(0)))
}

/**
 * The checks load_elf_binary (and load_elf_interp) make of each PT_LOAD's
 * place: inside user space (-EINVAL; -ENOMEM for an interpreter's), no
 * bigger than memory (the overcommit heuristic's -ENOMEM), its file offset
 * congruent with its address (mmap's -EINVAL). Linux finds these after the
 * point of no return and kills the process; made before anything is mapped,
 * the old program goes on.
 */
function checkSegments(elf: ElfFile, bias: number, memory: number, what: string, badPlace: number): void {
  for (const ph of elf.programHeaders) {
    if (ph.type !== PT_LOAD) continue
    const at = ph.vaddr + bias
    if (at < 0 || at >= TASK_SIZE || ph.memsz > TASK_SIZE || TASK_SIZE - ph.memsz < at)
      throw new ExecError(
        badPlace,
        `${what}: a segment at 0x${BigInt.asUintN(64, BigInt(at)).toString(16)} is not in user space`,
      )
    if (pageUp(ph.memsz) > memory)
      throw new ExecError(ENOMEM, `${what}: a segment of ${ph.memsz} bytes is bigger than memory`)
    if (ph.filesz > 0 && (ph.vaddr - ph.offset) % PAGE !== 0)
      throw new ExecError(EINVAL, `${what}: a segment's file offset and address differ within a page`)
  }
}

export interface ExecArgs {
  filename: string
  argv: readonly string[]
  envp: readonly string[]
  /** 16 bytes for AT_RANDOM (deterministic by default). */
  random?: Uint8Array
}

/**
 * Map one PT_LOAD segment as elf_map does: the file part as a private file
 * mapping (from the page cache when the file is known and the offsets are
 * congruent, else a copy), the tail of its last file page zeroed (padzero),
 * and the rest of memsz as anonymous zero pages (the bss).
 */
function mapSegment(mm: Mm, image: ExecImage, ph: ProgramHeader, bias: number, name: string): void {
  const start = pageDown(ph.vaddr + bias)
  const fileEnd = ph.vaddr + bias + ph.filesz
  const end = pageUp(ph.vaddr + bias + ph.memsz)
  const prot = PROT_READ | (ph.flags & PF_W ? PROT_WRITE : 0) | (ph.flags & PF_X ? PROT_EXEC : 0)
  const pgoff = ph.offset - (ph.vaddr + bias - start)
  // Nothing from the file: all of it is bss (elf_load maps no file pages).
  const mapped = ph.filesz > 0 ? pageUp(fileEnd) : start
  const cached = mm.pageCache !== null && image.file !== undefined && (ph.vaddr - ph.offset) % PAGE === 0
  if (mapped > start)
    mm.addVma({
      start,
      end: mapped,
      prot,
      kind: 'file',
      name,
      shared: false,
      pgoff,
      ...(image.file ? { file: image.file } : {}),
    })
  if (!cached) mm.write(ph.vaddr + bias, image.bytes.subarray(ph.offset, ph.offset + ph.filesz))
  else if (ph.memsz > ph.filesz && fileEnd < mapped) mm.write(fileEnd, new Uint8Array(mapped - fileEnd))
  if (end > mapped) mm.addVma({ start: mapped, end, prot, kind: 'anon', name: '', shared: false })
  // Text is mapped now, not on first use: demand-paged text trips an emulator bug not yet found
  // (bash-static's big here-document corrupts its heap; see the kernel README's known problems).
  if (cached && (prot & PROT_EXEC) !== 0) mm.populate(start, mapped)
}

interface Mapped {
  elf: ElfFile
  bias: number
  /** Where the program headers are in memory (AT_PHDR), if a segment holds them. */
  phdr: number
  /** The end of the highest segment. */
  end: number
}

/** Map every PT_LOAD segment of an image at bias. */
function mapImage(mm: Mm, image: ExecImage, elf: ElfFile, bias: number, name: string): Mapped {
  const ehPhoff = Number(new DataView(image.bytes.buffer, image.bytes.byteOffset).getBigUint64(32, true))
  let end = 0
  let phdr = 0
  for (const ph of elf.programHeaders) {
    if (ph.type !== PT_LOAD) continue
    mapSegment(mm, image, ph, bias, name)
    end = Math.max(end, pageUp(ph.vaddr + bias + ph.memsz))
    if (ehPhoff >= ph.offset && ehPhoff < ph.offset + ph.filesz)
      phdr = ph.vaddr + bias + (ehPhoff - ph.offset)
  }
  return { elf, bias, phdr, end }
}

/** The span an ET_DYN image's segments cover (from its lowest page), for placing it. */
function imageSpan(elf: ElfFile): { low: number; size: number } {
  const loads = elf.programHeaders.filter((p) => p.type === PT_LOAD)
  const low = pageDown(Math.min(...loads.map((p) => p.vaddr)))
  const high = pageUp(Math.max(...loads.map((p) => p.vaddr + p.memsz)))
  return { low, size: high - low }
}

/** AT_HWCAP is CPUID leaf 1 EDX, as on Linux/x86. */
export function loadExecutable(
  mm: Mm,
  image: ExecImage,
  args: ExecArgs,
  cpu: Cpu,
  /** The interpreter a dynamically linked program names, read from the guest's file system (an errno if it cannot be). */
  openInterpreter?: (path: string) => ExecImage | number,
): LoadedProgram {
  try {
    return load(mm, image, args, cpu, openInterpreter)
  } catch (e) {
    // A page for the image or its stack found no memory: execve's -ENOMEM.
    if (e instanceof OutOfMemory) throw new ExecError(ENOMEM, `${args.filename}: out of memory`)
    throw e
  }
}

/** BAD_ADDR: an entry point must be a user address. */
function checkEntry(entry: number, what: string): void {
  if (entry < 0 || entry >= TASK_SIZE)
    throw new ExecError(
      EINVAL,
      `${what}: entry point 0x${BigInt.asUintN(64, BigInt(entry)).toString(16)} is not in user space`,
    )
}

function load(
  mm: Mm,
  image: ExecImage,
  args: ExecArgs,
  cpu: Cpu,
  openInterpreter?: (path: string) => ExecImage | number,
): LoadedProgram {
  const elf = checkExecutable(image.bytes)
  const memory = mm.memory.size
  const progBias = elf.type === ET_DYN ? PIE_BASE : 0
  checkSegments(elf, progBias, memory, args.filename, EINVAL)
  const interpPath = interpreterOf(elf, image.bytes)
  if (interpPath === null) checkEntry(elf.entry + progBias, args.filename)
  const prog = mapImage(mm, image, elf, progBias, args.filename)
  const brk = prog.end
  let interpBase = 0
  let entry = elf.entry + prog.bias
  if (interpPath !== null) {
    const interp = openInterpreter ? openInterpreter(interpPath) : -2
    if (typeof interp === 'number')
      throw new ExecError(-interp, `interpreter ${interpPath}: ${errnoMessage(interp)}`)
    const ielf = checkExecutable(interp.bytes)
    if (interpreterOf(ielf, interp.bytes) !== null)
      throw new ElfError(`${interpPath}: an interpreter with an interpreter`)
    // ld.so goes where an mmap of its size would (top-down below the stack), as load_elf_interp places it.
    // At most 1 TiB, so findFree always has room: at most 73 segments cannot fill 127 TiB of gaps.
    const span = imageSpan(ielf)
    if (span.size > INTERP_SPAN_MAX)
      throw new ExecError(ENOMEM, `interpreter ${interpPath}: its segments span ${span.size} bytes`)
    const bias = ielf.type === ET_DYN ? mm.findFree(span.size) - span.low : 0
    checkSegments(ielf, bias, memory, `interpreter ${interpPath}`, ENOMEM)
    checkEntry(ielf.entry + bias, `interpreter ${interpPath}`)
    mapImage(mm, interp, ielf, bias, interpPath)
    interpBase = bias + span.low
    entry = ielf.entry + bias
  }
  mm.brkStart = brk
  mm.brk = brk
  // Room for the arguments while they are copied in; trimmed below once their size is known.
  const stack: Vma = {
    start: STACK_TOP - STACK_SIZE,
    end: STACK_TOP,
    prot: PROT_READ | PROT_WRITE,
    kind: 'stack',
    name: '[stack]',
    shared: false,
  }
  mm.addVma(stack)

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
    [AT_PHDR, prog.phdr],
    [AT_PHENT, 56],
    [AT_PHNUM, elf.programHeaders.length],
    [AT_PAGESZ, PAGE],
    [AT_BASE, interpBase],
    [AT_FLAGS, 0],
    [AT_ENTRY, elf.entry + prog.bias],
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
  // setup_arg_pages: the stack VMA is the pages the arguments use plus 128 KiB (stack_expand); below
  // that it grows on demand (expand_stack) down to RLIMIT_STACK.
  stack.start = Math.max(STACK_TOP - mm.stackLimit, pageDown(sp) - STACK_EXPAND)
  return { entry, sp, brk, elf }
}
