// chroot(2) (fs/open.c ksys_chroot, fs/fs_struct.c set_fs_root): the directory a path names becomes
// the root of the caller's fs_struct (every task sharing it, CLONE_FS). The path is looked up as
// chdir's (following symlinks, a directory or ENOTDIR), then search permission on it (EACCES), then
// CAP_SYS_CHROOT (EPERM). The working directory is left where it is, even outside the new root: as
// on Linux, "chroot(dir); chdir(..)" from a cwd outside it walks out, up to the file system's root
// at most, never above what the kernel was given.

import { EACCES, EPERM } from '../errno.js'
import { CAP_SYS_CHROOT, capable } from '../process/capability.js'
import type { SyscallContext } from '../syscalls.js'
import { AT_FDCWD, filenameLookup, LOOKUP_DIRECTORY, LOOKUP_FOLLOW, pathArg } from './namei.js'
import { Directory } from './vfs.js'

export function sysChroot(ctx: SyscallContext, filename: number): number {
  const path = pathArg(ctx, filename)
  if (typeof path === 'number') return path
  const node = filenameLookup(ctx, AT_FDCWD, path, LOOKUP_FOLLOW | LOOKUP_DIRECTORY)
  if (typeof node === 'number') return node
  // path_permission(MAY_EXEC | MAY_CHDIR): root may search every directory.
  if (!(node instanceof Directory)) return -EACCES
  if (!capable(ctx.task, CAP_SYS_CHROOT)) return -EPERM
  // set_fs_root: the root of the file system itself is kept as null (nothing above it anyway).
  ctx.task.fs.root = node === ctx.kernel.vfs.root ? null : node
  return 0
}
