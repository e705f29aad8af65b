// The XOL ("execute out of line") area: one anonymous r-x page in the
// probed process, named "[uprobes]" in /proc/PID/maps, holding a slot per
// probepoint with a copy of its original instruction. Threads single-step
// the copy there, so the int3 never leaves the text (another thread cannot
// sail past the probepoint while one steps).
//
// Where: just below the lowest mapping of the probed text's run of VMAs
// (or the nearest free page), so a RIP-relative operand's disp32 still
// reaches its target from the slot. The 2010 SSOL area went one page above
// the highest mapping and modern uprobes put "[uprobes]" as high as
// possible, rewriting RIP-relative operands through a scratch register
// instead. A process whose old area outlived its uprobe_process gets it
// back (find_old_ssol_vma).

import { ENOMEM, type Mm, PAGE, PROT_EXEC, PROT_READ, pageDown, type Vma } from '@probekit/kernel'
import { MAX_UINSN_BYTES } from './arch-x86.js'

export const XOL_AREA_NAME = '[uprobes]'
/** mmap_min_addr: nothing is mapped below it. */
const MMAP_MIN_ADDR = 0x10000
/** disp32 reach, less a page of margin. */
const NEAR = 0x7fff0000

export class XolArea {
  /** A slot per MAX_UINSN_BYTES; each owned by one probepoint at a time. */
  private readonly used: boolean[] = new Array(PAGE / MAX_UINSN_BYTES).fill(false)

  private constructor(
    readonly mm: Mm,
    readonly vaddr: number,
  ) {}

  /** xol_alloc_area: the process's area, made near `near` (a probed address) if it has none; -ENOMEM if no room. */
  static get(mm: Mm, near: number): XolArea | number {
    const old = mm.vmas.find((v) => v.name === XOL_AREA_NAME && v.kind === 'anon')
    if (old) return new XolArea(mm, old.start)
    const at = placeNear(mm.vmas, near)
    if (at < 0) return -ENOMEM
    const vma: Vma = {
      start: at,
      end: at + PAGE,
      prot: PROT_READ | PROT_EXEC,
      kind: 'anon',
      name: XOL_AREA_NAME,
      shared: false,
    }
    mm.addVma(vma)
    return new XolArea(mm, at)
  }

  contains(addr: number): boolean {
    return addr >= this.vaddr && addr < this.vaddr + PAGE
  }

  /** xol_get_insn_slot: a free slot's address, or -ENOMEM when every slot is taken. */
  allocSlot(): number {
    const i = this.used.indexOf(false)
    if (i < 0) return -ENOMEM
    this.used[i] = true
    return this.vaddr + i * MAX_UINSN_BYTES
  }

  xol_free_insn_slot(slot: number): void {
    this.used[(slot - this.vaddr) / MAX_UINSN_BYTES] = false
  }

  /** Fill a slot (the page is r-x for the process; mm.write writes it from outside, as access_process_vm). */
  writeSlot(slot: number, bytes: Uint8Array): void {
    this.mm.write(slot, bytes)
  }
}

/** The highest free page below the run of VMAs around near, else the free page closest to it; -1 if none in reach. */
function placeNear(vmas: readonly Vma[], near: number): number {
  const sorted = [...vmas].sort((a, b) => a.start - b.start)
  const free = (a: number) => a >= MMAP_MIN_ADDR && !sorted.some((v) => v.start < a + PAGE && v.end > a)
  let i = sorted.findIndex((v) => near >= v.start && near < v.end)
  if (i >= 0) {
    while (i > 0 && sorted[i - 1].end === sorted[i].start) i--
    const below = sorted[i].start - PAGE
    if (free(below) && near - below < NEAR) return below
  }
  // Any hole: its top page if below near, its bottom page if above; the nearest wins.
  let best = -1
  let prevEnd = MMAP_MIN_ADDR
  for (const v of [...sorted, { start: pageDown(near) + NEAR, end: 0 }]) {
    if (v.start - prevEnd >= PAGE) {
      const cand = v.start <= near ? v.start - PAGE : prevEnd
      if (
        free(cand) &&
        Math.abs(cand - near) < NEAR &&
        (best < 0 || Math.abs(cand - near) < Math.abs(best - near))
      )
        best = cand
    }
    prevEnd = Math.max(prevEnd, v.end)
  }
  return best
}
