// Finding a uprobe definition's probe point in the guest's files: a file
// offset checked against the executable PT_LOADs, a symbol resolved as
// perf probe -x does, and @+FILE_OFFSET's address in a hitting process.

import { readFileSync } from 'node:fs'
import { Kernel, parseProbeDefinition, type UprobeDefinition } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { CliError } from '../src/cli-error.js'
import { readGuestImage } from '../src/guest-image.js'
import { fileAddress, resolveUprobe } from '../src/uprobe-events.js'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../kernel/fixtures/bin/${name}`, import.meta.url)))

function guest() {
  const k = new Kernel({ image: readGuestImage(), memorySize: 64 * 1024 * 1024 })
  const myprog = fixture('myprog')
  k.vfs.writeFile('/bin/myprog', myprog)
  // The same file without section headers: no .symtab, no .dynsym.
  const stripped = myprog.slice()
  stripped.fill(0, 60, 62)
  k.vfs.writeFile('/bin/stripped', stripped)
  k.vfs.writeFile('/etc/motd', new TextEncoder().encode('hello\n'))
  k.vfs.mkdirp('/srv/dir')
  return k
}

const def = (line: string) => parseProbeDefinition(line) as UprobeDefinition
const resolve = (k: Kernel, line: string, cwd = '/') => resolveUprobe(k, def(line), { cwd })

describe('resolveUprobe', () => {
  // myprog (static, non-PIE): text PT_LOAD at file offset 0x1000, vaddr 0x401000; myfunc at 0x4011b0.
  it('finds a symbol as perf probe -x does: st_value - p_vaddr + p_offset', () => {
    const k = guest()
    expect(resolve(k, 'p /bin/myprog:myfunc')).toMatchObject({
      path: '/bin/myprog',
      offset: 0x11b0,
      vaddr: 0x4011b0,
    })
    expect(resolve(k, 'p /bin/myprog:myfunc+4')).toMatchObject({ offset: 0x11b4, vaddr: 0x4011b4 })
    expect(resolve(k, 'p /bin/myprog:0x11b0')).toMatchObject({ offset: 0x11b0, vaddr: 0x4011b0 })
    // A relative PATH is the guest working directory's.
    expect(resolve(k, 'p ./myprog:myfunc', '/bin')).toMatchObject({ path: '/bin/myprog', offset: 0x11b0 })
    expect(resolve(k, 'p ../bin/myprog:myfunc', '/etc').path).toBe('/bin/myprog')
  })

  it.each([
    ['p /no/such:0x1000', /cannot place probe p_such_0x1000 at \/no\/such:0x1000: \/no\/such: no such file$/],
    ['p /srv/dir/:0x1000', /\/srv\/dir: not a regular file/],
    ['p /etc/motd:0x0', /\/etc\/motd: not an ELF file/],
    [
      'p /bin/myprog:0x10',
      /file offset 0x10 is not in an executable segment of \/bin\/myprog \(its code is at file offsets 0x1000-0x4c17\)/,
    ],
    ['p /bin/myprog:0x9000', /file offset 0x9000 is not in an executable segment/],
    ['p /bin/myprog:nosuchfn', /no symbol 'nosuchfn' in \/bin\/myprog \(\.symtab or \.dynsym\)/],
    ['p /bin/myprog:inputs', /'inputs' is data \(an object\), not a function/],
    ['p /bin/myprog:myfunc+0x1000', /0x1000 is past the end of myfunc/],
    [
      'p /bin/stripped:myfunc',
      /has no symbol table \(stripped of \.symtab and \.dynsym\): give a file offset instead/,
    ],
  ])('%s: a one-line CliError', (line, message) => {
    const k = guest()
    expect(() => resolve(k, line)).toThrow(CliError)
    expect(() => resolve(k, line)).toThrow(message)
  })

  it('a stripped file still takes a file offset', () => {
    expect(resolve(guest(), 'p /bin/stripped:0x11b0').offset).toBe(0x11b0)
  })
})

describe('@+FILE_OFFSET', () => {
  it('is found through the PT_LOAD that holds it, plus the load bias', () => {
    const r = resolve(guest(), 'p /bin/myprog:myfunc')
    // inputs (.data, vaddr 0x407020) is at file offset 0x6020: its PT_LOAD's vaddr - offset is
    // 0x401000, the text's 0x400000 (trace_uprobe.c's hit - offset + file offset would give 0x406020).
    expect(fileAddress(r, 0x4011b0, 0x6020)).toBe(0x407020)
    // .rodata and the ELF header share the text's bias.
    expect(fileAddress(r, 0x4011b0, 0x5000)).toBe(0x405000)
    expect(fileAddress(r, 0x4011b0, 0)).toBe(0x400000)
    // Loaded elsewhere (a PIE or a library): everything moves by the same bias.
    expect(fileAddress(r, 0x5555_5540_11b0, 0x6020)).toBe(0x5555_5540_7020)
    // An offset no PT_LOAD holds: as Linux computes it.
    expect(fileAddress(r, 0x4011b0, 0x100000)).toBe(0x500000)
  })
})
