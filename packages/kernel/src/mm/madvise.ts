// madvise(addr, len, advice) (mm/madvise.c). Most advice only tunes paging
// and needs nothing here; MADV_DONTNEED and MADV_FREE on private anonymous
// memory drop the pages, so the next touch reads zeros (glibc does this to
// the unused part of an exiting thread's stack; allocators to free memory).

import { EINVAL, ENOMEM } from '../errno.js'
import type { SyscallContext } from '../syscalls.js'
import { PAGE, pageUp } from './mm.js'

const MADV_DONTNEED = 4
const MADV_FREE = 8
/** The advice values Linux 6.x accepts (0-25 except the unused 5-7). */
const KNOWN = (a: number) => a >= 0 && a <= 25 && (a < 5 || a > 7)

export function sysMadvise(
  { kernel, task }: SyscallContext,
  addr: number,
  len: number,
  advice: number,
): number {
  if (addr % PAGE !== 0 || len < 0 || !KNOWN(advice)) return -EINVAL
  const end = addr + pageUp(len)
  if (end === addr) return 0
  const mm = task.mm
  // Every page of the range must be mapped (the mapped parts are still advised).
  let covered = 0
  for (const v of mm.vmas) covered += Math.max(0, Math.min(v.end, end) - Math.max(v.start, addr))
  if (advice === MADV_DONTNEED || advice === MADV_FREE) {
    let dropped = false
    for (const v of mm.vmas) {
      // Shared memory keeps its contents; file mappings would be re-read (not dropped here: copied in at mmap).
      if (v.shared || v.kind === 'file' || v.end <= addr || v.start >= end) continue
      for (const a of mm.presentPages(Math.max(v.start, addr), Math.min(v.end, end))) {
        const f = mm.space.unmap(a)
        if (f >= 0) {
          mm.frames.put(f)
          dropped = true
        }
      }
    }
    // Other threads of the process may hold the dropped translations in their TLBs.
    if (dropped) kernel.machine.flushTlb()
  }
  return covered === end - addr ? 0 : -ENOMEM
}
