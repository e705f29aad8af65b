import { describe, expect, it } from 'vitest'
import { type BenchResult, report } from '../src/index.js'

function capture(results: readonly BenchResult[], json: boolean): string {
  let text = ''
  report(results, { json, out: { write: (chunk: string) => (text += chunk) } })
  return text
}

const results: BenchResult[] = [
  { name: 'x86-emu: decode kernel prologue', value: 123.456, unit: 'ns/insn' },
  { name: 'x86-emu: "quoted" name', value: 0.5, unit: 'MIPS' },
]

describe('report --json', () => {
  it('prints exactly one JSON object per line with keys name, value, unit in that order', () => {
    const lines = capture(results, true).split('\n')
    expect(lines.at(-1)).toBe('') // output ends with a newline
    const objects = lines.slice(0, -1).map((line) => JSON.parse(line))
    expect(objects).toEqual(results)
    for (const o of objects) expect(Object.keys(o)).toEqual(['name', 'value', 'unit'])
  })

  it('keeps the full value (no rounding) and drops stray properties', () => {
    const extra = { name: 'n', value: 1 / 3, unit: 'ms', stray: true } as BenchResult
    expect(capture([extra], true)).toBe('{"name":"n","value":0.3333333333333333,"unit":"ms"}\n')
  })

  it('prints nothing for no results', () => {
    expect(capture([], true)).toBe('')
  })
})

describe('report (table)', () => {
  it('draws a table with every name, a rounded value and the unit', () => {
    const text = capture(results, false)
    expect(text).toContain('benchmark')
    expect(text).toContain('x86-emu: decode kernel prologue')
    expect(text).toContain('123.5')
    expect(text).toContain('ns/insn')
    expect(text).not.toContain('{"name"')
  })
})
