// One directory per `vitest run` for the site built under the tests' base:
// the site and playground test files both need the built site, and a build
// takes minutes, so the first to ask builds it and the other reuses it.

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    builtSiteDir: string
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'probekit-docs-site-'))
  project.provide('builtSiteDir', dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
