// A host directory tree for the guest's file system: the host's root by
// default, or a --mount. Entries are lstat'ed (a symlink is shown as one,
// resolved inside the guest's view), and only regular files, directories
// and symlinks are shown: host devices, sockets and FIFOs are not the
// guest's (its /dev is the kernel's).

import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs'
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
    read(p, offset, length) {
      return preadFile(full(p), offset, length)
    },
  }
}

/** pread: at most length bytes from offset (only what the guest touches is read, never the whole file). */
function preadFile(path: string, offset: number, length: number): Uint8Array | null {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return null
  }
  try {
    const buf = new Uint8Array(length)
    let done = 0
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, offset + done)
      if (n === 0) break
      done += n
    }
    return buf.subarray(0, done)
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}
