// The site's base path: '/' by default, '/REPO/' on GitHub Pages. Set with the
// DOCS_BASE environment variable (`DOCS_BASE=/probekit/ pnpm docs:build`), so
// everything that needs the base (VitePress itself, the favicon link) agrees.

/** Normalizes a base path to VitePress's form: a leading and a trailing slash. */
export function docsBase(value: string | undefined): string {
  const path = (value ?? '').trim()
  if (path === '' || path === '/') return '/'
  if (!/^\/?[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$/.test(path) || path.includes('//')) {
    throw new Error(`DOCS_BASE must be a URL path such as /probekit/, got ${JSON.stringify(value)}`)
  }
  return `/${path.replace(/^\/+|\/+$/g, '')}/`
}
