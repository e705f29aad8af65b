// Loading the guest kernel image (guest/vmlinux) into physical memory and
// mapping it, plus the direct map of all RAM, into the kernel half of the
// address space every process shares.

import { AddressSpace, type Machine, pageFlagsToBits } from '@probekit/x86-emu'
import { PAGE_OFFSET, START_KERNEL_MAP } from './abi.js'
import { type ElfFile, type ElfSymbol, findSection, parseElf, readSymbols } from './exec/elf.js'
import { Kallsyms } from './kallsyms.js'

export interface ExceptionTableEntry {
  insn: number
  fixup: number
}

export interface GuestImage {
  elf: ElfFile
  symbols: ElfSymbol[]
  kallsyms: Kallsyms
  /** _text .. _etext */
  textStart: number
  textEnd: number
  exceptionTable: ExceptionTableEntry[]
  /** Addresses listed in _kprobe_blacklist. */
  blacklist: number[]
  /** The kernel half: image and direct map (init_mm's page tables). */
  kernelSpace: AddressSpace
}

/** Physical address of a kernel-image linear address. */
export function imagePhys(addr: number): number {
  return addr - START_KERNEL_MAP
}

/** Direct-map linear address of a physical address. */
export function directMap(phys: number): number {
  return PAGE_OFFSET + phys
}

export function loadGuestImage(machine: Machine, bytes: Uint8Array): GuestImage {
  const elf = parseElf(bytes)
  const symbols = readSymbols(elf)
  const sym = (name: string): number => {
    const s = symbols.find((x) => x.name === name)
    if (!s) throw new Error(`guest image lacks the symbol ${name}`)
    return s.value
  }
  const mem = machine.memory
  const kernelSpace = new AddressSpace(mem, machine.frames)
  // Sections that occupy memory, copied to their physical home and mapped with their rights.
  const textStart = sym('_text')
  const textEnd = sym('_etext')
  const end = sym('_end')
  const firstFrame = imagePhys(textStart) / 4096
  const lastFrame = Math.ceil(imagePhys(end) / 4096)
  if (imagePhys(end) > mem.size) throw new Error('guest image does not fit in physical memory')
  for (let f = firstFrame; f < lastFrame; f++) machine.frames.reserve(f)
  for (const s of elf.sections) {
    if ((s.flags & 2) === 0 || s.size === 0) continue // SHF_ALLOC
    if (s.type !== 8) mem.writeBytes(imagePhys(s.addr), bytes.subarray(s.offset, s.offset + s.size)) // not NOBITS
  }
  const rodataStart = sym('__start_rodata')
  const dataStart = sym('_sdata')
  for (let f = firstFrame; f < lastFrame; f++) {
    const va = START_KERNEL_MAP + f * 4096
    const text = va >= textStart && va < textEnd
    const writable = va >= dataStart
    kernelSpace.map(va, f, { writable, nx: !text, global: true, user: false })
    void rodataStart
  }
  mapDirect(kernelSpace)
  const kallsyms = imageKallsyms(elf, symbols)
  return {
    elf,
    symbols,
    kallsyms,
    textStart,
    textEnd,
    exceptionTable: readExceptionTable(elf),
    blacklist: readBlacklist(elf),
    kernelSpace,
  }
}

/**
 * The direct map of all RAM (text_poke writes kernel text through it): what a map() per page
 * makes, one page table (512 entries) at a time. entryFor makes each table as map() would, in
 * the same order; the entries are then written in one pass (65,536 map calls for 256 MiB took a
 * tenth of probekit run's start-up).
 */
function mapDirect(space: AddressSpace): void {
  const mem = space.memory
  const { lo, hi } = pageFlagsToBits({ writable: true, nx: true, global: true })
  const frames = mem.frameCount
  for (let f = 0; f < frames; f += 512) {
    const n = Math.min(512, frames - f)
    const pte = space.entryFor(PAGE_OFFSET + f * 4096, true)
    // PAGE_OFFSET is 1 GiB-aligned, so f's entry is its table's first.
    mem.noteWrite(pte, n * 8)
    for (let i = 0; i < n; i++) {
      mem.view.setInt32(pte + i * 8, ((f + i) * 4096) | lo, true)
      mem.view.setInt32(pte + i * 8 + 4, hi, true)
    }
  }
}

/** The image's kallsyms (from its .symtab), without loading it: what a probe definition is checked against. */
export function imageKallsyms(elf: ElfFile, symbols: readonly ElfSymbol[] = readSymbols(elf)): Kallsyms {
  return Kallsyms.fromElf(symbols, (s) => {
    const sec = elf.sections[s.shndx]
    if (!sec || s.shndx === 0 || s.shndx >= 0xff00) return null
    if ((sec.flags & 4) !== 0) return 't' // SHF_EXECINSTR
    if (sec.type === 8) return 'b'
    if ((sec.flags & 1) !== 0) return 'd' // SHF_WRITE
    return 'r'
  })
}

function readExceptionTable(elf: ElfFile): ExceptionTableEntry[] {
  const s = findSection(elf, '__ex_table')
  if (!s) return []
  const v = new DataView(elf.bytes.buffer, elf.bytes.byteOffset + s.offset, s.size)
  const out: ExceptionTableEntry[] = []
  const entry = Math.max(s.entsize, 8)
  for (let o = 0; o + 8 <= s.size; o += entry) {
    out.push({ insn: s.addr + o + v.getInt32(o, true), fixup: s.addr + o + 4 + v.getInt32(o + 4, true) })
  }
  return out
}

function readBlacklist(elf: ElfFile): number[] {
  const s = findSection(elf, '_kprobe_blacklist')
  if (!s) return []
  const v = new DataView(elf.bytes.buffer, elf.bytes.byteOffset + s.offset, s.size)
  const out: number[] = []
  for (let o = 0; o + 8 <= s.size; o += 8) out.push(Number(BigInt.asIntN(64, v.getBigUint64(o, true))))
  return out
}
