// The guest kernel image shipped in @probekit/kernel (guest/vmlinux).

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

export function readGuestImage(): Uint8Array {
  const require = createRequire(import.meta.url)
  return new Uint8Array(readFileSync(require.resolve('@probekit/kernel/guest/vmlinux')))
}
