// Run a program under the probekit kernel in-process and collect what it printed.

import { readFileSync } from 'node:fs'
import { Kernel } from '../../src/index.js'

export const guestImage = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../../guest/vmlinux', import.meta.url)))

export interface GuestRun {
  stdout: string
  stderr: string
  status: number | null
  kernel: Kernel
  detail: string
}

export function runGuest(
  program: Uint8Array,
  argv: string[],
  options: {
    env?: string[]
    cpus?: number
    path?: string
    stdin?: Uint8Array
    maxInstructions?: number
    memorySize?: number
    files?: Record<string, Uint8Array>
    setup?: (k: Kernel) => void
  } = {},
): GuestRun {
  let stdout = ''
  let stderr = ''
  const dec = new TextDecoder()
  const kernel = new Kernel({
    image: guestImage(),
    cpus: options.cpus ?? 1,
    memorySize: options.memorySize ?? 128 * 1024 * 1024,
    stdout: (d) => {
      stdout += dec.decode(d)
    },
    stderr: (d) => {
      stderr += dec.decode(d)
    },
    stdin: options.stdin,
  })
  const path = options.path ?? `/bin/${argv[0].split('/').pop()}`
  kernel.vfs.writeFile(path, program)
  for (const [p, data] of Object.entries(options.files ?? {})) kernel.vfs.writeFile(p, data)
  options.setup?.(kernel)
  kernel.boot()
  kernel.spawn(path, argv, options.env ?? [])
  const { result, exit } = kernel.run(options.maxInstructions ?? 2_000_000_000)
  return {
    stdout,
    stderr,
    status: exit ? exit.status : null,
    kernel,
    detail: `${result.reason}: ${result.detail}`,
  }
}
