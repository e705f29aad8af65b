// A static file server for a built VitePress site, serving it the way GitHub
// Pages does: under a base path, /x answered by x.html (clean URLs), /dir/ by
// dir/index.html, anything else by 404.html with status 404. It records every
// request, so a test can see what the browser asked for outside the page too
// (the favicon).

import { existsSync, readFileSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, sep } from 'node:path'

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
}

export interface ServedRequest {
  path: string
  status: number
}

export interface StaticSite {
  /** http://127.0.0.1:PORT */
  origin: string
  requests: ServedRequest[]
  close(): Promise<void>
}

/** The file a request path maps to, or undefined (outside the base, or no such file). */
function resolveFile(root: string, base: string, pathname: string): string | undefined {
  if (!pathname.startsWith(base)) return undefined
  const rel = pathname.slice(base.length)
  const candidates = rel === '' || rel.endsWith('/') ? [`${rel}index.html`] : [rel, `${rel}.html`]
  for (const candidate of candidates) {
    const file = normalize(join(root, candidate))
    if (file !== root && !file.startsWith(root + sep)) return undefined
    if (existsSync(file) && statSync(file).isFile()) return file
  }
  return undefined
}

/** Serves `root` under `base` (e.g. '/probekit/') on a free localhost port. */
export async function serveStatic(root: string, base: string): Promise<StaticSite> {
  const requests: ServedRequest[] = []
  const server: Server = createServer((req, res) => {
    let pathname: string
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname)
    } catch {
      pathname = ''
    }
    const file = resolveFile(root, base, pathname)
    const status = file ? 200 : 404
    requests.push({ path: pathname, status })
    const body = file ?? join(root, '404.html')
    res.writeHead(status, {
      'content-type': CONTENT_TYPES[extname(body)] ?? 'application/octet-stream',
      // What Pages sends: the browser reuses the shared chunks from page to page.
      'cache-control': 'max-age=600',
    })
    res.end(existsSync(body) ? readFileSync(body) : 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
