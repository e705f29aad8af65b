// The page cache: one physical frame per page of a file, shared by every
// address space that maps it. Executables' read-only segments map these
// frames directly, so all processes running the same file share its text;
// a private write (mprotect + write, a breakpoint planted by uprobes) takes
// the copy-on-write path and changes that process's copy only.

import type { FrameAllocator, PhysicalMemory } from '@probekit/x86-emu'
import type { RegularFile } from '../fs/vfs.js'
import { PAGE } from './mm.js'

export class PageCache {
  private readonly pages = new Map<RegularFile, { version: number; frames: Map<number, number> }>()

  constructor(
    private readonly memory: PhysicalMemory,
    private readonly frames: FrameAllocator,
  ) {}

  /**
   * The frame holding page `index` of the file (filled from its bytes on
   * first use). The cache keeps one reference. A file written since its
   * pages were cached starts over: mappings made before keep the old
   * frames (their own references), new ones see the new bytes.
   */
  frame(file: RegularFile, index: number): number {
    let m = this.pages.get(file)
    if (m && m.version !== file.version) {
      this.drop(file)
      m = undefined
    }
    if (!m) {
      m = { version: file.version, frames: new Map() }
      this.pages.set(file, m)
    }
    let f = m.frames.get(index)
    if (f === undefined) {
      f = this.frames.alloc()
      this.memory.writeBytes(f * PAGE, file.readAt(index * PAGE, PAGE))
      m.frames.set(index, f)
    }
    return f
  }

  /** A file's pages are gone (freed, truncated away): its cached frames no mapping uses go too. */
  forget(file: RegularFile): void {
    this.drop(file)
  }

  private drop(file: RegularFile): void {
    for (const f of this.pages.get(file)?.frames.values() ?? []) this.frames.put(f)
    this.pages.delete(file)
  }

  /**
   * Memory is short: give back every cached page no process maps (the
   * cache's own reference is the last), as reclaim drops clean page cache.
   * How many frames were freed.
   */
  shrink(): number {
    let freed = 0
    for (const m of this.pages.values())
      for (const [index, f] of m.frames)
        if (this.frames.refCount(f) === 1) {
          this.frames.put(f)
          m.frames.delete(index)
          freed++
        }
    return freed
  }

  /** Pages cached for a file (for tests and /proc-like views). */
  cached(file: RegularFile): number {
    return this.pages.get(file)?.frames.size ?? 0
  }
}
