// A read-only view of a host directory for Vfs.mountHost in tests (the CLI's
// --mount has its own; this package's src/ stays free of Node APIs).

import { readdirSync, readFileSync, statSync } from 'node:fs'
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
        const s = statSync(join(root, p))
        return s.isDirectory()
          ? { type: 'dir' as const, size: 0 }
          : s.isFile()
            ? { type: 'file' as const, size: s.size }
            : null
      }),
    read: (p) => orNull(() => new Uint8Array(readFileSync(join(root, p)))),
  }
}
