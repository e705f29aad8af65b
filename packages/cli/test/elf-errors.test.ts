// probekit run on mutated copies of an executable (issue 17): a broken ELF
// header or program header is one line on stderr, exit 2, no stack trace.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'probekit-elf-'))
const HELLO = new Uint8Array(readFileSync(new URL('../../kernel/fixtures/bin/hello', import.meta.url)))
/** hello's second program header: its text PT_LOAD. */
const TEXT = 64 + 56

function mutated(name: string, f: (v: DataView, b: Uint8Array) => void): string {
  const b = HELLO.slice()
  f(new DataView(b.buffer), b)
  const path = join(dir, name)
  writeFileSync(path, b, { mode: 0o755 })
  return path
}

function run(file: string) {
  const r = spawnSync(process.execPath, [bin, 'run', file], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('probekit run: mutated ELF files', () => {
  it('the unmutated copy runs (the mutations start from a valid program)', () => {
    const r = run(mutated('hello', () => {}))
    expect(r).toMatchObject({ code: 0, stdout: 'hello, world\n' })
  })

  it('a garbage section header table (e_shoff 1) still runs: exec reads no section headers', () => {
    const r = run(mutated('shoff', (v) => v.setBigUint64(40, 1n, true)))
    expect(r).toMatchObject({ code: 0, stdout: 'hello, world\n' })
  })

  it.each([
    ['e_phentsize 57', (v: DataView) => v.setUint16(54, 57, true), /e_phentsize is 57, not 56/],
    [
      'e_phoff 2^64-1',
      (v: DataView) => v.setBigUint64(32, (1n << 64n) - 1n, true),
      /program headers out of range/,
    ],
    ['e_phnum 74', (v: DataView) => v.setUint16(56, 74, true), /program headers/],
    [
      'p_filesz past the end',
      (v: DataView) => v.setBigUint64(TEXT + 32, 1n << 40n, true),
      /outside the file/,
    ],
    [
      'p_memsz < p_filesz',
      (v: DataView) => v.setBigUint64(TEXT + 40, 1n, true),
      /smaller in memory than in the file/,
    ],
    [
      'p_vaddr in the kernel half',
      (v: DataView) => v.setBigUint64(TEXT + 16, 0xffffffff81000000n, true),
      /not in user space/,
    ],
    [
      'e_entry non-canonical',
      (v: DataView) => v.setBigUint64(24, 1n << 47n, true),
      /entry point 0x800000000000 is not in user space/,
    ],
    ['a bss of 1 TiB', (v: DataView) => v.setBigUint64(TEXT + 40, 1n << 40n, true), /bigger than memory/],
  ])('%s: one line on stderr, exit 2', (name, f, message) => {
    const r = run(mutated(name.replace(/\W+/g, '-'), f))
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^probekit: [^\n]*\n$/)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/)
    expect(r.code).toBe(2)
  })
})
