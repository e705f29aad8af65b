// Mutated uprobe_events definitions (issue 17), through what probekit run -p
// does with one: parseDefinitions (tracefs's grammar, errors with their
// column) then resolveUprobe (the file, its symbol, its executable
// segments), on a guest file system with myprog and on mutated copies of
// it. Each seeded mutant is accepted or refused with a one-line CliError;
// never another exception, never a hang.

import { readFileSync } from 'node:fs'
import { isUprobeDefinition, Kernel } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'
import { mutateDefinition } from '../../kernel/test/support/mutate-definition.js'
import { prng } from '../../kernel/test/support/prng.js'
import { CliError } from '../src/cli-error.js'
import { readGuestImage } from '../src/guest-image.js'
import { parseDefinitions } from '../src/probes.js'
import { resolveUprobe } from '../src/uprobe-events.js'

const MYPROG = new Uint8Array(readFileSync(new URL('../../kernel/fixtures/bin/myprog', import.meta.url)))

/** Valid uprobe definitions on /bin/myprog (text at file offset 0x1000, myfunc at 0x11b0). */
const VALID = [
  'p /bin/myprog:0x11b0',
  'p:zfree_entry /bin/myprog:0x11b0 %ip %ax',
  'p /bin/myprog:0x11b0%return ret=$retval',
  'p /bin/myprog:myfunc x=%di:s64 y=%si:s64',
  'p:g/e /bin/myprog:myfunc+4',
  'r /bin/myprog:myfunc a=@0x601040:u32 b=@+0x6020:s64 c=+0(%di):string d=+u8($stack):x8 e=$stack1 f=$comm g=\\7 h=$retval:s32 j=+0(%di):u16[3] k=%ax:b2@1/8',
]

function guest(): Kernel {
  const k = new Kernel({ image: readGuestImage(), memorySize: 64 * 1024 * 1024 })
  k.vfs.writeFile('/bin/myprog', MYPROG)
  k.vfs.mkdirp('/srv/dir')
  return k
}

/** -p LINE as probekit run takes it: 'ok', or 'refused' with a one-line CliError. */
function place(k: Kernel, line: string): 'ok' | 'refused' {
  try {
    const [d] = parseDefinitions([line])
    if (isUprobeDefinition(d)) resolveUprobe(k, d, { cwd: '/' })
    return 'ok'
  } catch (e) {
    if (!(e instanceof CliError)) throw new Error(`${JSON.stringify(line)}: ${e}`)
    expect(e.message, line).toMatch(/^[^\n]+$/)
    return 'refused'
  }
}

describe('mutated uprobe_events definitions', () => {
  const k = guest()

  it('the unmutated definitions are placed (the mutations start from valid ones)', () => {
    for (const line of VALID) expect(place(k, line), line).toBe('ok')
  })

  it('seeded mutants: placed, or a one-line CliError', () => {
    const rand = prng(17)
    const outcomes = { ok: 0, refused: 0 }
    for (const line of VALID)
      for (let n = 0; n < 300; n++) outcomes[place(k, mutateDefinition(line, rand, 1)[0])]++
    expect(outcomes.ok).toBeGreaterThan(0)
    expect(outcomes.refused).toBeGreaterThan(0)
  })

  it('long inputs (up to 10k characters) and odd paths', () => {
    for (const line of [
      `p /bin/myprog:0x11b0${' %di'.repeat(2500)}`,
      `p /${'d/'.repeat(5000)}x:0x10`,
      `p /bin/myprog:${'f'.repeat(10_000)}`,
      `p /bin/myprog:myfunc+${'9'.repeat(10_000)}`,
      `p /bin/myprog:0x${'f'.repeat(10_000)}`,
      'p /srv/dir/:0x10',
      'p /srv/dir/..:0x10',
      'p /:0x10',
      'p /bin/myprog/:0x11b0',
      'p /bin/myprog\0:0x11b0',
    ])
      place(k, line)
  })

  it('on mutated copies of the file: its ELF and program headers, seeded', () => {
    const rand = prng(4242)
    const outcomes = { ok: 0, refused: 0 }
    for (let n = 0; n < 200; n++) {
      const b = MYPROG.slice()
      const v = new DataView(b.buffer)
      for (let j = 1 + Math.floor(rand() * 3); j > 0; j--) {
        // A byte of the ELF header or the program headers, or one 8-byte field set to a boundary value.
        const o = Math.floor(rand() * (64 + 56 * v.getUint16(56, true)))
        if (rand() < 0.5) b[o] ^= 1 << Math.floor(rand() * 8)
        else if (o + 8 <= b.length)
          v.setBigUint64(
            o & ~7,
            [0n, 1n, 0xffffffffn, 1n << 63n, (1n << 64n) - 1n][Math.floor(rand() * 5)],
            true,
          )
      }
      k.vfs.writeFile('/bin/m', b)
      for (const line of ['p /bin/m:myfunc', 'p /bin/m:0x11b0', 'r /bin/m:main']) outcomes[place(k, line)]++
    }
    expect(outcomes.ok).toBeGreaterThan(0)
    expect(outcomes.refused).toBeGreaterThan(0)
  })
})
