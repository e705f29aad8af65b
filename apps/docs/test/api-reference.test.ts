// The API reference documents every package from its TSDoc: TypeDoc finds
// nothing to warn about, the sidebar lists the packages in layer order, and
// every name a package exports at runtime has a section or a page of its own
// (for the meta-package, a re-export entry).

import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { API_REFERENCE_DIR, type ApiReference, generateApiReference } from '../.vitepress/api-reference.js'
import { documentedPackages } from '../.vitepress/packages.js'

const docs = fileURLToPath(new URL('../', import.meta.url))
const repo = new URL('../../../', import.meta.url)

/** The reference directory of a package: its npm name without the scope (cli is "probekit"). */
function referenceDir(name: string): string {
  return join(docs, API_REFERENCE_DIR, name.replace(/^@[^/]+\//, ''))
}

/** Names with a heading on the package's page or a page of their own. */
function documentedNames(dir: string): Set<string> {
  const names = new Set<string>()
  const index = readFileSync(join(dir, 'index.md'), 'utf8')
  for (const m of index.matchAll(/^#{2,4} (.+)$/gm))
    names.add(m[1].replace(/\\(.)/g, '$1').replace(/\(\)$/, ''))
  for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.md') && file !== 'index.md') names.add(basename(file, '.md'))
  }
  return names
}

describe('API reference', () => {
  let reference: ApiReference

  beforeAll(async () => {
    reference = await generateApiReference()
  }, 600_000)

  it('is generated without TypeDoc warnings', () => {
    expect(reference.warnings).toEqual([])
  })

  it('lists every package in the sidebar, bottom layer first', () => {
    expect(reference.sidebar.map((item) => item.text)).toEqual(documentedPackages.map((p) => p.name))
    for (const item of reference.sidebar)
      expect(item.link).toMatch(new RegExp(`^/${API_REFERENCE_DIR}/[^/]+/$`))
  })

  it.each(documentedPackages.map((p) => [p.name, p.dir]))(
    'documents every runtime export of %s',
    async (name, dir) => {
      const exports = Object.keys(await import(new URL(`packages/${dir}/src/index.ts`, repo).href))
      expect(exports.length).toBeGreaterThan(0)
      const documented = documentedNames(referenceDir(name))
      expect(exports.filter((e) => !documented.has(e))).toEqual([])
      const page = readFileSync(join(referenceDir(name), 'index.md'), 'utf8')
      expect(page).toMatch(new RegExp(`^# ${name}$`, 'm'))
    },
  )
})
