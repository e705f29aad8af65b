// statfs/fstatfs: the whole tree is one in-memory file system, reported as
// tmpfs: its size limit (half of RAM unless the kernel was given another)
// and the pages its files hold; files under a read-only host mount say
// ST_RDONLY.

import { EBADF } from '../errno.js'
import { copyToUser, strncpyFromUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import { AT_FDCWD, lookupAt } from './namei.js'
import type { Inode } from './vfs.js'

const TMPFS_MAGIC = 0x01021994
const PAGE_SIZE = 4096
const ST_RDONLY = 1
const ST_VALID = 0x20

function statfsBuf(ctx: SyscallContext, node: Inode): Uint8Array {
  const sb = ctx.kernel.vfs.shmem
  sb.reclaim() // unlinked files no mapping holds any more are free space
  const blocks = Number.isFinite(sb.maxBlocks) ? sb.maxBlocks : ctx.kernel.machine.memory.size / PAGE_SIZE
  const free = Math.max(0, blocks - sb.usedBlocks)
  // tmpfs's default nr_inodes: half of RAM's pages; inodes are not counted against it here.
  const inodes = Math.floor(ctx.kernel.machine.memory.size / PAGE_SIZE / 2)
  // struct statfs (x86-64): 120 bytes of longs.
  const b = new Uint8Array(120)
  const v = new DataView(b.buffer)
  const put = (i: number, x: number) => v.setBigInt64(8 * i, BigInt(x), true)
  put(0, TMPFS_MAGIC) // f_type
  put(1, PAGE_SIZE) // f_bsize
  put(2, blocks) // f_blocks
  put(3, free) // f_bfree
  put(4, free) // f_bavail
  put(5, inodes) // f_files
  put(6, inodes) // f_ffree
  // f_fsid (index 7): zero, as tmpfs reports
  put(8, 255) // f_namelen
  put(9, PAGE_SIZE) // f_frsize
  put(10, ST_VALID | (node.readOnly ? ST_RDONLY : 0)) // f_flags
  return b
}

export function sysStatfs(ctx: SyscallContext, pathAddr: number, buf: number): number {
  const path = strncpyFromUser(ctx.task.mm, pathAddr, 4096)
  if (path === null) return -36
  const node = lookupAt(ctx, AT_FDCWD, path)
  if (typeof node === 'number') return node
  copyToUser(ctx.task.mm, buf, statfsBuf(ctx, node))
  return 0
}

export function sysFstatfs(ctx: SyscallContext, fd: number, buf: number): number {
  // fd is an unsigned int: the register's upper half is not part of it.
  const f = ctx.task.files.get(fd | 0)
  if (!f) return -EBADF
  copyToUser(ctx.task.mm, buf, statfsBuf(ctx, f.inode))
  return 0
}
