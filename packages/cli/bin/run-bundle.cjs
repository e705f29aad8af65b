// Runs the CLI's bundle (bin/bundle.js built it: node run-bundle.cjs BUNDLE ARGS...) with a V8 code
// cache, the bytecode of every function the first `probekit run` after a build compiled: later
// runs skip parsing and compiling them (Node 20 has no module.enableCompileCache). The cache is
// named by the bundle's id (its first line) and made once, at the exit of the first run that
// found none (or one V8 refused: another node, other flags). Only `run` makes it, the command
// whose start-up counts; the others use it.

'use strict'

const { readFileSync, renameSync, writeFileSync } = require('node:fs')
const { createRequire } = require('node:module')
const { dirname, join, resolve } = require('node:path')
const { pathToFileURL } = require('node:url')
const vm = require('node:vm')

const file = resolve(process.argv[2])
// The CLI sees its arguments where node puts them: [node, script, ...args].
process.argv.splice(1, 2, file)
const source = readFileSync(file, 'utf8')
const id = /^\/\/ probekit bundle ([0-9a-f]+)\n/.exec(source)?.[1]
const cachePath = id ? join(dirname(file), `probekit-${id}.v8cache`) : null
let cachedData
if (cachePath) {
  try {
    cachedData = readFileSync(cachePath)
  } catch {}
}
// CommonJS's own wrapper, plus the URL the sources' import.meta.url stands for; strict, as the
// ES modules it was built from are.
const script = new vm.Script(
  `(function (exports, require, module, __filename, __dirname, __probekitImportMetaUrl) {'use strict';${source}\n})`,
  { filename: file, cachedData },
)
if (cachePath && process.argv[2] === 'run' && (cachedData === undefined || script.cachedDataRejected))
  process.once('exit', () => {
    try {
      const tmp = `${cachePath}.${process.pid}`
      writeFileSync(tmp, script.createCachedData())
      renameSync(tmp, cachePath)
    } catch {
      // No cache this time (a read-only checkout): the next run tries again.
    }
  })
const module_ = { exports: {} }
script.runInThisContext()(
  module_.exports,
  createRequire(file),
  module_,
  file,
  dirname(file),
  pathToFileURL(file).href,
)
