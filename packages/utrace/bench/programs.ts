// The guest programs the benchmark runs: a getpid loop (a tiny hand-assembled
// ELF, the same program kprobes' bench probes, so the figures compare), and
// Debian's bash-static running one of the kernel's bash test scripts with the
// kernel's bash tests' setup (fixture programs on PATH, the scripts and the
// fixtures visible through read-only host mounts).

import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Kernel } from '@probekit/kernel'
import { nodeHostDirectory } from '../../kernel/test/support/host-directory.js'
import { syscall, tinyElf } from '../../kernel/test/support/tiny-elf.js'

const image = new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url)))

/**
 * getpid once (remember the pid in r13d), then `iterations` times: getpid, check
 * it returned the same pid (else exit(1)); then exit(0). Exactly iterations + 2
 * syscalls: iterations + 1 getpid (entry and exit) and exit (entry only).
 */
export function getpidLoop(iterations: number): Uint8Array {
  const n = iterations
  // biome-ignore format: one instruction per line
  return tinyElf([
    ...syscall(39), // 0: getpid
    0x41, 0x89, 0xc5, // 7: mov r13d, eax
    0x41, 0xbc, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >> 24) & 0xff, // 10: mov r12d, n
    ...syscall(39), // 16: loop: getpid
    0x44, 0x39, 0xe8, // 23: cmp eax, r13d
    0x75, 0x11, // 26: jne fail (45)
    0x41, 0xff, 0xcc, // 28: dec r12d
    0x75, 0xef, // 31: jnz loop
    0xbf, 0, 0, 0, 0, // 33: mov edi, 0
    ...syscall(60), // 38: exit(0)
    0xbf, 1, 0, 0, 0, // 45: fail: mov edi, 1
    ...syscall(60), // 50: exit(1)
  ])
}

/** A kernel with the getpid loop spawned (not yet run), booted as kprobes' bench boots it. */
export function getpidKernel(program: Uint8Array): Kernel {
  const k = new Kernel({ image, cpus: 1, memorySize: 64 * 1024 * 1024, tickCycles: 20_000 })
  k.vfs.writeFile('/bin/getpid', program)
  k.boot()
  k.spawn('/bin/getpid', ['getpid'])
  return k
}

export const BASH = '/bin/bash-static'
export const haveBash = process.platform === 'linux' && process.arch === 'x64' && existsSync(BASH)

const scripts = fileURLToPath(new URL('../../kernel/test/bash', import.meta.url))
const fixtureBin = fileURLToPath(new URL('../../kernel/fixtures/bin', import.meta.url))

/** The script bash-static runs: pipelines start child bash processes, so following clones matters. */
export const SCRIPT = 'pipelines.sh'

export interface BashKernel {
  k: Kernel
  out: () => string
}

/** A kernel with bash-static spawned on the script (not yet run), set up as packages/kernel/test/bash.test.ts does. */
export function bashKernel(bash: Uint8Array, script = SCRIPT): BashKernel {
  let out = ''
  const dec = new TextDecoder()
  const k = new Kernel({
    image,
    cpus: 1,
    memorySize: 256 * 1024 * 1024,
    stdout: (d) => {
      out += dec.decode(d)
    },
    stderr: (d) => {
      out += dec.decode(d)
    },
  })
  k.vfs.writeFile(BASH, bash)
  k.vfs.mountHost(fixtureBin, nodeHostDirectory(fixtureBin))
  k.vfs.mountHost(scripts, nodeHostDirectory(scripts))
  k.boot()
  const env = { PATH: fixtureBin, WORK: '/tmp', LC_ALL: 'C' }
  k.spawn(
    BASH,
    [BASH, `${scripts}/${script}`],
    Object.entries(env).map(([name, v]) => `${name}=${v}`),
  )
  return { k, out: () => out }
}
