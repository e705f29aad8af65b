// /proc/filesystems (fs/filesystems.c): the file system types the kernel
// has, in registration order, "nodev" for those that need no block device:
// the in-memory tree (tmpfs), this one, and the internal sockfs and pipefs.

const FILESYSTEMS = ['tmpfs', 'proc', 'sockfs', 'pipefs']

export function showFilesystems(): string {
  return FILESYSTEMS.map((fs) => `nodev\t${fs}\n`).join('')
}
