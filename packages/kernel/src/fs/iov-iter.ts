// import_iovec (lib/iov_iter.c): a user iovec array checked and copied in,
// with Linux's errors in Linux's order, for readv, writev and their kin.

import { EFAULT, EINVAL } from '../errno.js'
import { accessOk, copyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'

/** UIO_MAXIOV: the most segments one call takes. */
export const UIO_MAXIOV = 1024
/** MAX_RW_COUNT: INT_MAX rounded down to a page; longer transfers are cut to it. */
export const MAX_RW_COUNT = 0x7ffff000

export interface IoVec {
  base: number
  len: number
}

/**
 * nr_segs is an unsigned int (a vlen's upper half is dropped): more than UIO_MAXIOV is EINVAL, none is an
 * empty transfer. The array is copied (EFAULT), a negative ssize_t length
 * is EINVAL, then each segment must lie in user space (EFAULT); the total
 * is cut to MAX_RW_COUNT.
 */
export function importIovec(ctx: SyscallContext, uvec: number, vlen: number): IoVec[] | number {
  const nrSegs = vlen >>> 0
  if (nrSegs > UIO_MAXIOV) return -EINVAL
  if (nrSegs === 0) return []
  const raw = new DataView(copyFromUser(ctx.task.mm, uvec, 16 * nrSegs).buffer)
  const segs: IoVec[] = []
  for (let i = 0; i < nrSegs; i++) {
    const base = Number(raw.getBigUint64(16 * i, true))
    const len = raw.getBigInt64(16 * i + 8, true)
    if (len < 0n) return -EINVAL
    segs.push({ base, len: Number(len) })
  }
  let total = 0
  for (const seg of segs) {
    if (!accessOk(seg.base, seg.len)) return -EFAULT
    seg.len = Math.min(seg.len, MAX_RW_COUNT - total)
    total += seg.len
  }
  return segs
}

/** iov_iter_count: the bytes the segments hold. */
export const iovCount = (segs: IoVec[]): number => segs.reduce((n, s) => n + s.len, 0)
