// Four-level x86-64 page tables, built and edited from the host side.
//
// The tables live in guest physical memory in the architectural format, so
// the MMU walks exactly what a real CPU would, and guest code could walk them
// too. Edits do not flush any TLB: like a real kernel, the caller does that
// (Cpu.invlpg / Machine.flushTlb).

import type { FrameAllocator } from './frame-allocator.js'
import { PAGE_SHIFT, PAGE_SIZE, type PhysicalMemory } from './physical-memory.js'

// PTE bits (low word, plus NX as bit 63 = bit 31 of the high word).
export const PTE_P = 1 << 0
export const PTE_W = 1 << 1
export const PTE_U = 1 << 2
export const PTE_PWT = 1 << 3
export const PTE_PCD = 1 << 4
export const PTE_A = 1 << 5
export const PTE_D = 1 << 6
export const PTE_PS = 1 << 7
export const PTE_G = 1 << 8
/** Bits 9-11 are ignored by the CPU and free for software (Linux keeps its own there). */
export const PTE_SOFT1 = 1 << 9
export const PTE_SOFT2 = 1 << 10
export const PTE_SOFT3 = 1 << 11
/** No-execute, as a flag in probekit's PageFlags (stored in PTE bit 63). */
export const PTE_NX = 0x8000_0000 // marker value in PageFlags.hiFlags
/** Address bits of an entry's low word (frames below 2 GiB). */
const ADDR_MASK_LO = 0xffff_f000 | 0

/** Flags of a leaf mapping: the low-word bits plus nx. */
export interface PageFlags {
  present: boolean
  writable: boolean
  user: boolean
  nx: boolean
  global: boolean
  accessed: boolean
  dirty: boolean
  /** Software bits 9-11 as a 3-bit value. */
  soft: number
}

export interface Mapping {
  frame: number
  flags: PageFlags
  /** Physical address of the PTE (for callers that edit entries directly). */
  ptePhys: number
}

export function pageFlagsToBits(f: Partial<PageFlags>): { lo: number; hi: number } {
  let lo = 0
  if (f.present ?? true) lo |= PTE_P
  if (f.writable) lo |= PTE_W
  if (f.user) lo |= PTE_U
  if (f.global) lo |= PTE_G
  if (f.accessed) lo |= PTE_A
  if (f.dirty) lo |= PTE_D
  lo |= ((f.soft ?? 0) & 7) << 9
  return { lo, hi: f.nx ? PTE_NX | 0 : 0 }
}

function bitsToPageFlags(lo: number, hi: number): PageFlags {
  return {
    present: (lo & PTE_P) !== 0,
    writable: (lo & PTE_W) !== 0,
    user: (lo & PTE_U) !== 0,
    nx: hi < 0,
    global: (lo & PTE_G) !== 0,
    accessed: (lo & PTE_A) !== 0,
    dirty: (lo & PTE_D) !== 0,
    soft: (lo >>> 9) & 7,
  }
}

const TWO_48 = 2 ** 48

/** Index of a canonical linear number's entry at a level (3 = PML4 .. 0 = PT). */
export function tableIndex(addr: number, level: number): number {
  const u = addr < 0 ? addr + TWO_48 : addr
  return Math.floor(u / 2 ** (PAGE_SHIFT + 9 * level)) % 512
}

export class AddressSpace {
  /** Physical address of the PML4: the value for CR3. */
  readonly root: number

  constructor(
    readonly memory: PhysicalMemory,
    readonly frames: FrameAllocator,
    root?: number,
  ) {
    this.root = root ?? frames.alloc() * PAGE_SIZE
  }

  /** Map one 4 KiB page at linear number virt to a frame. Intermediate tables are created user+writable (the leaf decides). */
  map(virt: number, frame: number, flags: Partial<PageFlags>): void {
    const pte = this.entryFor(virt, true)
    const bits = pageFlagsToBits(flags)
    this.memory.write32(pte, ((frame * PAGE_SIZE) & ADDR_MASK_LO) | bits.lo)
    this.memory.write32(pte + 4, bits.hi)
  }

  /** Remove a mapping; returns the frame it pointed to, or -1. */
  unmap(virt: number): number {
    const pte = this.entryFor(virt, false)
    if (pte < 0) return -1
    const lo = this.memory.read32(pte)
    if ((lo & PTE_P) === 0) return -1
    this.memory.write32(pte, 0)
    this.memory.write32(pte + 4, 0)
    return (lo & ADDR_MASK_LO) >>> PAGE_SHIFT
  }

  lookup(virt: number): Mapping | null {
    const pte = this.entryFor(virt, false)
    if (pte < 0) return null
    const lo = this.memory.read32(pte)
    if ((lo & PTE_P) === 0) return null
    const hi = this.memory.read32(pte + 4)
    return { frame: (lo & ADDR_MASK_LO) >>> PAGE_SHIFT, flags: bitsToPageFlags(lo, hi), ptePhys: pte }
  }

  /** Change the flags of an existing mapping (keeps its frame). Returns false when unmapped. */
  protect(virt: number, flags: Partial<PageFlags>): boolean {
    const m = this.lookup(virt)
    if (!m) return false
    this.map(virt, m.frame, { ...m.flags, ...flags })
    return true
  }

  /** Share the upper half (kernel space, PML4 slots 256..511) with another address space, as Linux does. */
  shareKernelHalf(from: AddressSpace): void {
    for (let i = 256; i < 512; i++) {
      this.memory.write32(this.root + i * 8, this.memory.read32(from.root + i * 8))
      this.memory.write32(this.root + i * 8 + 4, this.memory.read32(from.root + i * 8 + 4))
    }
  }

  /** Visit every present leaf in the lower (user) half, or the whole space. */
  forEachMapping(fn: (virt: number, m: Mapping) => void, userHalfOnly = true): void {
    const walk = (table: number, level: number, base: number): void => {
      const end = level === 3 && userHalfOnly ? 256 : 512
      for (let i = 0; i < end; i++) {
        const e = table + i * 8
        const lo = this.memory.read32(e)
        if ((lo & PTE_P) === 0) continue
        let va = base + i * 2 ** (PAGE_SHIFT + 9 * level)
        if (level === 3 && i >= 256) va -= TWO_48
        const next = lo & ADDR_MASK_LO
        if (level === 0)
          fn(va, {
            frame: next >>> PAGE_SHIFT,
            flags: bitsToPageFlags(lo, this.memory.read32(e + 4)),
            ptePhys: e,
          })
        else walk(next >>> 0, level - 1, va)
      }
    }
    walk(this.root, 3, 0)
  }

  /** Free the table frames of the user half (not the mapped frames: their owner puts them). */
  destroyUserTables(): void {
    const free = (table: number, level: number, end: number): void => {
      for (let i = 0; i < end; i++) {
        const e = table + i * 8
        const lo = this.memory.read32(e)
        if ((lo & PTE_P) === 0 || level === 0) continue
        const next = (lo & ADDR_MASK_LO) >>> 0
        free(next, level - 1, 512)
        this.frames.put(next >>> PAGE_SHIFT)
        this.memory.write32(e, 0)
        this.memory.write32(e + 4, 0)
      }
    }
    free(this.root, 3, 256)
  }

  /** Physical address of the PTE for virt, creating tables on the way when asked; -1 when absent. */
  entryFor(virt: number, create: boolean): number {
    let table = this.root
    for (let level = 3; level > 0; level--) {
      const e = table + tableIndex(virt, level) * 8
      let lo = this.memory.read32(e)
      if ((lo & PTE_P) === 0) {
        if (!create) return -1
        const f = this.frames.alloc()
        lo = ((f * PAGE_SIZE) & ADDR_MASK_LO) | PTE_P | PTE_W | PTE_U
        this.memory.write32(e, lo)
        this.memory.write32(e + 4, 0)
      } else if ((lo & PTE_PS) !== 0) {
        throw new Error('large pages are not edited through AddressSpace')
      }
      table = (lo & ADDR_MASK_LO) >>> 0
    }
    return table + tableIndex(virt, 0) * 8
  }
}
