// A host directory tree for the guest's file system: the host's root by
// default, or a --mount. Entries are lstat'ed (a symlink is shown as one,
// resolved inside the guest's view), and only regular files, directories
// and symlinks are shown: host devices, sockets and FIFOs are not the
// guest's (its /dev is the kernel's).

import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import type { HostDirectory } from '@probekit/kernel'

export function hostDirectory(root: string): HostDirectory {
  const full = (p: string) => join(root, p)
  return {
    list(p) {
      try {
        return readdirSync(full(p)).sort()
      } catch {
        return null
      }
    },
    stat(p) {
      try {
        const s = lstatSync(full(p))
        // Owner, link count and blocks as the host has them (ls -l shows them; its total sums the blocks).
        const common = {
          size: s.size,
          perm: s.mode & 0o7777,
          mtime: Math.floor(s.mtimeMs / 1000),
          uid: s.uid,
          gid: s.gid,
          nlink: s.nlink,
          blocks: s.blocks,
        }
        if (s.isDirectory()) return { type: 'dir', ...common }
        if (s.isFile()) return { type: 'file', ...common }
        if (s.isSymbolicLink()) return { type: 'symlink', ...common, target: readlinkSync(full(p)) }
        return null
      } catch {
        return null
      }
    },
    read(p) {
      try {
        return new Uint8Array(readFileSync(full(p)))
      } catch {
        return null
      }
    },
  }
}
