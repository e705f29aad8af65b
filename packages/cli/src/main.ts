// Entry point of the `probekit` command (bin/probekit.js runs this).

import pc from 'picocolors'
import { HostOutput } from './host-output.js'
import { describeWriteError, EPIPE } from './host-write.js'
import { runCli } from './program.js'

const SIGPIPE = 13

// Colour on a terminal (or with FORCE_COLOR), never in a pipe or a file: picocolors alone also
// colours whenever CI is set, which put escape codes into piped output on CI machines.
const env = process.env
const colors = pc.createColors(
  !('NO_COLOR' in env) && ('FORCE_COLOR' in env || (process.stdout.isTTY === true && env.TERM !== 'dumb')),
)

const stdout = new HostOutput(1)
const stderr = new HostOutput(2)
// No top-level await: bin/probekit.js runs this file bundled as a CommonJS script (its V8 code cache).
void runCli(process.argv.slice(2), {
  stdout,
  stderr,
  colors,
  stderrIsTty: process.stderr.isTTY === true,
}).then((status) => {
  let code = status
  // probekit's own output (help, decode, demo) could not be written. A reader
  // that went away (`| head`) is the quiet end of a program killed by SIGPIPE;
  // anything else (a full disk) is said, as coreutils say "write error".
  // A message lost on a gone stderr changes nothing: the code still tells.
  if (stdout.error !== 0 && code === 0) {
    if (stdout.error === -EPIPE) code = 128 + SIGPIPE
    else {
      stderr.write(`${colors.red('probekit:')} stdout: ${describeWriteError(stdout.error)}\n`)
      code = 1
    }
  }
  process.exitCode = code
})
