// The package version, read from package.json at run time. src/ and dist/ both
// sit one level below it, so the same relative URL works for both.

import { readFileSync } from 'node:fs'

export function packageVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const version = (manifest as { version?: unknown }).version
  return typeof version === 'string' ? version : '0.0.0'
}
