// The ```ts examples in the docs use the real API: every name a block imports
// from a probekit package is exported by it (values checked by really importing
// the package, types by the compiler), and each page's blocks, read in order
// as one module, type-check against the packages' sources.

import { readdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const docs = new URL('../', import.meta.url)
const repo = new URL('../../', docs)

/** Pages with code: the top-level ones and those in the site's sections. */
const pages = ['', 'guide/', 'packages/', 'api/'].flatMap((dir) =>
  readdirSync(new URL(dir, docs))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${dir}${f}`),
)

interface ImportedName {
  module: string
  name: string
  typeOnly: boolean
}

interface Page {
  page: string
  blocks: string[]
}

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

const withCode: Page[] = pages
  .map((page) => ({ page, blocks: tsBlocks(readFileSync(new URL(page, docs), 'utf8')) }))
  .filter((p) => p.blocks.length > 0)

function importsOf(block: string): {
  names: ImportedName[]
  imports: ts.ImportDeclaration[]
  source: ts.SourceFile
} {
  const source = ts.createSourceFile('block.ts', block, ts.ScriptTarget.ES2022, true)
  const names: ImportedName[] = []
  const imports: ts.ImportDeclaration[] = []
  for (const st of source.statements) {
    if (!ts.isImportDeclaration(st)) continue
    imports.push(st)
    const module = (st.moduleSpecifier as ts.StringLiteral).text
    const clause = st.importClause
    const bindings = clause?.namedBindings
    if (bindings && ts.isNamedImports(bindings))
      for (const el of bindings.elements)
        names.push({
          module,
          name: (el.propertyName ?? el.name).text,
          typeOnly: clause.isTypeOnly || el.isTypeOnly,
        })
  }
  return { names, imports, source }
}

/** The package directory behind a module name, or null for Node built-ins. */
function packageDir(module: string): string | null {
  if (module.startsWith('node:')) return null
  if (module === 'probekit') return 'cli'
  const m = /^@probekit\/([a-z0-9-]+)$/.exec(module)
  if (!m) throw new Error(`docs examples import only probekit packages and node: built-ins (got '${module}')`)
  return m[1]
}

const runtimeExports = new Map<string, Promise<Set<string>>>()
function valuesOf(dir: string): Promise<Set<string>> {
  let p = runtimeExports.get(dir)
  if (!p) {
    const entry = new URL(`packages/${dir}/src/index.ts`, repo)
    p = import(entry.href).then((m: Record<string, unknown>) => new Set(Object.keys(m)))
    runtimeExports.set(dir, p)
  }
  return p
}

describe('docs code blocks', () => {
  it('finds the examples', () => {
    expect(withCode.map((p) => p.page)).toContain('packages/kprobes.md')
  })

  it.each(withCode)('$page imports only values its packages really export', async ({ page, blocks }) => {
    for (const block of blocks)
      for (const n of importsOf(block).names) {
        const dir = packageDir(n.module)
        if (dir === null || n.typeOnly) continue
        const values = await valuesOf(dir)
        expect(values.has(n.name), `${page}: '${n.name}' is not exported by ${n.module}`).toBe(true)
      }
  })

  it('every page type-checks against the packages', () => {
    // Each page becomes one module (its blocks in order, imports merged), kept in
    // memory under packages/cli so it resolves probekit's packages as the command does.
    const files = new Map<string, string>()
    for (const { page, blocks } of withCode) {
      const header = new Map<string, Set<string>>()
      let body = ''
      for (const block of blocks) {
        const { imports, source } = importsOf(block)
        let rest = block
        for (const imp of [...imports].reverse()) {
          const clause = imp.importClause
          const module = (imp.moduleSpecifier as ts.StringLiteral).text
          const names = header.get(module) ?? new Set<string>()
          header.set(module, names)
          const bindings = clause?.namedBindings
          if (bindings && ts.isNamedImports(bindings))
            for (const el of bindings.elements)
              names.add(
                `${clause.isTypeOnly || el.isTypeOnly ? 'type ' : ''}${el.getText(source).replace(/^type /, '')}`,
              )
          rest = rest.slice(0, imp.getFullStart()) + rest.slice(imp.getEnd())
        }
        body += `${rest}\n`
      }
      const head = [...header]
        .map(([m, names]) => `import { ${[...names].join(', ')} } from '${m}'\n`)
        .join('')
      const name = fileURLToPath(
        new URL(`packages/cli/docs-${page.replaceAll('/', '-').replace(/\.md$/, '')}.ts`, repo),
      )
      files.set(name, `${head}${body}export {}\n`)
    }
    const base = ts.readConfigFile(fileURLToPath(new URL('tsconfig.base.json', repo)), ts.sys.readFile)
    const { options } = ts.convertCompilerOptionsFromJson(base.config.compilerOptions, fileURLToPath(repo))
    Object.assign(options, {
      noEmit: true,
      types: ['node'],
      declaration: false,
      declarationMap: false,
      sourceMap: false,
    })
    const host = ts.createCompilerHost(options)
    const { fileExists, readFile, getSourceFile } = host
    host.fileExists = (f) => files.has(f) || fileExists.call(host, f)
    host.readFile = (f) => files.get(f) ?? readFile.call(host, f)
    host.getSourceFile = (f, lang, ...rest) => {
      const text = files.get(f)
      return text === undefined
        ? getSourceFile.call(host, f, lang, ...rest)
        : ts.createSourceFile(f, text, lang, true)
    }
    host.getCurrentDirectory = () => dirname(fileURLToPath(new URL('packages/cli/package.json', repo)))
    const program = ts.createProgram([...files.keys()], options, host)
    const problems: string[] = []
    for (const f of files.keys()) {
      const sf = program.getSourceFile(f) as ts.SourceFile
      for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
        const { line } = sf.getLineAndCharacterOfPosition(d.start ?? 0)
        const text = sf.text.split('\n')[line]?.trim()
        problems.push(
          `${f.replace(/^.*docs-/, '')}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')} — in: ${text}`,
        )
      }
    }
    expect(problems).toEqual([])
  })
})
