// The CLI's bundle in a checkout: src/main.ts and every workspace package it
// imports (their sources, through the '@probekit/source' condition) in one
// CommonJS script, dist/probekit.cjs, that bin/run-bundle.cjs runs with a V8
// code cache. Running the sources through tsx instead costs about a second of
// CPU per command in module loading (hundreds of files, each transformed).
//
// The bundle is rebuilt when any file it was built from changed: the list of
// inputs and their modification times sits beside it (probekit.inputs.json),
// and a look at them is a few hundred stat calls. esbuild is tsx's own
// dependency (the repository's root devDependency); without it, or when a
// source does not build, the caller runs the sources through tsx as before,
// which reports the error.

import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

/** Bumped when the build's options change, so an older bundle is not taken for a current one. */
const FORMAT = 2

const packageRoot = new URL('../', import.meta.url)
const dist = new URL('dist/', packageRoot)
export const bundlePath = fileURLToPath(new URL('probekit.cjs', dist))
const inputsPath = fileURLToPath(new URL('probekit.inputs.json', dist))
const repoRoot = new URL('../../', packageRoot)
// A pnpm install that moved a dependency to another version leaves the old files in place: these two
// files change with every install.
const installStamps = ['pnpm-lock.yaml', 'node_modules/.modules.yaml']
  .map((p) => fileURLToPath(new URL(p, repoRoot)))
  .filter((p) => existsSync(p))

function mtime(path) {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -1
}

/** The bundle is there and was built from the files as they are now. */
function isFresh() {
  let recorded
  try {
    recorded = JSON.parse(readFileSync(inputsPath, 'utf8'))
  } catch {
    return false
  }
  if (recorded.format !== FORMAT || !existsSync(bundlePath)) return false
  for (const [path, ms] of Object.entries(recorded.inputs)) if (mtime(path) !== ms) return false
  return true
}

/**
 * The path of a current bundle (built now if it is missing or stale), or null when it cannot be
 * built. Concurrent runs may build at once: each writes its own temporary files and renames them
 * into place, so a reader sees a whole bundle and the inputs it was built from.
 */
export function freshBundle() {
  if (isFresh()) return bundlePath
  let esbuild
  try {
    esbuild = createRequire(import.meta.resolve('tsx'))('esbuild')
  } catch {
    return null
  }
  // The inputs' times as they were before the build read them: a file edited meanwhile is older in
  // the record than on disk, so the next run builds again.
  const started = Date.now()
  const tmp = `${bundlePath}.${process.pid}-${randomBytes(4).toString('hex')}`
  let result
  try {
    result = esbuild.buildSync({
      entryPoints: [fileURLToPath(new URL('src/main.ts', packageRoot))],
      absWorkingDir: fileURLToPath(repoRoot),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      conditions: ['@probekit/source'],
      // Its .wasm file is found next to its own script.
      external: ['capstone-wasm'],
      // A script run through vm (bin/run-bundle.cjs) has no dynamic import(): esbuild makes it require().
      supported: { 'dynamic-import': false },
      // bin/run-bundle.cjs passes the bundle's own URL: the sources find package.json and the kernel
      // package from it (dist/ is one level below the package, as src/ is).
      define: { 'import.meta.url': '__probekitImportMetaUrl' },
      metafile: true,
      outfile: tmp,
      logLevel: 'silent',
    })
  } catch {
    rmSync(tmp, { force: true })
    return null
  }
  // A CommonJS bundle has no import.meta beyond the URL defined above: code that uses more of it
  // runs through tsx rather than meeting an empty object.
  if (result.warnings.some((w) => w.text.includes('import.meta'))) {
    rmSync(tmp, { force: true })
    return null
  }
  const inputs = {}
  for (const p of [
    ...Object.keys(result.metafile.inputs).map((p) => fileURLToPath(new URL(p, repoRoot))),
    ...installStamps,
  ]) {
    const ms = mtime(p)
    // Changed while it was read: recorded as unknown, so the next run builds again.
    inputs[p] = ms > started ? -2 : ms
  }
  // A bundle's code cache is named by this id (bin/run-bundle.cjs): V8 checks a cache against its
  // source's length, not its text, so a cache must never outlive its bundle.
  const id = randomBytes(8).toString('hex')
  const code = readFileSync(tmp, 'utf8')
  writeFileSync(tmp, `// probekit bundle ${id}\n${code}`)
  renameSync(tmp, bundlePath)
  const tmpInputs = `${inputsPath}.${process.pid}`
  writeFileSync(tmpInputs, JSON.stringify({ format: FORMAT, id, inputs }))
  renameSync(tmpInputs, inputsPath)
  // Code caches of earlier bundles.
  for (const name of readdirSync(dist))
    if (/^probekit-[0-9a-f]+\.v8cache$/.test(name) && name !== `probekit-${id}.v8cache`)
      rmSync(fileURLToPath(new URL(name, dist)), { force: true })
  return bundlePath
}
