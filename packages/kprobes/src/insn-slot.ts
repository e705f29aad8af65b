// The instruction slot cache (get_insn_slot / free_insn_slot, kernel/kprobes.c):
// executable pages in the module area, split into MAX_INSN_SIZE slots.
// The copies are single-stepped from here, so the pages are mapped R+X in the
// kernel half (shared by every address space) and written through physical memory.

import type { Kernel } from '@probekit/kernel'
import { MAX_INSN_SIZE } from './kprobe.js'

/** MODULES_VADDR (0xffffffffa0000000): within ±2 GiB of kernel text, so RIP-relative copies reach their targets. */
export const MODULES_VADDR = -0x60000000
const PAGE_SIZE = 4096
export const SLOTS_PER_PAGE = PAGE_SIZE / MAX_INSN_SIZE

const SLOT_CLEAN = 0
const SLOT_USED = 2

interface InsnPage {
  va: number
  frame: number
  nused: number
  slotUsed: Uint8Array
}

export class InsnSlotCache {
  private readonly pages: InsnPage[] = []

  constructor(
    private readonly kernel: Kernel,
    private readonly base = MODULES_VADDR,
    /** Bytes per slot: MAX_INSN_SIZE for copies, more for optprobes' detour buffers (optinsn slots). */
    readonly slotSize = MAX_INSN_SIZE,
  ) {}

  /** get_insn_slot: the first clean slot, allocating a new page when all are used. */
  get(): number {
    for (const page of this.pages) {
      const i = page.slotUsed.indexOf(SLOT_CLEAN)
      if (i >= 0) {
        page.slotUsed[i] = SLOT_USED
        page.nused++
        return page.va + i * this.slotSize
      }
    }
    const page = this.newPage()
    page.slotUsed[0] = SLOT_USED
    page.nused = 1
    return page.va
  }

  /** free_insn_slot: callers have already waited for a grace period, so the slot is clean at once. */
  free(slot: number): void {
    const page = this.pageOf(slot)
    if (!page) throw new Error(`not an insn slot: ${slot}`)
    const i = (slot - page.va) / this.slotSize
    if (page.slotUsed[i] !== SLOT_USED) return
    page.slotUsed[i] = SLOT_CLEAN
    page.nused--
    this.write(slot, new Uint8Array(this.slotSize).fill(0xcc))
  }

  /** Write bytes into a slot (through physical memory: the mapping is read-only). */
  write(slot: number, bytes: ArrayLike<number>): void {
    const page = this.pageOf(slot)
    if (!page) throw new Error(`not an insn slot: ${slot}`)
    this.kernel.machine.memory.writeBytes(page.frame * PAGE_SIZE + (slot - page.va), bytes)
  }

  read(slot: number, len: number): Uint8Array {
    const page = this.pageOf(slot)
    if (!page) throw new Error(`not an insn slot: ${slot}`)
    return this.kernel.machine.memory.readBytes(page.frame * PAGE_SIZE + (slot - page.va), len)
  }

  /** Is addr inside one of our pages (a CPU executing a copy)? */
  contains(addr: number): boolean {
    return this.pageOf(addr) !== null
  }

  get usedSlots(): number {
    return this.pages.reduce((n, p) => n + p.nused, 0)
  }

  private pageOf(addr: number): InsnPage | null {
    for (const p of this.pages) if (addr >= p.va && addr < p.va + PAGE_SIZE) return p
    return null
  }

  private newPage(): InsnPage {
    const k = this.kernel
    const frame = k.machine.frames.alloc()
    const va = this.base + this.pages.length * PAGE_SIZE
    // Fill with int3 so a stray fall-through past a copy traps instead of running garbage.
    k.machine.memory.writeBytes(frame * PAGE_SIZE, new Uint8Array(PAGE_SIZE).fill(0xcc))
    k.image.kernelSpace.map(va, frame, { writable: false, nx: false, global: true })
    k.machine.flushTlb(va)
    const page: InsnPage = { va, frame, nused: 0, slotUsed: new Uint8Array(PAGE_SIZE / this.slotSize) }
    this.pages.push(page)
    return page
  }
}
