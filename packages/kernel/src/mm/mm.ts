// A process address space (mm_struct): VMAs over an x86-emu AddressSpace,
// with demand paging and copy-on-write driven by page faults.

import { AddressSpace, type FrameAllocator, type PhysicalMemory } from '@probekit/x86-emu'
import { TASK_SIZE } from '../abi.js'
import type { ExecLayout } from '../fs/proc/exec-layout.js'
import type { RegularFile } from '../fs/vfs.js'
import type { PageCache } from './page-cache.js'

export const PAGE = 4096
export const PROT_READ = 1
export const PROT_WRITE = 2
export const PROT_EXEC = 4

export interface Vma {
  start: number
  end: number
  prot: number
  /** 'anon' memory is zero-filled on first touch; 'file' pages come from `backing` (copied in at creation). */
  kind: 'anon' | 'file' | 'stack' | 'heap'
  name: string
  /** Shared mappings (MAP_SHARED) are not copied on fork. */
  shared: boolean
  /** A file mapping's file (vm_file), for /proc/PID/maps and the page cache. */
  file?: RegularFile
  /** The byte offset in the file that vma.start maps (vm_pgoff * PAGE_SIZE). */
  pgoff?: number
}

/** The part of a VMA from start on (split_vma): a file mapping's offset moves with its start. */
export function vmaFrom(v: Vma, start: number): Vma {
  return v.pgoff === undefined ? { ...v, start } : { ...v, start, pgoff: v.pgoff + (start - v.start) }
}

/** stack_guard_gap: 256 pages kept free below a growing stack. */
export const STACK_GUARD_GAP = 256 * PAGE
/** The default RLIMIT_STACK (8 MiB). */
export const _STK_LIM = 8 * 1024 * 1024

export const pageDown = (a: number) => Math.floor(a / PAGE) * PAGE
export const pageUp = (a: number) => Math.ceil(a / PAGE) * PAGE

/** Longer ranges than this are searched for present pages through the page table, not page by page. */
const PRESENT_WALK_PAGES = 4096

export class Mm {
  readonly space: AddressSpace
  vmas: Vma[] = []
  brkStart = 0
  brk = 0
  /** Next address to try for mmap without a hint (grows down like Linux's top-down layout). */
  mmapBase = 0x7f0000000000
  users = 1
  /** MMF_DUMPABLE (prctl PR_SET_DUMPABLE): 1 for a fresh mm, inherited by fork. */
  dumpable = 1
  /** Where file mappings' pages come from (null: file mappings are copied in when made). */
  pageCache: PageCache | null = null
  /**
   * flush_tlb_page on every CPU: a present mapping changed (copy-on-write, a
   * private copy made from the host side), so no CPU may go on using the old one.
   */
  tlbShootdown: ((va: number) => void) | null = null
  /** What exec laid out (exe_file, arg_start .. env_end, saved_auxv): /proc/PID reads it. */
  execLayout: ExecLayout | null = null
  /** rlimit(RLIMIT_STACK) of the process using this mm, in bytes: how far the stack may grow. */
  stackLimit = _STK_LIM

  constructor(
    readonly memory: PhysicalMemory,
    readonly frames: FrameAllocator,
    kernel: AddressSpace,
  ) {
    this.space = new AddressSpace(memory, frames)
    this.space.shareKernelHalf(kernel)
  }

  findVma(addr: number): Vma | undefined {
    return this.vmas.find((v) => addr >= v.start && addr < v.end)
  }

  /** Add a mapping, replacing whatever was there (MAP_FIXED semantics). */
  addVma(vma: Vma): void {
    this.unmapRange(vma.start, vma.end)
    this.vmas.push(vma)
    this.vmas.sort((a, b) => a.start - b.start)
  }

  /** Told of each range about to be unmapped that has something mapped in it (uprobe_munmap's hook). */
  readonly unmapHooks: ((start: number, end: number) => void)[] = []

  /**
   * The pages of [from, to) that are present: looked up one by one in a short range, found by a
   * walk of the page table in a long one (a PROT_READ mapping may span 2^46 bytes, 2^34 pages).
   */
  presentPages(from: number, to: number): number[] {
    const out: number[] = []
    if ((to - from) / PAGE <= PRESENT_WALK_PAGES) {
      for (let a = from; a < to; a += PAGE) if (this.space.lookup(a)) out.push(a)
    } else
      this.space.forEachMapping((va) => {
        if (va >= from && va < to) out.push(va)
      })
    return out
  }

  /** Remove [start, end) from the VMAs and free its pages. */
  unmapRange(start: number, end: number): void {
    if (this.unmapHooks.length > 0 && this.vmas.some((v) => v.start < end && v.end > start))
      for (const hook of [...this.unmapHooks]) hook(start, end)
    const next: Vma[] = []
    const gone: [number, number][] = []
    for (const v of this.vmas) {
      if (v.end <= start || v.start >= end) {
        next.push(v)
        continue
      }
      if (v.start < start) next.push({ ...v, end: start })
      if (v.end > end) next.push(vmaFrom(v, end))
      gone.push([Math.max(v.start, start), Math.min(v.end, end)])
    }
    this.vmas = next
    // Pages exist only inside VMAs: walk those parts, not the range (munmap of 2^46 bytes is one call).
    // A freed frame goes back to the allocator: no CPU may keep writing it through a stale TLB entry
    // (flush_tlb_range before the pages are freed, as zap_page_range's tlb_finish_mmu).
    for (const [from, to] of gone)
      for (const a of this.presentPages(from, to)) {
        const f = this.space.unmap(a)
        if (f < 0) continue
        this.tlbShootdown?.(a)
        this.frames.put(f)
      }
  }

  /** Change protection of [start, end); existing pages get the new rights (write stays off for shared CoW frames). */
  protect(start: number, end: number, prot: number): void {
    const next: Vma[] = []
    for (const v of this.vmas) {
      if (v.end <= start || v.start >= end) {
        next.push(v)
        continue
      }
      if (v.start < start) next.push({ ...v, end: start })
      next.push({ ...vmaFrom(v, Math.max(v.start, start)), end: Math.min(v.end, end), prot })
      if (v.end > end) next.push(vmaFrom(v, end))
    }
    this.vmas = next.sort((a, b) => a.start - b.start)
    // Only the pages of the VMAs in the range (the range may be 2^46 bytes).
    for (const v of this.vmas) {
      if (v.end <= start || v.start >= end) continue
      for (const a of this.presentPages(Math.max(v.start, start), Math.min(v.end, end))) {
        const m = this.space.lookup(a)
        if (!m) continue
        const writable = (prot & PROT_WRITE) !== 0 && this.frames.refCount(m.frame) === 1
        this.space.map(a, m.frame, { ...m.flags, writable, nx: (prot & PROT_EXEC) === 0 })
      }
    }
  }

  /** Find a free range of len bytes (top-down from mmapBase). */
  findFree(len: number, hint = 0): number {
    if (hint && this.isFree(pageDown(hint), len)) return pageDown(hint)
    let top = this.mmapBase
    for (;;) {
      const start = top - len
      const clash = this.vmas.find((v) => v.start < top && v.end > start)
      if (!clash) {
        this.mmapBase = start
        return start
      }
      top = clash.start
      if (top - len < 0x10000) throw new Error('out of address space')
    }
  }

  private isFree(start: number, len: number): boolean {
    return (
      start >= 0x10000 &&
      start + len <= TASK_SIZE &&
      !this.vmas.some((v) => v.start < start + len && v.end > start)
    )
  }

  /**
   * Resolve a user page fault: demand-zero a page of a VMA, or copy a
   * copy-on-write page. Returns false when the access is not allowed (SIGSEGV).
   */
  handleFault(addr: number, write: boolean, exec: boolean): boolean {
    const vma = this.findVma(addr) ?? this.expandStack(addr)
    if (!vma) return false
    if (write && (vma.prot & PROT_WRITE) === 0) return false
    if (exec && (vma.prot & PROT_EXEC) === 0) return false
    if (!write && !exec && (vma.prot & (PROT_READ | PROT_WRITE | PROT_EXEC)) === 0) return false
    const page = pageDown(addr)
    const m = this.space.lookup(page)
    if (!m) {
      const file = this.fileBacked(vma)
      if (file) {
        // A file page: the page cache's frame, shared read-only; a write to a private mapping copies it now.
        const frame = file.cache.frame(file.file, (file.pgoff + (page - vma.start)) / PAGE)
        const flags = { user: true, nx: (vma.prot & PROT_EXEC) === 0 }
        if (write && !vma.shared) {
          const copy = this.frames.alloc()
          this.memory.writeBytes(copy * PAGE, this.memory.readBytes(frame * PAGE, PAGE))
          this.space.map(page, copy, { ...flags, writable: true })
        } else {
          this.space.map(page, frame, { ...flags, writable: vma.shared && (vma.prot & PROT_WRITE) !== 0 })
          this.frames.get(frame)
        }
        return true
      }
      this.space.map(page, this.frames.alloc(), {
        user: true,
        writable: (vma.prot & PROT_WRITE) !== 0,
        nx: (vma.prot & PROT_EXEC) === 0,
      })
      return true
    }
    if (write && !m.flags.writable) {
      // Copy-on-write: the last sharer just regains write access.
      if (this.frames.refCount(m.frame) > 1) {
        const copy = this.frames.alloc()
        this.memory.writeBytes(copy * PAGE, this.memory.readBytes(m.frame * PAGE, PAGE))
        this.frames.put(m.frame)
        this.space.map(page, copy, { ...m.flags, writable: true })
      } else {
        this.space.map(page, m.frame, { ...m.flags, writable: true })
      }
      this.tlbShootdown?.(page)
      return true
    }
    return false
  }

  /**
   * expand_stack: an address just below the stack (VM_GROWSDOWN) extends it down to its page, unless
   * the stack would outgrow RLIMIT_STACK or come within the guard gap of the mapping below it. The
   * grown VMA, or undefined (SIGSEGV).
   */
  private expandStack(addr: number): Vma | undefined {
    const i = this.vmas.findIndex((v) => v.start > addr)
    const vma = i < 0 ? undefined : this.vmas[i]
    if (vma?.kind !== 'stack') return undefined
    const start = pageDown(addr)
    if (vma.end - start > this.stackLimit) return undefined
    const prev = i > 0 ? this.vmas[i - 1] : undefined
    if (prev && prev.kind !== 'stack' && prev.prot !== 0 && start - prev.end < STACK_GUARD_GAP)
      return undefined
    vma.start = start
    return vma
  }

  /**
   * A VMA whose pages come from the page cache: a private file mapping, or
   * a read-only shared one (a shared writable one is a copy: its writes
   * would not reach the file).
   */
  private fileBacked(vma: Vma): { file: RegularFile; cache: PageCache; pgoff: number } | null {
    if (!vma.file || !this.pageCache || (vma.shared && (vma.prot & PROT_WRITE) !== 0)) return null
    return { file: vma.file, cache: this.pageCache, pgoff: vma.pgoff ?? 0 }
  }

  /** Fault in every page of [start, end) as a read would (MAP_POPULATE, mlock). */
  populate(start: number, end: number): void {
    for (let va = pageDown(start); va < end; va += PAGE)
      if (!this.space.lookup(va)) this.handleFault(va, false, false)
  }

  /**
   * Put bytes into the address space (host side, e.g. the ELF loader),
   * faulting pages in as needed, whatever the VMA's protection. A page
   * shared with others (the page cache, a fork) is copied first, so only
   * this address space sees the bytes.
   */
  write(addr: number, data: Uint8Array): void {
    for (let k = 0; k < data.length; ) {
      const page = pageDown(addr + k)
      let m = this.space.lookup(page)
      if (!m) {
        this.handleFault(page, false, false) || this.forcePage(page)
        m = this.space.lookup(page)!
      }
      if (this.frames.refCount(m.frame) > 1) {
        const copy = this.frames.alloc()
        this.memory.writeBytes(copy * PAGE, this.memory.readBytes(m.frame * PAGE, PAGE))
        this.frames.put(m.frame)
        this.space.map(page, copy, m.flags)
        this.tlbShootdown?.(page)
        m = this.space.lookup(page)!
      }
      const off = addr + k - page
      const n = Math.min(PAGE - off, data.length - k)
      this.memory.writeBytes(m.frame * PAGE + off, data.subarray(k, k + n))
      k += n
    }
  }

  private forcePage(page: number): boolean {
    const vma = this.findVma(page)
    this.space.map(page, this.frames.alloc(), {
      user: true,
      writable: vma ? (vma.prot & PROT_WRITE) !== 0 : false,
      nx: vma ? (vma.prot & PROT_EXEC) === 0 : true,
    })
    return true
  }

  /** Copy-on-write duplicate (fork): private pages become shared read-only in both. */
  fork(kernel: AddressSpace): Mm {
    const child = new Mm(this.memory, this.frames, kernel)
    child.vmas = this.vmas.map((v) => ({ ...v }))
    child.brkStart = this.brkStart
    child.brk = this.brk
    child.mmapBase = this.mmapBase
    child.dumpable = this.dumpable
    child.pageCache = this.pageCache
    child.tlbShootdown = this.tlbShootdown
    child.execLayout = this.execLayout
    child.stackLimit = this.stackLimit
    try {
      this.space.forEachMapping((va, m) => {
        const vma = this.findVma(va)
        const shared = vma?.shared === true
        // The child's page tables first: if memory runs out there, no reference was taken for it.
        child.space.map(va, m.frame, { ...m.flags, writable: shared ? m.flags.writable : false })
        this.frames.get(m.frame)
        if (!shared && m.flags.writable) this.space.map(va, m.frame, { ...m.flags, writable: false })
      })
    } catch (e) {
      // Out of memory half way (dup_mmap's failure): what the child got goes back.
      child.release()
      throw e
    }
    return child
  }

  /** What the OOM killer weighs and reports: sizes in pages (get_mm_rss, mm_pgtables_bytes). */
  usage(): { totalVm: number; anonRss: number; fileRss: number; pgtables: number } {
    let anonRss = 0
    let fileRss = 0
    const tables = new Set<number>()
    this.space.forEachMapping((va, m) => {
      if (this.findVma(va)?.kind === 'file') fileRss++
      else anonRss++
      tables.add(Math.floor(m.ptePhys / PAGE))
    })
    let totalVm = 0
    for (const v of this.vmas) totalVm += (v.end - v.start) / PAGE
    // The leaf tables seen, the root, and roughly one directory level above each.
    const pgtables = tables.size > 0 ? tables.size + 2 + Math.ceil(tables.size / 512) : 1
    return { totalVm, anonRss, fileRss, pgtables }
  }

  /** Free everything (exit or exec). */
  release(): void {
    if (--this.users > 0) return
    this.space.forEachMapping((_va, m) => this.frames.put(m.frame))
    this.space.destroyUserTables()
    this.frames.put(this.space.root / PAGE)
    this.vmas = []
  }
}
