#!/usr/bin/env node
// The `probekit` command.
//
// In a checkout (tsconfig.json sits next to package.json; it is not published)
// this runs the TypeScript sources through tsx, with the '@probekit/source'
// export condition so the workspace packages resolve to their sources too:
// no build step, and never a stale dist/. tsx is the repository's root
// devDependency, not the package's: an installed package runs dist/ (built
// by prepack) and needs nothing but node.
// The condition has to be a node flag, as do V8's heap limits (NODE_FLAGS),
// which is why this spawns a child node instead of running in this process.

import { spawn } from 'node:child_process'
import { existsSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packageRoot = new URL('../', import.meta.url)
const compiled = new URL('dist/main.js', packageRoot)
const inCheckout = existsSync(new URL('tsconfig.json', packageRoot))

// V8's young generation grows to 16 MiB per semi-space while the emulator
// builds its code cache (objects that survive scavenges), which more than
// doubles the resident set of a small guest; capped at 4 MiB it runs as
// fast (packages/kernel/README.md, Memory). Heap limits are only read at
// startup, hence a child node even for an installed package.
const NODE_FLAGS = ['--max-semi-space-size=4']

if (!inCheckout && !existsSync(compiled)) {
  process.stderr.write(
    `probekit: ${fileURLToPath(compiled)} is missing: this package was published without its build\n`,
  )
  process.exit(1)
}
const entry = inCheckout
  ? [
      '--conditions=@probekit/source',
      '--import',
      import.meta.resolve('tsx'),
      fileURLToPath(new URL('src/main.ts', packageRoot)),
    ]
  : [fileURLToPath(compiled)]
// Ctrl-C reaches `probekit run` as one more byte in an unlinked file (the child's fd 3): busy
// running the guest, the child cannot take a signal until the run returns, but it looks at the
// file's size on every guest timer tick (packages/cli/src/host-interrupts.ts).
const interruptPath = join(tmpdir(), `probekit-${process.pid}-interrupts`)
const interrupts = openSync(interruptPath, 'w+', 0o600)
unlinkSync(interruptPath)
const child = spawn(process.execPath, [...NODE_FLAGS, ...entry, ...process.argv.slice(2)], {
  stdio: ['inherit', 'inherit', 'inherit', interrupts],
  env: { ...process.env, PROBEKIT_INTERRUPT_FD: '3' },
})
// Pass termination requests on, and die the way the child died. A child that is not running a
// guest (or one that does not listen) dies of the SIGINT itself.
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP']
for (const signal of signals)
  process.on(signal, () => {
    if (signal === 'SIGINT') writeSync(interrupts, 'i')
    child.kill(signal)
  })
child.on('exit', (code, signal) => {
  if (signal) {
    for (const s of signals) process.removeAllListeners(s)
    process.kill(process.pid, signal)
  } else {
    process.exit(code ?? 1)
  }
})
