// Entry point of the `probekit` command (bin/probekit.js runs this).

import pc from 'picocolors'
import { runCli } from './program.js'

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  colors: pc,
})
