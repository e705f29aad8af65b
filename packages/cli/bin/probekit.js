#!/usr/bin/env node
// The `probekit` command.
//
// In a checkout (tsconfig.json sits next to package.json; it is not published)
// this runs the TypeScript sources through tsx, with the '@probekit/source'
// export condition so the workspace packages resolve to their sources too:
// no build step, and never a stale dist/. An installed package runs dist/.
// The condition has to be a node flag, as do V8's heap limits (NODE_FLAGS),
// which is why this spawns a child node instead of running in this process.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
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

const entry =
  !inCheckout && existsSync(compiled)
    ? [fileURLToPath(compiled)]
    : [
        '--conditions=@probekit/source',
        '--import',
        import.meta.resolve('tsx'),
        fileURLToPath(new URL('src/main.ts', packageRoot)),
      ]
const child = spawn(process.execPath, [...NODE_FLAGS, ...entry, ...process.argv.slice(2)], {
  stdio: 'inherit',
})
// Pass termination requests on, and die the way the child died.
const signals = ['SIGINT', 'SIGTERM', 'SIGHUP']
for (const signal of signals) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => {
  if (signal) {
    for (const s of signals) process.removeAllListeners(s)
    process.kill(process.pid, signal)
  } else {
    process.exit(code ?? 1)
  }
})
