// The API reference: TypeDoc (markdown + VitePress plugins) over every
// package's src/index.ts, generated into api/reference/ (git-ignored) when
// the VitePress config loads, so `vitepress build` and `vitepress dev` always
// show the code as it is. The output is reused while none of its inputs change
// (a hash of the packages' sources, this file and the tool versions). Parallel
// builds take turns (a lock), and a new output replaces the old one in one
// rename, so a build never sees a half-written reference.

import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  Application,
  Comment,
  type DeclarationReflection,
  LogLevel,
  type ProjectReflection,
  ReflectionKind,
  type TypeDocOptions,
} from 'typedoc'
import type { DefaultTheme } from 'vitepress'
import { withDirLock } from './dir-lock.js'
import { documentedPackages } from './packages.js'

const docsRoot = fileURLToPath(new URL('../', import.meta.url))
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url))
const packagesRoot = join(repoRoot, 'packages')

/** Where the pages go, relative to the docs root (also their URL path). */
export const API_REFERENCE_DIR = 'api/reference'
const outDir = join(docsRoot, API_REFERENCE_DIR)
// Bookkeeping in .vitepress/cache (git- and biome-ignored; VitePress does not
// look for pages in a dot directory).
const cacheDir = join(docsRoot, '.vitepress/cache')
/** The sidebar, warnings and input hash of the last generation. */
const stampFile = join(cacheDir, 'api-reference.json')
const lockDir = join(cacheDir, 'api-reference.lock')
/** TypeDoc writes here first; the finished output is renamed to outDir. */
const stagingDir = join(cacheDir, 'api-reference.new')
const retiredDir = join(cacheDir, 'api-reference.old')

export interface ApiReference {
  sidebar: DefaultTheme.SidebarItem[]
  /** TypeDoc's warnings and errors, without colours (kept with a reused output). */
  warnings: string[]
  /** False when the previous output was still current. */
  generated: boolean
}

interface Stamp {
  hash: string
  sidebar: DefaultTheme.SidebarItem[]
  warnings: string[]
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort()
}

function toolVersion(name: string): string {
  const manifest = join(docsRoot, 'node_modules', name, 'package.json')
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : 'missing'
}

/** Everything the output depends on: sources, manifests, this generator, the tools. */
function inputHash(): string {
  const hash = createHash('sha256')
  const inputs = [
    fileURLToPath(import.meta.url),
    join(docsRoot, '.vitepress/packages.ts'),
    join(docsRoot, 'tsconfig.api.json'),
    join(repoRoot, 'tsconfig.base.json'),
    ...documentedPackages.flatMap((p) => [
      join(packagesRoot, p.dir, 'package.json'),
      ...filesUnder(join(packagesRoot, p.dir, 'src')),
    ]),
  ]
  for (const file of inputs) {
    hash.update(relative(repoRoot, file)).update('\0')
    hash.update(existsSync(file) ? readFileSync(file) : 'missing').update('\0')
  }
  for (const tool of ['typedoc', 'typedoc-plugin-markdown', 'typedoc-vitepress-theme']) {
    hash.update(`${tool}@${toolVersion(tool)}\0`)
  }
  hash.update(repositoryUrl())
  return hash.digest('hex')
}

function readStamp(): Stamp | undefined {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8')) as Stamp
  } catch {
    return undefined
  }
}

/** Where "Defined in" links point: the repository being built on GitHub Actions, else package.json's. */
function repositoryUrl(): string {
  const { GITHUB_SERVER_URL, GITHUB_REPOSITORY } = process.env
  if (GITHUB_REPOSITORY) return `${GITHUB_SERVER_URL ?? 'https://github.com'}/${GITHUB_REPOSITORY}`
  const { repository } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))
  return String(repository?.url ?? repository)
    .replace(/^git\+/, '')
    .replace(/\.git$/, '')
}

/**
 * Names each module after its package (TypeDoc would say "kernel/src"), gives
 * it the one-line summary the packages overview uses (unless its index.ts has
 * a `@packageDocumentation` comment of its own), and lists the packages in
 * layer order, as the rest of the site does.
 */
function namePackages(project: ProjectReflection): void {
  const rank = new Map<DeclarationReflection, number>()
  for (const mod of project.getChildrenByKind(ReflectionKind.Module) as DeclarationReflection[]) {
    const file = mod.sources?.[0]?.fullFileName ?? ''
    const index = documentedPackages.findIndex((p) => file.endsWith(`/packages/${p.dir}/src/index.ts`))
    if (index < 0) continue
    const pkg = documentedPackages[index]
    rank.set(mod, index)
    mod.name = pkg.name
    mod.comment ??= new Comment([
      { kind: 'text', text: `${pkg.summary}\n\nSee also the package's [guide page](/packages/${pkg.dir}).` },
    ])
  }
  const byLayer = (a: DeclarationReflection, b: DeclarationReflection) =>
    (rank.get(a) ?? rank.size) - (rank.get(b) ?? rank.size)
  project.children?.sort(byLayer)
  for (const group of project.groups ?? []) (group.children as DeclarationReflection[]).sort(byLayer)
}

function stripAnsi(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what is stripped
  return text.replace(/\u001b\[[0-9;]*m/g, '')
}

async function runTypeDoc(): Promise<{ sidebar: DefaultTheme.SidebarItem[]; warnings: string[] }> {
  // Plugin options (typedoc-plugin-markdown, typedoc-vitepress-theme) are not
  // in TypeDoc's option types, hence the wider record.
  const options: TypeDocOptions & Record<string, unknown> = {
    name: 'API reference',
    // Bottom layer first: a name several entry points export is documented
    // where it is defined, and the meta-package (cli) shows it as a re-export.
    entryPoints: documentedPackages.map((p) => join(packagesRoot, p.dir, 'src/index.ts')),
    entryPointStrategy: 'resolve',
    tsconfig: join(docsRoot, 'tsconfig.api.json'),
    // Type errors are each package's typecheck's business; the docs only read.
    skipErrorChecking: true,
    plugin: ['typedoc-plugin-markdown', 'typedoc-vitepress-theme'],
    out: stagingDir,
    docsRoot,
    cleanOutputDir: true,
    readme: 'none',
    excludePrivate: true,
    excludeInternal: true,
    sort: ['kind', 'alphabetical'],
    sourceLinkTemplate: `${repositoryUrl()}/blob/{gitRevision}/{path}#L{line}`,
    // The markdown plugin: one page per class, interface and enum; functions,
    // variables and type aliases on their package's page (a page each would
    // be some 700 pages of a line or two).
    outputFileStrategy: 'members',
    membersWithOwnFile: ['Class', 'Interface', 'Enum'],
    excludeScopesInPaths: true,
    useCodeBlocks: true,
    // Vue compiles every page: a stray <n> in a comment must stay text.
    sanitizeComments: true,
    hideBreadcrumbs: false,
    sidebar: { autoConfiguration: true, collapsed: true, pretty: false },
    logLevel: 'Warn',
  }
  const app = await Application.bootstrapWithPlugins(options)
  const warnings: string[] = []
  const log = app.logger.log.bind(app.logger)
  app.logger.log = (message: string, level: LogLevel) => {
    if (level >= LogLevel.Warn) warnings.push(stripAnsi(message))
    log(message, level)
  }
  const project = await app.convert()
  if (!project) throw new Error(`TypeDoc could not convert the packages: ${warnings.join('; ')}`)
  namePackages(project)
  await app.generateOutputs(project)
  const sidebarFile = join(stagingDir, 'typedoc-sidebar.json')
  // Links are made for where TypeDoc wrote the pages; they will be served from outDir.
  const stagingLink = `/${relative(docsRoot, stagingDir).split('\\').join('/')}/`
  const sidebar = JSON.parse(
    readFileSync(sidebarFile, 'utf8').replaceAll(`"${stagingLink}`, `"/${API_REFERENCE_DIR}/`),
  ) as DefaultTheme.SidebarItem[]
  // Read into the config instead: a JSON file among the pages would be linted.
  rmSync(sidebarFile)
  return { sidebar, warnings }
}

function current(hash: string): Stamp | undefined {
  const stamp = readStamp()
  return stamp?.hash === hash && existsSync(join(outDir, 'index.md')) ? stamp : undefined
}

/** Generates the reference unless the last output is current; returns its sidebar. */
export async function generateApiReference(): Promise<ApiReference> {
  const hash = inputHash()
  const reused = current(hash)
  if (reused) return { sidebar: reused.sidebar, warnings: reused.warnings, generated: false }
  mkdirSync(cacheDir, { recursive: true })
  return withDirLock(lockDir, 10 * 60_000, async () => {
    // Another build may have generated it while this one waited.
    const done = current(hash)
    if (done) return { sidebar: done.sidebar, warnings: done.warnings, generated: false }
    rmSync(stagingDir, { recursive: true, force: true })
    const { sidebar, warnings } = await runTypeDoc()
    rmSync(retiredDir, { recursive: true, force: true })
    if (existsSync(outDir)) renameSync(outDir, retiredDir)
    mkdirSync(join(outDir, '..'), { recursive: true })
    renameSync(stagingDir, outDir)
    rmSync(retiredDir, { recursive: true, force: true })
    writeFileSync(stampFile, JSON.stringify({ hash, sidebar, warnings } satisfies Stamp))
    return { sidebar, warnings, generated: true }
  })
}
