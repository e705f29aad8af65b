// getdents64 and a directory's lseek, as tmpfs does them (fs/readdir.c's
// filldir64, fs/libfs.c's offset_readdir and offset_dir_llseek): ".", "..",
// then the entries newest first, each at its directory offset; a position
// is an offset, and reading resumes at the entry holding the largest offset
// not past it (so entries made since come before it, unseen). What a call
// returns is the bytes of the records that fit in count (an int): none
// fitting is EINVAL, a fault on the first is EFAULT, on a later one the
// bytes so far. /proc's computed directories list their entries by name,
// counting positions.

import { EBADF, EFAULT, EINVAL, ENOENT, ENOTDIR } from '../errno.js'
import { BadAddress, copyToUser } from '../mm/user-memory.js'
import type { SyscallContext } from '../syscalls.js'
import { utf8Encode } from '../utf8.js'
import { O_PATH, type OpenFile } from './files.js'
import { Dentries, DIR_OFFSET_EOD, DIR_OFFSET_FIRST, Directory, type Inode, S_IFMT } from './vfs.js'

/** d_type from the mode (fs_umode_to_dtype). */
const dtype = (mode: number): number => ((mode & S_IFMT) >> 12) & 15

/** filldir64's buffer: records written one after another while they fit and can be copied. */
class Filldir {
  written = 0
  error = 0
  constructor(
    private readonly ctx: SyscallContext,
    private readonly buf: number,
    private room: number,
  ) {}

  /** One record at its position; false when it did not fit or faulted. */
  emit(name: string, node: Inode, pos: number): boolean {
    const nameBytes = utf8Encode(name)
    const reclen = Math.ceil((19 + nameBytes.length + 1) / 8) * 8
    if (reclen > this.room) {
      this.error = -EINVAL
      return false
    }
    const rec = new Uint8Array(reclen)
    const v = new DataView(rec.buffer)
    v.setBigUint64(0, BigInt(this.ctx.kernel.vfs.inoOf(node)), true)
    v.setBigUint64(8, BigInt(pos), true)
    v.setUint16(16, reclen, true)
    rec[18] = dtype(node.mode)
    rec.set(nameBytes, 19)
    try {
      copyToUser(this.ctx.task.mm, this.buf + this.written, rec)
    } catch (e) {
      if (!(e instanceof BadAddress)) throw e
      this.error = -EFAULT
      return false
    }
    this.written += reclen
    this.room -= reclen
    return true
  }

  result(): number {
    return this.written > 0 ? this.written : this.error
  }
}

/** The entries of dir in readdir order, each with its offset (/proc's: their positions from 2). */
function listing(dir: Directory): { name: string; node: Inode; offset: number }[] {
  const kids = dir.children
  if (kids instanceof Dentries)
    return [...kids.entries()]
      .map(([name, node]) => ({ name, node, ...kids.placeOf(name) }))
      .sort((a, b) => b.order - a.order)
  return [...kids.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, node], k) => ({ name, node, offset: DIR_OFFSET_FIRST + k }))
}

/**
 * offset_readdir into out: the dots by position; then from the entry with
 * the largest offset at or below the position (the first entry for
 * DIR_OFFSET_FIRST or when there is none) to the end, the position
 * following each entry emitted.
 */
function readdir(f: OpenFile, dir: Directory, out: Filldir): void {
  if (f.pos === 0) {
    if (!out.emit('.', dir, 0)) return
    f.pos = 1
  }
  if (f.pos === 1) {
    if (!out.emit('..', dir.parent ?? dir, 1)) return
    f.pos = DIR_OFFSET_FIRST
  }
  if (f.exactPos >= BigInt(DIR_OFFSET_EOD)) return
  const list = listing(dir)
  let start = 0
  if (f.pos !== DIR_OFFSET_FIRST) {
    let best = -1
    list.forEach((e, k) => {
      if (e.offset <= f.pos && (best < 0 || e.offset > list[best].offset)) best = k
    })
    start = Math.max(best, 0)
  }
  for (const e of list.slice(start)) {
    f.pos = e.offset
    if (!out.emit(e.name, e.node, e.offset)) return
  }
  f.pos = DIR_OFFSET_EOD
}

/** getdents64(fd, dirent, count): an O_PATH descriptor reads nothing (EBADF), a removed directory ENOENT. */
export function sysGetdents64(ctx: SyscallContext, fd: number, buf: number, count: number): number {
  const f = ctx.task.files.get(fd | 0)
  if (!f || (f.flags & O_PATH) !== 0) return -EBADF
  if (!(f.inode instanceof Directory)) return -ENOTDIR
  if (f.inode.dead) return -ENOENT
  const out = new Filldir(ctx, buf, count | 0)
  readdir(f, f.inode, out)
  return out.result()
}

/** offset_dir_llseek: SEEK_SET and SEEK_CUR to a position at or past 0 (else EINVAL), an offset. */
export function dirLseek(f: OpenFile, offset: bigint, whence: number): bigint | number {
  let to = offset
  if (whence === 1) to = BigInt.asIntN(64, to + f.exactPos)
  else if (whence !== 0) return -EINVAL
  if (to < 0n) return -EINVAL
  if (to !== f.exactPos) f.exactPos = to
  return to
}
