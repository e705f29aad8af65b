// Every package in packages/* has a page, and the sidebar lists it.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { documentedPackages } from '../.vitepress/packages.js'

const repoPackages = new URL('../../../packages/', import.meta.url)
const docs = new URL('../', import.meta.url)

const packageDirs = readdirSync(repoPackages, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(new URL(`${d.name}/package.json`, repoPackages)))
  .map((d) => d.name)

describe('docs pages', () => {
  it('finds the packages', () => {
    expect(packageDirs).toContain('x86-emu')
  })

  it.each(packageDirs)('packages/%s has a page and a sidebar entry', (dir) => {
    const page = new URL(`packages/${dir}.md`, docs)
    expect(existsSync(page), `apps/docs/packages/${dir}.md is missing`).toBe(true)
    const entry = documentedPackages.find((p) => p.dir === dir)
    expect(entry, `add ${dir} to apps/docs/.vitepress/packages.ts`).toBeDefined()
    const { name } = JSON.parse(readFileSync(new URL(`${dir}/package.json`, repoPackages), 'utf8'))
    expect(entry?.name).toBe(name)
    expect(readFileSync(page, 'utf8')).toContain(`# ${name}`)
  })

  it('documents no package that does not exist', () => {
    for (const p of documentedPackages) expect(packageDirs).toContain(p.dir)
  })

  it.each(['index.md', 'guide/getting-started.md', 'packages/index.md', 'api/decoder.md'])(
    'has %s',
    (page) => {
      expect(existsSync(new URL(page, docs))).toBe(true)
    },
  )
})
