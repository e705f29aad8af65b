// /proc/mounts (fs/proc_namespace.c show_vfsmnt): "device mountpoint type
// options 0 0" a mount. The tree is one in-memory file system at / (what
// statfs calls tmpfs) with /proc on it; read-only host directories are
// part of it here, not mounts of their own.

export function showMounts(): string {
  return 'tmpfs / tmpfs rw,relatime 0 0\nproc /proc proc rw,relatime 0 0\n'
}
