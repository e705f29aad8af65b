// lseek(2) (ksys_lseek → vfs_llseek): an unsigned whence past SEEK_HOLE is
// EINVAL, a stream (pipe, socket) ESPIPE; a regular file seeks as tmpfs's
// shmem_file_llseek (generic_file_llseek_size up to LLONG_MAX, SEEK_DATA and
// SEEK_HOLE over its written pages), a directory as offset_dir_llseek. The
// offset and the answer are all 64 bits.

import { EBADF, EINVAL, ENXIO, ESPIPE } from '../errno.js'
import type { SyscallContext } from '../syscalls.js'
import { O_PATH, type OpenFile } from './files.js'
import { LOFF_MAX, loffArg } from './loff.js'
import { dirLseek } from './readdir.js'
import { Directory, RegularFile } from './vfs.js'

const SEEK_SET = 0
const SEEK_CUR = 1
const SEEK_END = 2
const SEEK_DATA = 3
const SEEK_HOLE = 4

/** vfs_setpos: a negative offset or one past maxsize is EINVAL; else it is the file's position. */
function setpos(f: OpenFile, offset: bigint): bigint | number {
  if (offset < 0n || offset > LOFF_MAX) return -EINVAL
  if (offset !== f.exactPos) f.exactPos = offset
  return offset
}

/** shmem_file_llseek. */
function regularLseek(f: OpenFile, inode: RegularFile, offset: bigint, whence: number): bigint | number {
  const eof = BigInt(inode.size())
  switch (whence) {
    case SEEK_END:
      return setpos(f, BigInt.asIntN(64, offset + eof))
    case SEEK_CUR:
      // lseek(fd, 0, SEEK_CUR) asks where it is, whatever that is.
      if (offset === 0n) return f.exactPos
      return setpos(f, BigInt.asIntN(64, f.exactPos + offset))
    case SEEK_DATA:
    case SEEK_HOLE: {
      if (offset < 0n) return -ENXIO
      const at = inode.seekHoleData(offset, whence === SEEK_DATA)
      return typeof at === 'number' ? at : setpos(f, at)
    }
    default:
      return setpos(f, offset)
  }
}

export function sysLseek(ctx: SyscallContext, fd: number, _offset: number, whence: number): bigint | number {
  // fdget_pos: an O_PATH descriptor is not one to seek.
  const f = ctx.task.files.get(fd | 0)
  if (!f || (f.flags & O_PATH) !== 0) return -EBADF
  whence >>>= 0
  if (whence > SEEK_HOLE) return -EINVAL
  const offset = loffArg(ctx, 'si')
  const inode = f.inode
  if (!inode.seekable) return -ESPIPE
  if (inode instanceof Directory) return dirLseek(f, offset, whence)
  if (inode instanceof RegularFile) return regularLseek(f, inode, offset, whence)
  return whence === SEEK_SET || whence === SEEK_CUR || whence === SEEK_END
    ? f.seek(Number(offset), whence)
    : -EINVAL
}
