#!/usr/bin/env node
// The `probekit` command.
//
// In a checkout (tsconfig.json sits next to package.json; it is not published)
// this runs the TypeScript sources, with the '@probekit/source' export
// condition so the workspace packages resolve to their sources too: no build
// step, and never a stale dist/. They run as one bundle (bin/bundle.js builds
// it when a source changed, bin/run-bundle.cjs runs it with a V8 code cache);
// through tsx, the repository's root devDependency, when the bundle cannot be
// built (tsx then reports the error) or PROBEKIT_BUNDLE=0 asks for it. An
// installed package runs dist/ (built by prepack) and needs nothing but node.
// V8's heap limits (NODE_FLAGS) are node flags, read only at start-up, which is
// why this spawns a child node instead of running in this process.

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
// startup, hence a child node even for an installed package. No compilation
// cache: V8 would keep every block function the emulator's code cache drops
// (it keeps `new Function` sources with their code), and two malloc arenas:
// V8's compiler threads leave arenas of their own fragmented and resident
// (packages/kernel/README.md, Memory: 5-10 MiB each on bash-static).
const NODE_FLAGS = ['--max-semi-space-size=4', '--no-compilation-cache']
const NODE_ENV = { MALLOC_ARENA_MAX: '2' }

if (!inCheckout && !existsSync(compiled)) {
  process.stderr.write(
    `probekit: ${fileURLToPath(compiled)} is missing: this package was published without its build\n`,
  )
  process.exit(1)
}
// PROBEKIT_DEBUG's stack traces name the sources' lines: tsx, not the bundle.
const bundle =
  inCheckout && process.env.PROBEKIT_BUNDLE !== '0' && !process.env.PROBEKIT_DEBUG
    ? (await import('./bundle.js')).freshBundle()
    : null
const entry = bundle
  ? [fileURLToPath(new URL('bin/run-bundle.cjs', packageRoot)), bundle]
  : inCheckout
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
  // The variables set here for node alone are named, so the guest's environment leaves them out.
  env: {
    ...NODE_ENV,
    ...process.env,
    PROBEKIT_INTERRUPT_FD: '3',
    PROBEKIT_NODE_ENV: Object.keys(NODE_ENV)
      .filter((name) => !(name in process.env))
      .join(','),
  },
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
