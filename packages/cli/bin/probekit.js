#!/usr/bin/env node
// The `probekit` command.
//
// In a checkout (tsconfig.json sits next to package.json; it is not published)
// this runs the TypeScript sources through tsx, with the '@probekit/source'
// export condition so the workspace packages resolve to their sources too:
// no build step, and never a stale dist/. An installed package runs dist/.
// The condition has to be a node flag, which is why this spawns a child node
// instead of registering tsx in this process.

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const packageRoot = new URL('../', import.meta.url)
const compiled = new URL('dist/main.js', packageRoot)
const inCheckout = existsSync(new URL('tsconfig.json', packageRoot))

if (!inCheckout && existsSync(compiled)) {
  await import(compiled.href)
} else {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@probekit/source',
      '--import',
      import.meta.resolve('tsx'),
      fileURLToPath(new URL('src/main.ts', packageRoot)),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit' },
  )
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
}
