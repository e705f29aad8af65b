// Debian's bash-static running the scripts in test/bash/, shared by
// bash.test.ts (native against emulated) and tools/determinism.ts (emulated,
// many times over).

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeHostDirectory } from './host-directory.js'
import { runGuest } from './run.js'

export const BASH = '/bin/bash-static'
export const scripts = fileURLToPath(new URL('../bash/', import.meta.url)).replace(/\/$/, '')
const fixtureBin = fileURLToPath(new URL('../../fixtures/bin', import.meta.url))
export const available = process.platform === 'linux' && process.arch === 'x64' && existsSync(BASH)

/** The scripts, by file name. */
export const scriptNames = (): string[] => readdirSync(scripts).filter((f) => f.endsWith('.sh'))

/** The environment both runs get: external commands are found through PATH in the fixtures. */
export const env = (work: string) => ({ PATH: fixtureBin, WORK: work, LC_ALL: 'C' })

/** A script under the kernel, in a fresh kernel: what it printed, its status, and the kernel (for counts). */
export function emulated(script: string) {
  const r = runGuest(new Uint8Array(readFileSync(BASH)), [BASH, script], {
    path: BASH,
    env: Object.entries(env('/tmp')).map(([k, v]) => `${k}=${v}`),
    memorySize: 256 * 1024 * 1024,
    maxInstructions: 3_000_000_000,
    setup: (k) => {
      k.vfs.mountHost(fixtureBin, nodeHostDirectory(fixtureBin))
      k.vfs.mountHost(scripts, nodeHostDirectory(scripts))
    },
  })
  return { run: r, result: { stdout: r.stdout, stderr: r.stderr, status: r.status } }
}

/** A script's path from its file name. */
export const scriptPath = (name: string) => join(scripts, name)
