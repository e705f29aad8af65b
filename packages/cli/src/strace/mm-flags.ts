// Memory-mapping constants (x86-64): mmap/mprotect prot, mmap flags with
// the map type first and the huge page size as N<<MAP_HUGE_SHIFT, madvise.

import { flags, type Xlat, xval } from './xlat.js'

export const PROT: Xlat = [
  [0, 'PROT_NONE'],
  [1, 'PROT_READ'],
  [2, 'PROT_WRITE'],
  [4, 'PROT_EXEC'],
  [8, 'PROT_SEM'],
  [0x01000000, 'PROT_GROWSDOWN'],
  [0x02000000, 'PROT_GROWSUP'],
]

export function protText(value: number): string {
  return flags(PROT, value >>> 0, 'PROT_???')
}

const MAP_TYPES: Xlat = [
  [0, 'MAP_FILE'],
  [1, 'MAP_SHARED'],
  [2, 'MAP_PRIVATE'],
  [3, 'MAP_SHARED_VALIDATE'],
]

const MAP_FLAGS: Xlat = [
  [0x10, 'MAP_FIXED'],
  [0x20, 'MAP_ANONYMOUS'],
  [0x40, 'MAP_32BIT'],
  [0x4000, 'MAP_NORESERVE'],
  [0x8000, 'MAP_POPULATE'],
  [0x10000, 'MAP_NONBLOCK'],
  [0x100, 'MAP_GROWSDOWN'],
  [0x800, 'MAP_DENYWRITE'],
  [0x1000, 'MAP_EXECUTABLE'],
  [0x2000, 'MAP_LOCKED'],
  [0x20000, 'MAP_STACK'],
  [0x40000, 'MAP_HUGETLB'],
  [0x80000, 'MAP_SYNC'],
  [0x4000000, 'MAP_UNINITIALIZED'],
  [0x100000, 'MAP_FIXED_NOREPLACE'],
]

const MAP_TYPE = 0xf
const MAP_HUGE_SHIFT = 26
const MAP_HUGE_MASK = 0x3f

/** print_mmap_flags: "MAP_PRIVATE|MAP_ANONYMOUS", "MAP_PRIVATE|MAP_HUGETLB|21<<MAP_HUGE_SHIFT". */
export function mapFlagsText(value: number): string {
  let v = value >>> 0
  let text = xval(MAP_TYPES, v & MAP_TYPE, 'MAP_???')
  v &= ~MAP_TYPE
  const huge = (v >>> MAP_HUGE_SHIFT) & MAP_HUGE_MASK
  v &= ~(MAP_HUGE_MASK << MAP_HUGE_SHIFT)
  if (v) text += `|${flags(MAP_FLAGS, v)}`
  if (huge) text += `|${huge}<<MAP_HUGE_SHIFT`
  return text
}

export const MADVISE: Xlat = [
  [0, 'MADV_NORMAL'],
  [1, 'MADV_RANDOM'],
  [2, 'MADV_SEQUENTIAL'],
  [3, 'MADV_WILLNEED'],
  [4, 'MADV_DONTNEED'],
  [8, 'MADV_FREE'],
  [9, 'MADV_REMOVE'],
  [10, 'MADV_DONTFORK'],
  [11, 'MADV_DOFORK'],
  [12, 'MADV_MERGEABLE'],
  [13, 'MADV_UNMERGEABLE'],
  [14, 'MADV_HUGEPAGE'],
  [15, 'MADV_NOHUGEPAGE'],
  [16, 'MADV_DONTDUMP'],
  [17, 'MADV_DODUMP'],
  [18, 'MADV_WIPEONFORK'],
  [19, 'MADV_KEEPONFORK'],
  [20, 'MADV_COLD'],
  [21, 'MADV_PAGEOUT'],
  [22, 'MADV_POPULATE_READ'],
  [23, 'MADV_POPULATE_WRITE'],
  [100, 'MADV_HWPOISON'],
  [101, 'MADV_SOFT_OFFLINE'],
]
