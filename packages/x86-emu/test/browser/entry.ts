// Browser entry for the browser test: runs a bare program with the emulator
// and reports what it printed. Bundled with esbuild for platform 'browser',
// so any Node-only import anywhere in the package fails the bundle.

import { loadBare } from '../support/bare.js'

export function runInBrowser(elf: number[]): {
  stdout: string
  exitCode: number | null
  instructions: number
} {
  const { machine, out } = loadBare(Uint8Array.from(elf))
  machine.run({ maxInstructions: 1_000_000_000 })
  return { stdout: out.stdout, exitCode: out.exitCode, instructions: machine.totalInstructions() }
}
