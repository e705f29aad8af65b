// A read-only view of a host directory for Vfs.mountHost in tests (the CLI's
// --mount has its own; this package's src/ stays free of Node APIs).

import { closeSync, lstatSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs'
import { join } from 'node:path'
import type { HostDirectory } from '../../src/index.js'

const orNull = <T>(f: () => T): T | null => {
  try {
    return f()
  } catch {
    return null
  }
}

export function nodeHostDirectory(root: string): HostDirectory {
  return {
    list: (p) => orNull(() => readdirSync(join(root, p)).sort()),
    stat: (p) =>
      orNull(() => {
        const s = lstatSync(join(root, p))
        const common = {
          size: s.size,
          perm: s.mode & 0o7777,
          mtime: Math.floor(s.mtimeMs / 1000),
          uid: s.uid,
          gid: s.gid,
          nlink: s.nlink,
          blocks: s.blocks,
        }
        return s.isDirectory()
          ? { type: 'dir' as const, ...common }
          : s.isFile()
            ? { type: 'file' as const, ...common }
            : s.isSymbolicLink()
              ? { type: 'symlink' as const, ...common, target: readlinkSync(join(root, p)) }
              : null
      }),
    read: (p, offset, length) => orNull(() => pread(join(root, p), offset, length)),
  }
}

/** At most length bytes from offset: a guest's read touches only that range of the host file. */
function pread(path: string, offset: number, length: number): Uint8Array {
  const fd = openSync(path, 'r')
  try {
    const buf = new Uint8Array(length)
    let done = 0
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, offset + done)
      if (n === 0) break
      done += n
    }
    return buf.subarray(0, done)
  } finally {
    closeSync(fd)
  }
}
