// probekit list: finding probe points. The kernel's functions (perf probe
// --funcs), the blacklisted ones marked - and a marked one is exactly one
// register_kprobe refuses; debugfs's kprobes/blacklist; a user program's or
// library's functions (-x), from .symtab or, stripped, .dynsym.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { EINVAL, Kernel, parseElf, readSymbols } from '@probekit/kernel'
import { Kprobes } from '@probekit/kprobes'
import { describe, expect, it } from 'vitest'
import { strglobmatch } from '../src/list/strglobmatch.js'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const vmlinux = new Uint8Array(
  readFileSync(fileURLToPath(new URL('../../kernel/guest/vmlinux', import.meta.url))),
)
const LIBC = '/usr/lib/x86_64-linux-gnu/libc.so.6'

function list(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'list', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('probekit list', () => {
  it("the kernel's text functions matching a glob, sorted, as the image's symbol table has them", () => {
    const r = list('vfs_*')
    expect(r.code).toBe(0)
    const want = [
      ...new Set(
        readSymbols(parseElf(vmlinux))
          .filter((s) => s.type === 2 && s.name.startsWith('vfs_'))
          .map((s) => s.name),
      ),
    ].sort()
    expect(want).toContain('vfs_read')
    expect(r.stdout).toBe(want.map((n) => `${n}\n`).join(''))
  })

  it('marks exactly the functions register_kprobe refuses as blacklisted', () => {
    const lines = list().stdout.trimEnd().split('\n')
    const marked = lines.filter((l) => l.endsWith('\t[blacklisted]')).map((l) => l.split('\t')[0])
    const plain = lines.filter((l) => !l.includes('\t'))
    expect(marked).toContain('exc_page_fault')
    expect(plain).toContain('do_sys_open')
    const kernel = new Kernel({ image: vmlinux, memorySize: 64 * 1024 * 1024 })
    kernel.boot()
    const kprobes = new Kprobes(kernel)
    for (const name of marked) {
      const p = { symbol_name: name }
      expect(kprobes.register_kprobe(p), name).toBe(-EINVAL)
    }
    // Every function not marked takes a probe at its entry.
    const refused = plain.filter((name) => {
      const p = { symbol_name: name }
      const r = kprobes.register_kprobe(p)
      if (r === 0) kprobes.unregister_kprobe(p)
      return r !== 0
    })
    expect(refused).toEqual([])
  })

  it('--blacklist: debugfs kprobes/blacklist lines, each range a function or section the blacklist names', () => {
    const r = list('--blacklist')
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    for (const l of lines) expect(l).toMatch(/^0x[0-9a-f]{16}-0x[0-9a-f]{16}\t\S+$/)
    expect(lines.some((l) => l.endsWith('\texc_page_fault'))).toBe(true)
  })

  it('-x: the functions of a static program, of a stripped shared library (its .dynsym); errors in one line', () => {
    const myprog = fileURLToPath(new URL('../../kernel/fixtures/bin/myprog', import.meta.url))
    const r = list('-x', myprog, 'm*')
    expect(r.code).toBe(0)
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['main', 'myfunc']))
    if (existsSync(LIBC)) expect(list('-x', LIBC, 'malloc').stdout).toBe('malloc\n')
    expect(list('-x', '/etc/hostname')).toMatchObject({ code: 2, stdout: '' })
    expect(list('-x', '/no/such/file')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'probekit: -x /no/such/file: no such file\n',
    })
  })

  it("strglobmatch is perf's: *, ?, sets, negated sets, quoting, whole names", () => {
    expect(strglobmatch('vfs_read', 'vfs_*')).toBe(true)
    expect(strglobmatch('do_vfs_read', 'vfs_*')).toBe(false)
    expect(strglobmatch('sys_open', 'sys_ope?')).toBe(true)
    expect(strglobmatch('do_fork', 'do_[fx]ork')).toBe(true)
    expect(strglobmatch('do_fork', 'do_[!f]ork')).toBe(false)
    expect(strglobmatch('a*b', 'a\\*b')).toBe(true)
    expect(strglobmatch('axb', 'a\\*b')).toBe(false)
  })
})
