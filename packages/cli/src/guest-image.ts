// What @probekit/kernel ships for the command: the guest kernel image
// (guest/vmlinux) and the bundled programs the demo runs. Both are found
// through the package's exports, as an installed package lays them out
// (node_modules/@probekit/kernel, wherever the package manager put it), so
// nothing depends on the monorepo's directories.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The static musl programs @probekit/kernel publishes (fixtures/bin/NAME). */
export const BUNDLED_PROGRAMS = ['hello', 'proctree', 'fileio', 'myprog'] as const
export type BundledProgram = (typeof BUNDLED_PROGRAMS)[number]

export function readGuestImage(): Uint8Array {
  return new Uint8Array(readFileSync(require.resolve('@probekit/kernel/guest/vmlinux')))
}

/** The host path of a bundled program, e.g. for `probekit run`. */
export function bundledProgramPath(name: BundledProgram): string {
  return require.resolve(`@probekit/kernel/fixtures/bin/${name}`)
}

export function readBundledProgram(name: BundledProgram): Uint8Array {
  return new Uint8Array(readFileSync(bundledProgramPath(name)))
}
