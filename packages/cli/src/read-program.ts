// The program named on `probekit run`'s command line, read from the host as
// execve would find it: a regular file with execute permission (else EACCES,
// as Linux says), so /dev/zero or a FIFO is refused before it is read.

import { accessSync, constants, readFileSync, statSync } from 'node:fs'
import { CliError } from './cli-error.js'

export function readProgram(program: string): Uint8Array {
  let st: ReturnType<typeof statSync>
  try {
    st = statSync(program)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new CliError(
      `${program}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : `cannot read it (${code})`}`,
    )
  }
  if (st.isDirectory()) throw new CliError(`${program}: is a directory`)
  // execve's EACCES: only a regular file can be run (never a device, FIFO or socket, which may never end).
  if (!st.isFile())
    throw new CliError(`${program}: permission denied: not a regular file (execve says EACCES)`)
  try {
    accessSync(program, constants.X_OK)
  } catch {
    throw new CliError(
      `${program}: permission denied: it has no execute permission (execve says EACCES; chmod +x it)`,
    )
  }
  try {
    return new Uint8Array(readFileSync(program))
  } catch (e) {
    throw new CliError(`${program}: cannot read it (${(e as NodeJS.ErrnoException).code})`)
  }
}
