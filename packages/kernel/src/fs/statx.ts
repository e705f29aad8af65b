// statx(2) (fs/stat.c): what stat says, in struct statx, which coreutils
// (ls, cp, stat) ask for first. Extended attributes: none are kept, so the
// xattr calls answer as a file system without them does (EOPNOTSUPP),
// which ls and cp take as "no ACL, no label".

import { EINVAL, ENAMETOOLONG, EOPNOTSUPP, ESPIPE } from '../errno.js'
import { copyToUser, strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { fileOf } from './files.js'
import { lookupAt } from './namei.js'
import { type Inode, inodeBlocks, PipeEnd } from './vfs.js'

/** The last of POSIX_FADV_NORMAL..POSIX_FADV_NOREUSE (0-5). */
const POSIX_FADV_NOREUSE = 5
const AT_SYMLINK_NOFOLLOW = 0x100
const AT_EMPTY_PATH = 0x1000
/** STATX_BASIC_STATS: type, mode, nlink, uid, gid, atime, mtime, ctime, ino, size, blocks. */
const STATX_BASIC_STATS = 0x7ff

/** struct statx (256 bytes). */
function statxBuf(node: Inode, ino: number): Uint8Array {
  const b = new Uint8Array(256)
  const v = new DataView(b.buffer)
  const u64 = (o: number, x: number) => v.setBigUint64(o, BigInt(x), true)
  v.setUint32(0, STATX_BASIC_STATS, true) // stx_mask
  v.setUint32(4, 4096, true) // stx_blksize
  v.setUint32(16, node.nlink, true)
  v.setUint32(20, node.uid ?? 0, true)
  v.setUint32(24, node.gid ?? 0, true)
  v.setUint16(28, node.mode, true)
  u64(32, ino)
  u64(40, node.size())
  u64(48, inodeBlocks(node)) // as stat's st_blocks
  // stx_atime, stx_btime, stx_ctime, stx_mtime: the one time the inode keeps (btime is not in the mask).
  for (const o of [64, 96, 112]) u64(o, node.mtime)
  v.setUint32(140, 1, true) // stx_dev_minor: the one device, as stat's st_dev
  return b
}

function sysStatx(
  ctx: SyscallContext,
  dirfd: number,
  path: number,
  flags: number,
  _mask: number,
  buf: number,
) {
  if ((flags & ~0x7900) !== 0) return -EINVAL // AT_SYMLINK_NOFOLLOW, AT_NO_AUTOMOUNT, AT_EMPTY_PATH, AT_STATX_*
  const p = strncpyFromUser(ctx.task.mm, path, 4096)
  if (p === null) return -ENAMETOOLONG
  let node: Inode | number
  if (p === '' && (flags & AT_EMPTY_PATH) !== 0) {
    const f = fileOf(ctx.task, dirfd)
    node = typeof f === 'number' ? f : f.inode
  } else node = lookupAt(ctx, dirfd | 0, p, (flags & AT_SYMLINK_NOFOLLOW) !== 0)
  if (typeof node === 'number') return node
  copyToUser(ctx.task.mm, buf, statxBuf(node, ctx.kernel.vfs.inoOf(node)))
  return 0
}

export function registerStatx(def: SyscallDef): void {
  def(332, 'statx', (ctx, dirfd, path, flags, mask, buf) => sysStatx(ctx, dirfd, path, flags, mask, buf))
  for (const [nr, name] of [
    [191, 'getxattr'],
    [192, 'lgetxattr'],
    [193, 'fgetxattr'],
    [194, 'listxattr'],
    [195, 'llistxattr'],
    [196, 'flistxattr'],
  ] as const)
    def(nr, name, () => -EOPNOTSUPP)
  // fadvise64 (generic_fadvise): the descriptor, a pipe is ESPIPE, a negative length or an unknown
  // advice EINVAL; the advice itself changes nothing for files kept in memory.
  def(221, 'fadvise64', (ctx, fd, _offset, len, advice) => {
    const f = fileOf(ctx.task, fd)
    if (typeof f === 'number') return f
    if (f.inode instanceof PipeEnd) return -ESPIPE
    if (len < 0 || (advice | 0) < 0 || (advice | 0) > POSIX_FADV_NOREUSE) return -EINVAL
    return 0
  })
}
