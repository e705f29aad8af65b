// The CLI's probe placement (packages/cli/src/probes.ts, uprobe-events.ts)
// also reads -P files and finds the guest image in node_modules, so it
// imports node:fs, node:module and node:path. The worker never takes those
// paths (its image and programs come from the site, its definitions from
// the page), so in its bundle those modules (and capstone-wasm's 'module')
// are these stand-ins: a clear error if one is ever called, and
// path.posix.resolve, which placing a uprobe does use, for real.

const UNAVAILABLE = `const unavailable = (what) => () => {
  throw new Error(what + ' is not available in the browser playground')
}`

/** Each stand-in's source, by the id the CLI imports. */
export const NODE_SHIMS: Record<string, string> = {
  'node:fs': `${UNAVAILABLE}
export const readFileSync = unavailable('fs.readFileSync')
export const openSync = unavailable('fs.openSync')
export const readSync = unavailable('fs.readSync')
export const statSync = unavailable('fs.statSync')
export const accessSync = unavailable('fs.accessSync')
export const constants = {}`,
  // guest-image.ts calls createRequire as it loads; only the require it makes may not be called.
  'node:module': `${UNAVAILABLE}
export const createRequire = () => unavailable('require')`,
  // capstone-wasm's Node branch (never taken in a worker) imports it by its bare name.
  module: `${UNAVAILABLE}
export const createRequire = () => unavailable('require')`,
  // posix.resolve: absolute, '.' and '..' folded, no trailing slash.
  'node:path': `export const posix = {
  resolve(...paths) {
    const parts = []
    for (const p of paths) {
      if (p.startsWith('/')) parts.length = 0
      for (const seg of p.split('/')) {
        if (seg === '..') parts.pop()
        else if (seg !== '' && seg !== '.') parts.push(seg)
      }
    }
    return '/' + parts.join('/')
  },
}`,
}
