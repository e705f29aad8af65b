// The host's system calls for memory: brk, mmap, munmap, mprotect, mremap
// (mm/), registered into the kernel's syscall table by syscalls.ts.

import { TASK_SIZE } from '../abi.js'
import { EINVAL, ENOMEM } from '../errno.js'
import { fileOf } from '../fs/files.js'
import { RegularFile } from '../fs/vfs.js'
import type { Kernel } from '../kernel.js'
import type { SyscallDef } from '../syscalls.js'
import { sysMadvise } from './madvise.js'
import { PAGE, PROT_EXEC, PROT_READ, PROT_WRITE, pageUp, type Vma, vmaFrom } from './mm.js'
import { copyToUser } from './user-memory.js'

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
  def(11, 'munmap', ({ task }, addr, len) => {
    if (addr % PAGE !== 0) return -EINVAL
    task.mm.unmapRange(addr, addr + pageUp(len))
    return 0
  })
  def(10, 'mprotect', ({ task, cpu }, addr, len, prot) => {
    if (addr % PAGE !== 0) return -EINVAL
    task.mm.protect(addr, addr + pageUp(len), prot)
    cpu.flushTlb()
    return 0
  })
  def(28, 'madvise', sysMadvise)
  // mincore: one byte per page of [addr, addr+len), 1 where the page is in memory; ENOMEM past the VMAs.
  def(27, 'mincore', ({ task }, addr, len, vec) => {
    if (addr % PAGE !== 0) return -EINVAL
    const mm = task.mm
    const pages = pageUp(len) / PAGE
    const out = new Uint8Array(pages)
    for (let i = 0; i < pages; i++) {
      const va = addr + i * PAGE
      if (!mm.findVma(va)) return -ENOMEM
      out[i] = mm.space.lookup(va) ? 1 : 0
    }
    copyToUser(mm, vec, out)
    return 0
  })
  def(25, 'mremap', ({ kernel, task, cpu }, oldAddr, oldSize, newSize, flags, newAddr) => {
    const MAYMOVE = 1
    const FIXED = 2
    const mm = task.mm
    if (oldAddr % PAGE !== 0 || newSize === 0) return -EINVAL
    const oldLen = pageUp(oldSize)
    const newLen = pageUp(newSize)
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
    for (let off = 0; off < Math.min(oldLen, newLen); off += PAGE) {
      const m = mm.space.lookup(oldAddr + off)
      if (!m) continue
      mm.space.unmap(oldAddr + off)
      mm.space.map(dest + off, m.frame, m.flags)
    }
    mm.unmapRange(oldAddr, oldAddr + oldLen)
    cpu.flushTlb()
    return dest
  })
}
