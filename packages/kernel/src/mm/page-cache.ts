// The page cache: one physical frame per page of a file, shared by every
// address space that maps it. Executables' read-only segments map these
// frames directly, so all processes running the same file share its text;
// a private write (mprotect + write, a breakpoint planted by uprobes) takes
// the copy-on-write path and changes that process's copy only.

import type { FrameAllocator, PhysicalMemory } from '@probekit/x86-emu'
import type { RegularFile } from '../fs/vfs.js'
import { PAGE } from './mm.js'

export class PageCache {
  private readonly pages = new Map<RegularFile, Map<number, number>>()

  constructor(
    private readonly memory: PhysicalMemory,
    private readonly frames: FrameAllocator,
  ) {}

  /** The frame holding page `index` of the file (filled from its bytes on first use). The cache keeps one reference. */
  frame(file: RegularFile, index: number): number {
    let m = this.pages.get(file)
    if (!m) {
      m = new Map()
      this.pages.set(file, m)
    }
    let f = m.get(index)
    if (f === undefined) {
      f = this.frames.alloc()
      this.memory.writeBytes(f * PAGE, file.readAt(index * PAGE, PAGE))
      m.set(index, f)
    }
    return f
  }

  /** Pages cached for a file (for tests and /proc-like views). */
  cached(file: RegularFile): number {
    return this.pages.get(file)?.size ?? 0
  }
}
