// chown, fchown, lchown and fchownat (fs/open.c: do_fchownat, vfs_fchown,
// chown_common). Every task is root, so any owner may be given; the flags
// are checked first, then the path or descriptor, and a read-only mount is
// EROFS. As notify_change does, a non-directory loses its set-user-ID bit,
// and its set-group-ID bit when group execution is on.

import { EBADF, EINVAL, EROFS } from '../errno.js'
import type { SyscallContext, SyscallDef } from '../syscalls.js'
import { fileOf } from './files.js'
import { AT_FDCWD, emptyPathAt, lookupAt, pathArg } from './namei.js'
import { Directory, type Inode, S_IFMT } from './vfs.js'

const AT_SYMLINK_NOFOLLOW = 0x100
const AT_EMPTY_PATH = 0x1000
const S_ISUID = 0o4000
const S_ISGID = 0o2000
const S_IXGRP = 0o010

/** chown_common: uid_t and gid_t are 32 bits; (uid_t)-1 leaves that owner as it is. */
function chownCommon(node: Inode, user: number, group: number): number {
  if (node.readOnly) return -EROFS
  const uid = user >>> 0
  const gid = group >>> 0
  if (uid !== 0xffffffff) node.uid = uid
  if (gid !== 0xffffffff) node.gid = gid
  if (!(node instanceof Directory)) {
    let mode = node.mode & ~S_ISUID
    if ((mode & S_IXGRP) !== 0) mode &= ~S_ISGID
    if (mode !== node.mode) (node as { mode: number }).mode = (node.mode & S_IFMT) | (mode & 0o7777)
  }
  return 0
}

/** do_fchownat: the flags, the name (an empty one with AT_EMPTY_PATH names dfd itself), the lookup. */
function doFchownat(
  ctx: SyscallContext,
  dfd: number,
  path: number,
  user: number,
  group: number,
  flags: number,
) {
  flags |= 0
  if ((flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) !== 0) return -EINVAL
  const p = pathArg(ctx, path, (flags & AT_EMPTY_PATH) !== 0)
  if (typeof p === 'number') return p
  const node =
    p === '' ? emptyPathAt(ctx, dfd) : lookupAt(ctx, dfd | 0, p, (flags & AT_SYMLINK_NOFOLLOW) !== 0)
  if (typeof node === 'number') return node
  return chownCommon(node, user, group)
}

export function registerChown(def: SyscallDef): void {
  def(92, 'chown', (ctx, path, user, group) => doFchownat(ctx, AT_FDCWD, path, user, group, 0))
  def(94, 'lchown', (ctx, path, user, group) =>
    doFchownat(ctx, AT_FDCWD, path, user, group, AT_SYMLINK_NOFOLLOW),
  )
  def(260, 'fchownat', doFchownat)
  def(93, 'fchown', (ctx, fd, user, group) => {
    const f = fileOf(ctx.task, fd)
    return typeof f === 'number' ? -EBADF : chownCommon(f.inode, user, group)
  })
}
