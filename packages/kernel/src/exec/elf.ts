// ELF64 reading for the kernel: the guest image's sections and symbols, and
// user programs' segments. Malformed input gets an ElfError that says what
// is wrong, never an out-of-range read.

import { utf8Decode } from '../utf8.js'

export class ElfError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ElfError'
  }
}

export const PT_LOAD = 1
export const PT_DYNAMIC = 2
export const PT_INTERP = 3
export const PT_TLS = 7
export const PT_GNU_STACK = 0x6474e551
export const PF_X = 1
export const PF_W = 2
export const PF_R = 4
export const ET_EXEC = 2
export const ET_DYN = 3

export interface ProgramHeader {
  type: number
  flags: number
  offset: number
  vaddr: number
  filesz: number
  memsz: number
  align: number
}

export interface SectionHeader {
  name: string
  type: number
  flags: number
  addr: number
  offset: number
  size: number
  link: number
  entsize: number
}

export interface ElfSymbol {
  name: string
  /** Linear number (kernel addresses are negative). */
  value: number
  size: number
  /** STT_* (2 = FUNC, 1 = OBJECT, 0 = NOTYPE). */
  type: number
  /** STB_* (0 = LOCAL, 1 = GLOBAL, 2 = WEAK). */
  bind: number
  shndx: number
}

export interface ElfFile {
  bytes: Uint8Array
  type: number
  machine: number
  entry: number
  programHeaders: ProgramHeader[]
  sections: SectionHeader[]
}

function u64(v: DataView, o: number): number {
  // Linear-number reading: canonical addresses and sizes are exact.
  return Number(BigInt.asIntN(64, v.getBigUint64(o, true)))
}

/** An offset or a size: unsigned, so a huge one stays huge (and out of range) rather than turning negative. */
function size64(v: DataView, o: number): number {
  return Number(v.getBigUint64(o, true))
}

export function parseElf(bytes: Uint8Array): ElfFile {
  if (bytes.length < 64) throw new ElfError('not an ELF file (too short)')
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (v.getUint32(0, false) !== 0x7f454c46) throw new ElfError('not an ELF file (bad magic)')
  if (bytes[4] !== 2) throw new ElfError('32-bit ELF files are not supported (x86-64 only)')
  if (bytes[5] !== 1) throw new ElfError('big-endian ELF files are not supported')
  const type = v.getUint16(16, true)
  const machine = v.getUint16(18, true)
  if (machine !== 62) throw new ElfError(`not an x86-64 ELF file (e_machine ${machine})`)
  const entry = u64(v, 24)
  const phoff = size64(v, 32)
  const shoff = size64(v, 40)
  const phentsize = v.getUint16(54, true)
  const phnum = v.getUint16(56, true)
  const shentsize = v.getUint16(58, true)
  const shnum = v.getUint16(60, true)
  const shstrndx = v.getUint16(62, true)
  const inRange = (off: number, len: number) => off >= 0 && len >= 0 && off + len <= bytes.length
  const programHeaders: ProgramHeader[] = []
  if (phnum > 0) {
    if (phentsize < 56 || !inRange(phoff, phnum * phentsize))
      throw new ElfError('malformed ELF: program headers out of range')
    for (let i = 0; i < phnum; i++) {
      const o = phoff + i * phentsize
      const ph: ProgramHeader = {
        type: v.getUint32(o, true),
        flags: v.getUint32(o + 4, true),
        offset: size64(v, o + 8),
        vaddr: u64(v, o + 16),
        filesz: size64(v, o + 32),
        memsz: size64(v, o + 40),
        align: size64(v, o + 48),
      }
      if (ph.type === PT_LOAD && !inRange(ph.offset, ph.filesz))
        throw new ElfError('malformed ELF: a loadable segment lies outside the file')
      if (ph.type === PT_LOAD && ph.memsz < ph.filesz)
        throw new ElfError('malformed ELF: a loadable segment is smaller in memory than in the file')
      programHeaders.push(ph)
    }
  }
  const sections: SectionHeader[] = []
  if (shnum > 0 && shoff > 0) {
    if (shentsize < 64 || !inRange(shoff, shnum * shentsize))
      throw new ElfError('malformed ELF: section headers out of range')
    const raw = []
    for (let i = 0; i < shnum; i++) {
      const o = shoff + i * shentsize
      raw.push({
        nameOff: v.getUint32(o, true),
        type: v.getUint32(o + 4, true),
        flags: u64(v, o + 8),
        addr: u64(v, o + 16),
        offset: size64(v, o + 24),
        size: size64(v, o + 32),
        link: v.getUint32(o + 40, true),
        entsize: u64(v, o + 56),
      })
    }
    const strtab = raw[shstrndx]
    for (const s of raw) {
      sections.push({ ...s, name: strtab ? cString(bytes, strtab.offset + s.nameOff) : '' })
    }
  }
  return { bytes, type, machine, entry, programHeaders, sections }
}

function cString(bytes: Uint8Array, off: number): string {
  // A name outside the file (a bad sh_name or string table offset) is no name, not a walk from there.
  if (!(off >= 0 && off < bytes.length)) return ''
  let end = off
  while (end < bytes.length && bytes[end] !== 0) end++
  return utf8Decode(bytes.subarray(off, end))
}

export function findSection(elf: ElfFile, name: string): SectionHeader | undefined {
  return elf.sections.find((s) => s.name === name)
}

export function sectionBytes(elf: ElfFile, s: SectionHeader): Uint8Array {
  if (!(s.offset >= 0 && s.offset + s.size <= elf.bytes.length))
    throw new ElfError(`malformed ELF: section ${s.name} out of range`)
  return elf.bytes.subarray(s.offset, s.offset + s.size)
}

const SHT_SYMTAB = 2
const SHT_DYNSYM = 11

/** Symbols of .symtab (empty when stripped). */
export function readSymbols(elf: ElfFile): ElfSymbol[] {
  return readSymbolTable(elf, SHT_SYMTAB)
}

/** Symbols of .dynsym (what a stripped shared library still has), same entry layout. */
export function readDynamicSymbols(elf: ElfFile): ElfSymbol[] {
  return readSymbolTable(elf, SHT_DYNSYM)
}

function readSymbolTable(elf: ElfFile, type: number): ElfSymbol[] {
  const symtab = elf.sections.find((s) => s.type === type)
  if (!symtab) return []
  const strtab = elf.sections[symtab.link]
  if (!strtab) throw new ElfError('malformed ELF: symbol table without a string table')
  const data = sectionBytes(elf, symtab)
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const out: ElfSymbol[] = []
  for (let o = 0; o + 24 <= data.length; o += 24) {
    const info = data[o + 4]
    out.push({
      name: cString(elf.bytes, strtab.offset + v.getUint32(o, true)),
      value: u64(v, o + 8),
      size: u64(v, o + 16),
      type: info & 15,
      bind: info >> 4,
      shndx: v.getUint16(o + 6, true),
    })
  }
  return out
}
