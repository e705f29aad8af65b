// The site built once under BASE for this test run (see site-dir.ts): the
// first test file to call builtSite() builds it, the others wait on the lock
// and find it done.

import { execFile } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { inject } from 'vitest'
import { withDirLock } from '../../.vitepress/dir-lock.js'

export const BASE = '/probekit/'
const docs = fileURLToPath(new URL('../../', import.meta.url))
const vitepress = join(docs, 'node_modules/vitepress/bin/vitepress.js')

/** The directory holding the site built with base BASE. */
export async function builtSite(): Promise<string> {
  const outDir = inject('builtSiteDir')
  const done = join(outDir, '.built')
  // Builds share .vitepress/.temp, its cache and the generated API pages: one at a time.
  await withDirLock(join(docs, '.vitepress/.build-lock'), 1_200_000, async () => {
    if (existsSync(done)) return
    await promisify(execFile)(process.execPath, [vitepress, 'build', '--outDir', outDir], {
      cwd: docs,
      env: { ...process.env, DOCS_BASE: BASE },
      maxBuffer: 64 * 1024 * 1024,
    })
    writeFileSync(done, '')
  })
  return outDir
}
