// A booted guest kernel for utrace tests: the kernel package's image and
// fixture programs, the tiny hand-assembled ELFs, and busybox where the host
// has the static one.

import { existsSync, readFileSync } from 'node:fs'
import { Kernel } from '@probekit/kernel'
import { syscall, tinyElf } from '../../../kernel/test/support/tiny-elf.js'
import { IS_ERR, type UtraceEngine } from '../../src/index.js'

export { movEdi, syscall, TINY_BASE, tinyElf } from '../../../kernel/test/support/tiny-elf.js'

const guestImage = (): Uint8Array =>
  new Uint8Array(readFileSync(new URL('../../../kernel/guest/vmlinux', import.meta.url)))

export const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../../../kernel/fixtures/bin/${name}`, import.meta.url)))

export const BUSYBOX = '/bin/busybox'
/** Debian's busybox-static (a dynamic busybox needs the host's tree, which these tests do not mount). */
export const haveBusybox =
  process.platform === 'linux' &&
  process.arch === 'x64' &&
  existsSync(BUSYBOX) &&
  !readFileSync(BUSYBOX).includes(Buffer.from('/lib64/ld-linux-x86-64.so.2'))

export interface Booted {
  k: Kernel
  out: () => string
}

export function boot(files: Record<string, Uint8Array>, cpus = 1): Booted {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image: guestImage(),
    cpus,
    memorySize: 128 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
  })
  for (const [p, data] of Object.entries(files)) k.vfs.writeFile(p, data, 0o755)
  k.boot()
  return { k, out: () => out }
}

export const busyboxFiles = (): Record<string, Uint8Array> => ({
  [BUSYBOX]: new Uint8Array(readFileSync(BUSYBOX)),
})

/** utrace_attach_task's engine, or the test fails with its errno. */
export function engineOf(e: UtraceEngine | number): UtraceEngine {
  if (IS_ERR(e)) throw new Error(`attach failed: ${e}`)
  return e
}

/** getpid, then exit with its result: the exit status shows what the program saw in eax. */
export const GETPID_EXIT = tinyElf([...syscall(39), 0x89, 0xc7, ...syscall(60)])
