// tmpfs's size limit (mm/shmem.c: shmem_sb_info's max_blocks and
// used_blocks). Every page of regular-file data the in-memory file system
// holds (files the guest writes, host files copied up for writing) is
// charged here; a page that cannot be charged is ENOSPC, so a guest that
// fills /tmp gets "No space left on device" instead of growing the host's
// heap. Pages are held sparsely: a hole (truncate up, a seek past the end)
// costs nothing, as on tmpfs.

export const SHMEM_PAGE = 4096

/** A file the accounting may have to free later (unlinked, closed, but still mapped). */
export interface ShmemOrphan {
  /** Free its pages if nothing maps it any more; whether it did. */
  reclaim(): boolean
}

export class ShmemSb {
  /** The size= option in pages (default: no limit until the kernel sets half of RAM). */
  maxBlocks = Number.POSITIVE_INFINITY
  usedBlocks = 0
  /** The most one read may return (the guest's RAM: more could not land anywhere). */
  maxRead = Number.POSITIVE_INFINITY
  /** Whether a process still maps the file (its pages must stay until the last mapping goes). */
  mapped: (file: object) => boolean = () => false
  /** A freed file's pages leave the page cache too. */
  readonly evictHooks: ((file: object) => void)[] = []
  /** Unlinked, closed files some mapping still holds: freed when reclaim finds them unmapped. */
  private readonly orphans = new Set<ShmemOrphan>()

  /** size=: bytes, rounded up to whole pages. */
  setSize(bytes: number): void {
    if (!Number.isSafeInteger(bytes) || bytes < 0)
      throw new Error(`tmpfs size: ${bytes} is not a number of bytes`)
    this.maxBlocks = Math.ceil(bytes / SHMEM_PAGE)
  }

  get freeBlocks(): number {
    return Math.max(0, this.maxBlocks - this.usedBlocks)
  }

  /**
   * shmem_inode_acct_blocks: take n pages, or none when they do not fit (after reclaiming orphans).
   * force: files the kernel itself lays in (a program a test or the command line puts in place) always fit.
   */
  charge(n: number, force = false): boolean {
    if (this.usedBlocks + n > this.maxBlocks && !force) {
      this.reclaim()
      if (this.usedBlocks + n > this.maxBlocks) return false
    }
    this.usedBlocks += n
    return true
  }

  uncharge(n: number): void {
    this.usedBlocks = Math.max(0, this.usedBlocks - n)
  }

  orphan(file: ShmemOrphan): void {
    this.orphans.add(file)
  }

  /** Free the orphans no process maps any more (before ENOSPC, and before statfs reports). */
  reclaim(): void {
    for (const o of this.orphans) if (o.reclaim()) this.orphans.delete(o)
  }
}

/** A regular file's bytes: page index to its 4 KiB, only for pages written (holes read as zeros). */
export class ShmemPages {
  private readonly pages = new Map<number, Uint8Array>()
  /** Pages fallocate made and nothing wrote yet (!Uptodate folios): SEEK_DATA and SEEK_HOLE take them for holes. */
  private readonly unwritten = new Set<number>()
  constructor(readonly sb: ShmemSb) {}

  /**
   * mapping_seek_hole_data over [start, end): SEEK_DATA's first byte in a
   * written page (-ENXIO: none), SEEK_HOLE's first byte outside one (end at most).
   */
  seekHoleData(start: bigint, end: bigint, data: boolean): bigint | number {
    if (end <= start) return -6 // ENXIO
    const page = BigInt(SHMEM_PAGE)
    const first = start / page
    const written = [...this.pages.keys()]
      .filter((i) => !this.unwritten.has(i) && BigInt(i) >= first && BigInt(i) * page < end)
      .sort((a, b) => a - b)
    let at = start
    for (const i of written) {
      const pos = BigInt(i) * page
      if (at < pos) {
        if (!data) return at
        at = pos
      }
      if (data) return at
      at = pos + page
      if (at >= end) break
    }
    if (data) return -6
    return at > end ? end : at
  }

  /** Pages held (st_blocks / 8). */
  get count(): number {
    return this.pages.size
  }

  /** Copy [pos, pos + out.length) into out (holes stay zero). */
  readInto(pos: number, out: Uint8Array): void {
    let done = 0
    while (done < out.length) {
      const at = pos + done
      const index = Math.floor(at / SHMEM_PAGE)
      const off = at - index * SHMEM_PAGE
      const n = Math.min(SHMEM_PAGE - off, out.length - done)
      const page = this.pages.get(index)
      if (page) out.set(page.subarray(off, off + n), done)
      done += n
    }
  }

  /** Write data at pos, page by page; how many bytes fit before a page could not be charged. */
  write(pos: number, data: Uint8Array, force = false): number {
    let done = 0
    while (done < data.length) {
      const at = pos + done
      const index = Math.floor(at / SHMEM_PAGE)
      const off = at - index * SHMEM_PAGE
      const n = Math.min(SHMEM_PAGE - off, data.length - done)
      let page = this.pages.get(index)
      if (!page) {
        if (!this.sb.charge(1, force)) break
        page = new Uint8Array(SHMEM_PAGE)
        this.pages.set(index, page)
      }
      this.unwritten.delete(index)
      page.set(data.subarray(done, done + n), off)
      done += n
    }
    return done
  }

  /** Store a whole page unless it is all zeros (a copy-up keeps a host file's holes); false when not charged. */
  storePage(index: number, bytes: Uint8Array): boolean {
    if (bytes.every((b) => b === 0)) return true
    if (!this.pages.has(index) && !this.sb.charge(1)) return false
    const page = new Uint8Array(SHMEM_PAGE)
    page.set(bytes.subarray(0, SHMEM_PAGE))
    this.pages.set(index, page)
    this.unwritten.delete(index)
    return true
  }

  /** shmem_fallocate: every page of [first, end) held, charged all at once or not at all. */
  allocate(first: number, end: number): boolean {
    // Too many pages missing whatever is held already: no need to look at each (a huge len).
    if (end - first - this.pages.size > this.sb.freeBlocks) {
      this.sb.reclaim()
      if (end - first - this.pages.size > this.sb.freeBlocks) return false
    }
    let missing = 0
    for (let i = first; i < end; i++) if (!this.pages.has(i)) missing++
    if (!this.sb.charge(missing)) return false
    // A new page stays unwritten; one fallocated before is zeroed and made up to date now (SGP_FALLOC).
    for (let i = first; i < end; i++)
      if (!this.pages.has(i)) {
        this.pages.set(i, new Uint8Array(SHMEM_PAGE))
        this.unwritten.add(i)
      } else this.unwritten.delete(i)
    return true
  }

  /** FALLOC_FL_PUNCH_HOLE: zeros over [pos, pos + len); the whole pages in it are given back. */
  punch(pos: number, len: number): void {
    const end = pos + len
    const first = Math.ceil(pos / SHMEM_PAGE)
    const last = Math.floor(end / SHMEM_PAGE)
    let freed = 0
    for (const index of [...this.pages.keys()])
      if (index >= first && index < last) {
        this.pages.delete(index)
        this.unwritten.delete(index)
        freed++
      }
    this.sb.uncharge(freed)
    // The partial pages at either end keep their page, zeroed over the range.
    const head = this.pages.get(Math.floor(pos / SHMEM_PAGE))
    if (head)
      head.fill(0, pos % SHMEM_PAGE, Math.min(SHMEM_PAGE, end - Math.floor(pos / SHMEM_PAGE) * SHMEM_PAGE))
    const tail = this.pages.get(last)
    if (tail && last * SHMEM_PAGE >= pos) tail.fill(0, 0, end - last * SHMEM_PAGE)
  }

  /** shmem_undo_range: drop the pages past len and zero the tail of the one it ends in. */
  truncate(len: number): void {
    const keep = Math.ceil(len / SHMEM_PAGE)
    let freed = 0
    for (const index of this.pages.keys())
      if (index >= keep) {
        this.pages.delete(index)
        this.unwritten.delete(index)
        freed++
      }
    this.sb.uncharge(freed)
    const last = this.pages.get(Math.floor(len / SHMEM_PAGE))
    if (last) last.fill(0, len % SHMEM_PAGE)
  }

  /** Give every page back. */
  clear(): void {
    this.sb.uncharge(this.pages.size)
    this.pages.clear()
    this.unwritten.clear()
  }
}
