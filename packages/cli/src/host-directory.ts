// A read-only host directory for the guest's file system (probekit run --mount).

import { readdirSync, readFileSync, statSync } from 'node:fs'
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
        const s = statSync(full(p))
        return s.isDirectory() ? { type: 'dir', size: 0 } : s.isFile() ? { type: 'file', size: s.size } : null
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
