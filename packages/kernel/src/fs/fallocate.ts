// fallocate(2): vfs_fallocate's checks in order (the range, the mode, the
// open mode, the file's type, the end past loff_t), then tmpfs's own
// (shmem_fallocate: only KEEP_SIZE and PUNCH_HOLE; RLIMIT_FSIZE even with
// KEEP_SIZE). offset and len are all 64 bits.

import { EBADF, EINVAL, EISDIR, ESPIPE } from '../errno.js'
import type { SyscallContext } from '../syscalls.js'
import { modified } from '../time/clock.js'
import { O_PATH } from './files.js'
import { LOFF_MAX, loffArg } from './loff.js'
import { fmodeWrite, newsizeOk } from './read-write.js'
import { Directory, PipeEnd, RegularFile } from './vfs.js'

const EOPNOTSUPP = 95
const ENODEV = 19
const EFBIG = 27
const FALLOC_FL_KEEP_SIZE = 0x01
const FALLOC_FL_PUNCH_HOLE = 0x02
const FALLOC_FL_COLLAPSE_RANGE = 0x08
const FALLOC_FL_ZERO_RANGE = 0x10
const FALLOC_FL_INSERT_RANGE = 0x20
const FALLOC_FL_UNSHARE_RANGE = 0x40
const FALLOC_FL_WRITE_ZEROES = 0x80
const FALLOC_FL_MODE_MASK =
  FALLOC_FL_PUNCH_HOLE |
  FALLOC_FL_COLLAPSE_RANGE |
  FALLOC_FL_ZERO_RANGE |
  FALLOC_FL_INSERT_RANGE |
  FALLOC_FL_UNSHARE_RANGE |
  FALLOC_FL_WRITE_ZEROES

/** vfs_fallocate's mode rule: one mode (ALLOCATE_RANGE is none), KEEP_SIZE only where it means something. */
function modeOk(mode: number): boolean {
  if ((mode & ~(FALLOC_FL_MODE_MASK | FALLOC_FL_KEEP_SIZE)) !== 0) return false
  switch (mode & FALLOC_FL_MODE_MASK) {
    case 0:
    case FALLOC_FL_UNSHARE_RANGE:
    case FALLOC_FL_ZERO_RANGE:
      return true
    case FALLOC_FL_PUNCH_HOLE:
      return (mode & FALLOC_FL_KEEP_SIZE) !== 0
    case FALLOC_FL_COLLAPSE_RANGE:
    case FALLOC_FL_INSERT_RANGE:
    case FALLOC_FL_WRITE_ZEROES:
      return (mode & FALLOC_FL_KEEP_SIZE) === 0
    default:
      return false
  }
}

export function sysFallocate(ctx: SyscallContext, fd: number, mode: number): number {
  const f = ctx.task.files.get(fd | 0)
  if (!f || (f.flags & O_PATH) !== 0) return -EBADF
  const offset = loffArg(ctx, 'dx')
  const len = loffArg(ctx, 'r10')
  if (offset < 0n || len <= 0n) return -EINVAL
  mode |= 0
  if (!modeOk(mode)) return -EOPNOTSUPP
  if (!fmodeWrite(f)) return -EBADF
  const inode = f.inode
  if (inode instanceof PipeEnd) return -ESPIPE
  if (inode instanceof Directory) return -EISDIR
  if (!(inode instanceof RegularFile)) return -ENODEV
  if (offset + len > LOFF_MAX) return -EFBIG
  // shmem_fallocate
  if ((mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE)) !== 0) return -EOPNOTSUPP
  const end = offset + len
  if ((mode & FALLOC_FL_PUNCH_HOLE) === 0) {
    const bad = newsizeOk(ctx, Number(end))
    if (bad) return bad
  }
  const r = inode.fallocate(mode, Number(offset), Number(len))
  if (r === 0) modified(ctx, inode)
  return r
}
