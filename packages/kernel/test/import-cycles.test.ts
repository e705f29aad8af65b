// The host side's modules import each other without circles: a module's
// runtime imports (type-only ones aside, which vanish when compiled) never
// lead back to it. Circles make load order matter and hide which subsystem
// depends on which; this keeps the kernel's layers apart.

import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = fileURLToPath(new URL('../src', import.meta.url))

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  )
}

/** The modules a file imports at run time (relative imports and re-exports that are not type-only). */
function runtimeImports(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const out: string[] = []
  for (const st of sf.statements) {
    let spec: ts.Expression | undefined
    if (ts.isImportDeclaration(st)) {
      const c = st.importClause
      if (c?.isTypeOnly) continue
      const named = c?.namedBindings
      if (c && !c.name && named && ts.isNamedImports(named) && named.elements.every((e) => e.isTypeOnly))
        continue
      spec = st.moduleSpecifier
    } else if (ts.isExportDeclaration(st) && !st.isTypeOnly) spec = st.moduleSpecifier
    if (spec && ts.isStringLiteral(spec) && spec.text.startsWith('.'))
      out.push(resolve(dirname(file), spec.text.replace(/\.js$/, '.ts')))
  }
  return out
}

describe('packages/kernel/src', () => {
  it('has no import circles', () => {
    const files = sources(SRC)
    const graph = new Map(files.map((f) => [f, runtimeImports(f)]))
    const circles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const path: string[] = []
    const visit = (f: string): void => {
      state.set(f, 'open')
      path.push(f)
      for (const d of graph.get(f) ?? []) {
        if (state.get(d) === 'open')
          circles.push(
            path
              .slice(path.indexOf(d))
              .concat(d)
              .map((p) => relative(SRC, p))
              .join(' -> '),
          )
        else if (!state.has(d) && graph.has(d)) visit(d)
      }
      path.pop()
      state.set(f, 'done')
    }
    for (const f of files) if (!state.has(f)) visit(f)
    expect(circles).toEqual([])
  })
})
