// The host's system calls for memory: brk, mmap, munmap, mprotect, mremap
// (mm/), registered into the kernel's syscall table by syscalls.ts.

import { TASK_SIZE } from '../abi.js'
import { EFAULT, EINVAL, ENOMEM } from '../errno.js'
import { fileOf } from '../fs/files.js'
import { RegularFile } from '../fs/vfs.js'
import type { Kernel } from '../kernel.js'
import type { SyscallDef } from '../syscalls.js'
import { sysMadvise } from './madvise.js'
import { type Mm, PAGE, PROT_EXEC, PROT_READ, PROT_WRITE, pageUp, type Vma, vmaFrom } from './mm.js'
import { accessOk, copyToUser } from './user-memory.js'

/** The bits arch_validate_prot accepts (READ, WRITE, EXEC, SEM); PROT_GROWSDOWN | PROT_GROWSUP. */
const PROT_ALL = 0xf
const PROT_GROWS = 0x03000000

/** How far from start the VMAs cover [start, end) without a hole: start itself when none holds it. */
function contiguousEnd(mm: Mm, start: number, end: number): number {
  let at = start
  for (const v of mm.vmas) {
    if (v.end <= at) continue
    if (v.start > at || at >= end) break
    at = v.end
  }
  return Math.min(at, end)
}

const MAP_SHARED = 1
const MAP_FIXED = 0x10
const MAP_ANONYMOUS = 0x20

/**
 * __vm_enough_memory under the default overcommit policy (OVERCOMMIT_GUESS):
 * a private writable mapping (memory it may really use) larger than all
 * of RAM (there is no swap) is refused; anything smaller is granted, and
 * running short later is the OOM killer's business.
 */
function vmEnoughMemory(kernel: Kernel, bytes: number): boolean {
  return bytes / PAGE <= kernel.machine.memory.frameCount
}

export function registerMmSyscalls(def: SyscallDef): void {
  def(12, 'brk', ({ kernel, task }, addr) => {
    const mm = task.mm
    if (addr === 0 || addr < mm.brkStart) return mm.brk
    const newEnd = pageUp(addr)
    const oldEnd = pageUp(mm.brk)
    if (newEnd > oldEnd) {
      if (mm.vmas.some((v) => v.start < newEnd && v.end > oldEnd)) return mm.brk
      if (!vmEnoughMemory(kernel, newEnd - oldEnd)) return mm.brk
      mm.addVma({
        start: oldEnd,
        end: newEnd,
        prot: PROT_READ | PROT_WRITE,
        kind: 'heap',
        name: '[heap]',
        shared: false,
      })
    } else if (newEnd < oldEnd) mm.unmapRange(newEnd, oldEnd)
    mm.brk = addr
    return addr
  })

  def(9, 'mmap', (ctx, addr, len, prot, flags, fd, off) => {
    const mm = ctx.task.mm
    if (len <= 0 || addr % PAGE !== 0 || off % PAGE !== 0) return -EINVAL
    const size = pageUp(len)
    // get_unmapped_area: a length or a fixed range past TASK_SIZE is ENOMEM (not a host loop or throw).
    if (size > TASK_SIZE || ((flags & MAP_FIXED) !== 0 && (addr < 0 || addr > TASK_SIZE - size)))
      return -ENOMEM
    // VM_ACCOUNT: private writable memory (anonymous or a private file copy) counts against RAM.
    if ((prot & PROT_WRITE) !== 0 && (flags & MAP_SHARED) === 0 && !vmEnoughMemory(ctx.kernel, size))
      return -ENOMEM
    let start: number
    try {
      start = (flags & MAP_FIXED) !== 0 ? addr : mm.findFree(size, addr)
    } catch {
      return -ENOMEM // no hole that large
    }
    const kind = (flags & MAP_ANONYMOUS) !== 0 ? 'anon' : 'file'
    let file: RegularFile | undefined
    let name = ''
    if ((flags & MAP_ANONYMOUS) === 0) {
      const f = fileOf(ctx.task, fd)
      if (typeof f === 'number') return f
      if (!(f.inode instanceof RegularFile)) return -19
      file = f.inode
      name = f.path
    }
    const vma: Vma = {
      start,
      end: start + size,
      prot,
      kind,
      name,
      shared: (flags & MAP_SHARED) !== 0,
      ...(file ? { file, pgoff: off } : {}),
    }
    mm.addVma(vma)
    // A shared writable file mapping is a copy made now (its writes would not reach the file); executable
    // file pages are mapped now too (as the loader maps text); the rest comes from the page cache on first use.
    if (file && (flags & MAP_SHARED) !== 0 && (prot & PROT_WRITE) !== 0)
      mm.write(start, file.readAt(off, len))
    // (Only the pages the file has: the mapping may be far larger than the file.)
    else if (file && (prot & PROT_EXEC) !== 0)
      mm.populate(start, start + Math.min(size, pageUp(Math.max(0, file.size() - off))))
    ctx.kernel.notifyMmap(ctx.task, vma)
    return start
  })
  // do_vmi_munmap: page-aligned, below TASK_SIZE, a length that fits and is not 0 after rounding.
  def(11, 'munmap', ({ task }, addr, len) => {
    if (addr % PAGE !== 0 || addr < 0 || addr > TASK_SIZE || len < 0 || len > TASK_SIZE - addr) return -EINVAL
    if (len === 0) return -EINVAL
    task.mm.unmapRange(addr, addr + pageUp(len))
    return 0
  })
  /**
   * do_mprotect_pkey: GROWSDOWN and GROWSUP together, an unaligned start
   * EINVAL; a length of 0 does nothing; a range that wraps ENOMEM; bits
   * other than PROT_READ/WRITE/EXEC/SEM EINVAL. Then the VMAs from start on
   * change until the first hole, which is ENOMEM (none before it: nothing changes).
   */
  def(10, 'mprotect', ({ task, cpu }, addr, len, protArg) => {
    // prot is an unsigned long: its low 32 bits are exact here, anything above them is an unknown bit.
    const low = protArg >>> 0
    if (((low >>> 24) & 3) === 3) return -EINVAL
    if (addr % PAGE !== 0) return -EINVAL
    if (len === 0) return 0
    const end = addr + pageUp(len)
    if (len < 0 || end <= addr || end > 2 ** 64) return -ENOMEM
    if (protArg < 0 || protArg >= 2 ** 32 || (low & ~(PROT_ALL | PROT_GROWS)) !== 0) return -EINVAL
    const prot = low & PROT_ALL
    const reach = contiguousEnd(task.mm, addr, end)
    if (reach > addr) {
      task.mm.protect(addr, reach, prot)
      cpu.flushTlb()
    }
    return reach < end ? -ENOMEM : 0
  })
  def(28, 'madvise', sysMadvise)
  /**
   * mincore: page-aligned start (EINVAL), the range in user space (ENOMEM),
   * room for its bytes (EFAULT); then one byte per page, 1 where the page
   * is in memory, written a VMA at a time: the first page no VMA holds is ENOMEM.
   */
  def(27, 'mincore', ({ task }, addr, len, vec) => {
    if (addr % PAGE !== 0) return -EINVAL
    if (!accessOk(addr, len)) return -ENOMEM
    let pages = Math.ceil(len / PAGE)
    if (!accessOk(vec, pages)) return -EFAULT
    const mm = task.mm
    let va = addr
    while (pages > 0) {
      const vma = mm.findVma(va)
      if (!vma) return -ENOMEM
      const n = Math.min(pages, (vma.end - va) / PAGE, PAGE)
      const out = new Uint8Array(n)
      for (let i = 0; i < n; i++) out[i] = mm.space.lookup(va + i * PAGE) ? 1 : 0
      copyToUser(mm, vec, out)
      pages -= n
      vec += n
      va += n * PAGE
    }
    return 0
  })
  def(25, 'mremap', ({ kernel, task, cpu }, oldAddr, oldSize, newSize, flags, newAddr) => {
    const MAYMOVE = 1
    const FIXED = 2
    const DONTUNMAP = 4
    const mm = task.mm
    // check_mremap_params: known flags (an unsigned long), an aligned start, a new length that is
    // not 0 and fits; with a new address, aligned, MREMAP_MAYMOVE, and no resizing under DONTUNMAP.
    if (flags < 0 || flags > (MAYMOVE | FIXED | DONTUNMAP) || oldAddr % PAGE !== 0) return -EINVAL
    const oldLen = pageUp(oldSize)
    const newLen = pageUp(newSize)
    if (newSize <= 0 || newLen > TASK_SIZE) return -EINVAL
    if ((flags & (FIXED | DONTUNMAP)) !== 0) {
      if (newAddr % PAGE !== 0 || (flags & MAYMOVE) === 0) return -EINVAL
      if ((flags & DONTUNMAP) !== 0 && oldLen !== newLen) return -EINVAL
    }
    const vma = mm.findVma(oldAddr)
    if (!vma || oldAddr + oldLen > vma.end) return -14 // EFAULT
    if (
      newLen > oldLen &&
      (vma.prot & PROT_WRITE) !== 0 &&
      !vma.shared &&
      !vmEnoughMemory(kernel, newLen - oldLen)
    )
      return -ENOMEM
    if ((flags & FIXED) === 0) {
      if (newLen <= oldLen) {
        mm.unmapRange(oldAddr + newLen, oldAddr + oldLen)
        cpu.flushTlb()
        return oldAddr
      }
      const free = !mm.vmas.some((v) => v !== vma && v.start < oldAddr + newLen && v.end > oldAddr + oldLen)
      if (free && oldAddr + oldLen === vma.end) {
        vma.end = oldAddr + newLen
        return oldAddr
      }
      if ((flags & MAYMOVE) === 0) return -12 // ENOMEM
    }
    // Move: the pages themselves go to the new place (no copy).
    const dest = (flags & FIXED) !== 0 ? newAddr : mm.findFree(newLen)
    mm.unmapRange(dest, dest + newLen)
    mm.addVma({ ...vmaFrom(vma, oldAddr), start: dest, end: dest + newLen })
    for (const from of mm.presentPages(oldAddr, oldAddr + Math.min(oldLen, newLen))) {
      const m = mm.space.lookup(from)
      if (!m) continue
      mm.space.unmap(from)
      mm.space.map(dest + (from - oldAddr), m.frame, m.flags)
    }
    mm.unmapRange(oldAddr, oldAddr + oldLen)
    cpu.flushTlb()
    return dest
  })
}
