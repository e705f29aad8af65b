// Mutated kprobe_events / uprobe_events definitions (issue 17): seeded
// deletions, insertions of the grammar's special characters, NUL and
// non-ASCII text, duplicated tokens, huge numbers and very long inputs, made
// from the valid definitions of probe-definition.test.ts. Each one parses or
// throws a ProbeSyntaxError whose caret is inside the definition (or just
// past its end), on one line; never another exception, never a hang.

import { describe, expect, it } from 'vitest'
import {
  formatProbeDefinition,
  Kallsyms,
  type ProbeDefinition,
  type ProbeParseOptions,
  ProbeSyntaxError,
  parseProbeDefinition,
} from '../src/index.js'
import { HUGE, mutateDefinition, SPECIALS } from './support/mutate-definition.js'
import { prng } from './support/prng.js'

const kaddr = (a: bigint) => Number(BigInt.asIntN(64, a))
const kallsyms = new Kallsyms([
  { name: '_text', address: kaddr(0xffffffff81000000n), size: 0, type: 'T' },
  { name: 'do_fork', address: kaddr(0xffffffff81003cd0n), size: 0x45, type: 'T' },
  { name: 'sys_fork', address: kaddr(0xffffffff81003d20n), size: 0x2c, type: 'T' },
  { name: 'helper', address: kaddr(0xffffffff81003d50n), size: 0x10, type: 't' },
  { name: 'helper', address: kaddr(0xffffffff81003d60n), size: 0x10, type: 't' },
  { name: '_etext', address: kaddr(0xffffffff81006000n), size: 0, type: 'R' },
  { name: 'jiffies', address: kaddr(0xffffffff81007000n), size: 8, type: 'D' },
  { name: '_end', address: kaddr(0xffffffff8102b000n), size: 0, type: 'B' },
])

/** Valid definitions (as probe-definition.test.ts parses them), kprobes and uprobes. */
const VALID = [
  'p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)',
  'r20:mygroup/myret do_sys_open $retval:s32',
  'r0x10 do_fork',
  'p:myret do_sys_open%return ret=$retval:s64',
  'p do_fork+0x10',
  'p 0xffffffff81000000',
  'p mymod:foo',
  'p:mygrp.ev do_fork',
  'p vfs_read a=%di:u32 b=@0x1000:s8 c=@jiffies+8:x16 d=$stack2:u64 e=$stack f=$comm g=\\42:s64 h=+8(-16(%si)):string i=+0(%r12):u8 j=$arg3 k=\\"hi" l=\\-1:s8',
  'p do_sys_open c=+0(%si):char s=%di:symbol ss=+0(%sp):symstr u=+0(%si):ustring b=+0(%di):b4@2/32 a=+0(%di):u8[4] sa=+0(%si):string[3] ua=+u8(%si):ustring[2] bf=+0(%di):b1@7/8[3]',
  'r do_sys_open name=+0($arg2):ustring ret=$retval:s64 $arg2 $arg1:s32',
  '-:grp/myprobe',
  'p /bin/bash:0x4245c0',
  'p:zfree_entry /bin/zsh:0x46420 %ip %ax',
  'p /bin/zsh:0x46420%return ret=$retval',
  'p ./myprog:myfunc x=%di:s64 y=%si:s64',
  'p /x/y:main+0x10',
  'r /bin/prog:0x10 a=@0x601040:u32 b=@+0x6020:s64 c=+0(%di):string d=+u8($stack):x8 e=$stack1 f=$comm g=\\7 h=$retval:s32 j=+0(%di):u16[3] k=%ax:b2@1/8',
]

/** Inputs that are long (bounded): many arguments, long names, deep nesting, long numbers. */
function longInputs(): string[] {
  return [
    `p do_fork${' %di'.repeat(2500)}`,
    `p do_fork x=${'+0('.repeat(2000)}%di${')'.repeat(2000)}`,
    `p:${'e'.repeat(10_000)} do_fork`,
    `p:${'g'.repeat(5000)}/${'e'.repeat(5000)} do_fork`,
    `p ${'s'.repeat(10_000)}`,
    `p do_fork+${'9'.repeat(10_000)}`,
    `r${'1'.repeat(10_000)} do_fork`,
    `p do_fork x=\\"${'a'.repeat(10_000)}`,
    `p do_fork x=+0(%di):u8[${'9'.repeat(10_000)}]`,
    `p do_fork ${'n'.repeat(10_000)}=%di`,
    `p /${'d/'.repeat(5000)}x:0x10`,
    `p /bin/x:${'f'.repeat(10_000)}`,
    `p do_fork x=$stack${'9'.repeat(10_000)}`,
    `p do_fork x=$arg${'9'.repeat(10_000)}`,
    `p do_fork x=%di:b${'9'.repeat(5000)}@${'9'.repeat(5000)}/32`,
    ' '.repeat(10_000),
    '\0'.repeat(10_000),
    '😀'.repeat(5000),
  ]
}

/** The outcome: parsed, or our error with a caret in 0..length; anything else fails the test with the input. */
function check(line: string, options?: ProbeParseOptions): 'ok' | 'error' {
  let d: ReturnType<typeof parseProbeDefinition>
  try {
    d = parseProbeDefinition(line, options)
  } catch (e) {
    if (!(e instanceof ProbeSyntaxError)) throw new Error(`${JSON.stringify(line.slice(0, 200))}: ${e}`)
    const where = JSON.stringify(line.slice(0, 200))
    expect(Number.isInteger(e.position), where).toBe(true)
    expect(e.position, where).toBeGreaterThanOrEqual(0)
    expect(e.position, where).toBeLessThanOrEqual(line.length)
    expect(e.message, where).toMatch(/^[^\n]+$/)
    expect(e.errno, where).toBeGreaterThan(0)
    return 'error'
  }
  // What parses can be printed back (as reading kprobe_events would).
  if (d.kind !== '-') expect(formatProbeDefinition(d as ProbeDefinition)).toMatch(/^[pr]/)
  return 'ok'
}

describe('mutated probe definitions', () => {
  it('the unmutated definitions parse (the mutations start from valid ones)', () => {
    for (const line of VALID) expect(check(line), line).toBe('ok')
  })

  it.each([
    ['without kallsyms', undefined],
    ['with kallsyms', { kallsyms }],
  ])('seeded mutants %s: parse or a ProbeSyntaxError with a caret in the input', (_name, options) => {
    const rand = prng(17)
    const outcomes = { ok: 0, error: 0 }
    for (const line of VALID) for (const m of mutateDefinition(line, rand, 300)) outcomes[check(m, options)]++
    // Both happen: the mutations reach past the first check.
    expect(outcomes.ok).toBeGreaterThan(0)
    expect(outcomes.error).toBeGreaterThan(0)
  })

  it('every deletion of one character, every special character at every position', () => {
    for (const line of VALID.slice(0, 6)) {
      for (let i = 0; i < line.length; i++) check(line.slice(0, i) + line.slice(i + 1))
      for (let i = 0; i <= line.length; i++)
        for (const c of SPECIALS) check(line.slice(0, i) + c + line.slice(i))
    }
  })

  it('huge numbers in every numeric place', () => {
    for (const line of VALID)
      for (const m of line.matchAll(/0x[0-9a-fA-F]+|\d+/g))
        for (const h of HUGE) check(line.slice(0, m.index) + h + line.slice((m.index ?? 0) + m[0].length))
  })

  it('empty and very long inputs (up to 10k characters) end with a result', () => {
    for (const line of ['', ' ', '\t', '\0', 'p', 'r', '-', 'p:', '-:', 'p ', ...longInputs()]) {
      check(line)
      check(line, { kallsyms })
    }
  })
})
