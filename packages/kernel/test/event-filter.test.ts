// Event filters (Documentation/trace/events.rst, "Event filtering"), as
// kernel/trace/trace_events_filter.c parses and evaluates them: operators by
// field type, casts to the field's C type, globs, precedence (checked against
// a port of predicate_parse's compiled program), and the errors with the
// position parse_error gives them.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  type EventFilter,
  eventFilterMatches,
  type FieldValue,
  FilterError,
  type FilterField,
  type FilterParseOptions,
  findEventField,
  globMatch,
  Kallsyms,
  Kernel,
  type ProbeDefinition,
  PtRegsFrame,
  parseCpulist,
  parseEventFilter,
  parseProbeDefinition,
  probeEventFields,
  probeHitRecord,
} from '../src/index.js'
import { prng } from './support/prng.js'
import { guestImage } from './support/run.js'

const fieldsOf = (line: string) => probeEventFields(parseProbeDefinition(line) as ProbeDefinition)

/** An event with one argument of each kind. */
const FIELDS = fieldsOf(
  'p:myprobe do_sys_open dfd=%di:s32 flags=%dx:x32 b8=%ax:s8 u8=%ax:u8 u16=%ax:u16 s64=%ax:s64 u64=%ax:u64 name=+0(%si):ustring c=%cx:char sym=%ax:symbol arr=+0(%si):u8[4]',
)

/** A record from plain values by field name (generic fields by their names too). */
function record(values: Record<string, FieldValue | number>) {
  return (f: FilterField): FieldValue => {
    const v = values[f.name]
    if (v === undefined) throw new Error(`the filter asked for ${f.name}`)
    return typeof v === 'number' ? BigInt(v) : v
  }
}

const matches = (text: string, values: Record<string, FieldValue | number>, o?: FilterParseOptions) =>
  eventFilterMatches(parseEventFilter(text, FIELDS, o), record(values))

/** The error as the filter file shows it after a failed write: text, caret, parse_error. */
function errorOf(text: string, fields: readonly FilterField[] = FIELDS, o?: FilterParseOptions): string {
  try {
    parseEventFilter(text, fields, o)
  } catch (e) {
    if (!(e instanceof FilterError)) throw e
    return `${text}\n${' '.repeat(e.position)}^\nparse_error: ${e.message}`
  }
  return 'accepted'
}

describe('event filter fields', () => {
  it("lists a probe's own fields first, then the generic and the common ones", () => {
    expect(fieldsOf('p:e do_fork x=%di:s16').map((f) => f.name)).toEqual(['__probe_ip', 'x'])
    expect(fieldsOf('r:e do_fork ret=$retval:u32').map((f) => f.name)).toEqual([
      '__probe_func',
      '__probe_ret_ip',
      'ret',
    ])
    const own = fieldsOf('p:e do_fork cpu=%di:u8 s=+0(%si):string b=%ax:b3@4/16')
    expect(findEventField(own, 'cpu')).toMatchObject({ filterType: 'other', size: 1 })
    expect(findEventField(own, 's')).toMatchObject({ filterType: 'string' })
    expect(findEventField(own, 'b')).toMatchObject({ filterType: 'other', size: 2, signed: false })
    expect(findEventField(own, 'CPU')).toMatchObject({ filterType: 'cpu' })
    expect(findEventField(own, 'comm')).toMatchObject({ filterType: 'comm' })
    expect(findEventField(own, 'common_pid')).toMatchObject({ size: 4, signed: true })
    expect(findEventField(own, 'common_preempt_count')).toMatchObject({ size: 1, signed: false })
    expect(findEventField(own, 'nosuch')).toBeUndefined()
  })
})

describe('numeric predicates', () => {
  it('compares each operator', () => {
    const v = { dfd: -100 }
    const cases: [string, boolean][] = [
      ['dfd == -100', true],
      ['dfd != -100', false],
      ['dfd < -99', true],
      ['dfd <= -100', true],
      ['dfd > -100', false],
      ['dfd >= -100', true],
      ['dfd<-100', false],
      ['dfd & 4', true], // -100 is ...10011100
      ['dfd & 3', false],
    ]
    for (const [text, want] of cases) expect([text, matches(text, v)]).toEqual([text, want])
  })

  it("casts the value to the field's type, as (type)pred->val does", () => {
    expect(matches('b8 == 255', { b8: -1 })).toBe(true) // (s8)255 == -1
    expect(matches('u8 == 256', { u8: 0 })).toBe(true) // (u8)256 == 0
    expect(matches('u8 == 0x1ff', { u8: 0xff })).toBe(true)
    expect(matches('u16 == 65537', { u16: 1 })).toBe(true)
    expect(matches('dfd == 0xffffff9c', { dfd: -100 })).toBe(true)
    // The stored value is the field's too: an s8 holds only the low byte, signed.
    expect(matches('b8 == -1', { b8: 0x1ff })).toBe(true)
  })

  it('orders signed fields as signed and unsigned ones as unsigned', () => {
    expect(matches('b8 < 0', { b8: -5 })).toBe(true)
    expect(matches('u8 < 0', { u8: 0xfb })).toBe(false)
    expect(matches('u8 > 250', { u8: 0xfb })).toBe(true)
    expect(matches('flags > 0x7fffffff', { flags: 0x80000000 })).toBe(true)
    expect(matches('dfd > 0x7fffffff', { dfd: 0x80000000 })).toBe(false) // (s32)0x80000000 < 0
  })

  it('takes 64-bit values whole', () => {
    const max = (1n << 64n) - 1n
    expect(matches('u64 == 18446744073709551615', { u64: max })).toBe(true)
    expect(matches('u64 == 0xffffffffffffffff', { u64: max })).toBe(true)
    expect(matches('u64 > 0x8000000000000000', { u64: max })).toBe(true)
    expect(matches('s64 < 0', { s64: max })).toBe(true)
    expect(matches('s64 == -9223372036854775808', { s64: 1n << 63n })).toBe(true)
    expect(matches('s64 >= -9223372036854775808', { s64: 0 })).toBe(true)
    expect(matches('sym == 0xffffffff81000000', { sym: 0xffffffff81000000n })).toBe(true)
  })

  it('reads numbers as kstrtoll/kstrtoull: 0x hex, 0 octal, decimal', () => {
    expect(matches('u16 == 010', { u16: 8 })).toBe(true)
    expect(matches('u16 == 0X10', { u16: 16 })).toBe(true)
    expect(matches('dfd == -0x64', { dfd: -100 })).toBe(true)
    expect(matches('c == 65', { c: 65 })).toBe(true) // char is a u8
  })

  it('a faulted field matches no predicate, whatever the operator', () => {
    expect(matches('dfd == 0', { dfd: null })).toBe(false)
    expect(matches('dfd != 0', { dfd: null })).toBe(false)
    expect(matches('!(dfd != 0)', { dfd: null })).toBe(true)
    expect(matches('name ~ "*"', { name: null })).toBe(false)
  })
})

describe('string predicates', () => {
  const name = (text: string, s: string) => matches(text, { name: s })

  it('== and != compare whole strings', () => {
    expect(name('name == "data.txt"', 'data.txt')).toBe(true)
    expect(name("name == 'data.txt'", 'data.txt')).toBe(true)
    expect(name('name == "data"', 'data.txt')).toBe(false)
    expect(name('name != "data"', 'data.txt')).toBe(true)
    expect(name('name == "*"', '*')).toBe(true) // no glob without ~
    expect(name('name == ""', '')).toBe(true)
  })

  it('~ takes globs: prefix, suffix, substring, classes, ?, escapes, a leading ! inverts', () => {
    const cases: [string, string, boolean][] = [
      ['da*', 'data.txt', true],
      ['*.txt', 'data.txt', true],
      ['*.txt', 'data.txt2', false],
      ['*ta.t*', 'data.txt', true],
      ['d?ta*', 'data.txt', true],
      ['d[a-c]ta.txt', 'data.txt', true],
      ['d[!a-c]ta.txt', 'data.txt', false],
      ['d*a*t', 'data.txt', true],
      ['d*a*q', 'data.txt', false],
      ['\\*x', '*x', true],
      ['\\*x', 'ax', false],
      ['!da*', 'data.txt', false],
      ['!da*', 'other', true],
      ['*', '', true],
      ['', '', true],
      ['[]]', ']', true],
      ['[a', '[a', true], // an unclosed class is a literal '['
      ['123', '123', true], // MATCH_INDEX: in full
    ]
    for (const [pattern, s, want] of cases)
      expect([pattern, s, name(`name ~ "${pattern}"`, s)]).toEqual([pattern, s, want])
  })

  it('glob_match as lib/glob.c has it', () => {
    expect(globMatch('*aaaaa', 'aaaaaaaaaa')).toBe(true)
    expect(globMatch('a*b*c', 'axxbyyc')).toBe(true)
    expect(globMatch('a*b*c', 'axxbyy')).toBe(false)
    expect(globMatch('[z-a]', 'm')).toBe(false)
    expect(globMatch('[a-]', '-')).toBe(true)
    expect(globMatch('?', '')).toBe(false)
  })

  it('comm is the task name; a string field never takes a number, nor a number a string', () => {
    expect(matches('comm == "sh"', { comm: 'sh' })).toBe(true)
    expect(matches('COMM ~ "*sh"', { COMM: 'bash' })).toBe(true)
    expect(matches('comm != "sh" && common_pid == 7', { comm: 'bash', common_pid: 7 })).toBe(true)
  })
})

describe('CPUs', () => {
  it('the CPU is an int: ==, <, and & CPUS{list}', () => {
    expect(matches('cpu == 1', { cpu: 1 })).toBe(true)
    expect(matches('CPU < 2', { CPU: 3 })).toBe(false)
    expect(matches('common_cpu & CPUS{1-3}', { common_cpu: 2 })).toBe(true)
    expect(matches('common_cpu & CPUS{1-3}', { common_cpu: 0 })).toBe(false)
    expect(matches('cpu & CPUS{0-7:1/2}', { cpu: 4 })).toBe(true)
    expect(matches('cpu & CPUS{0-7:1/2}', { cpu: 5 })).toBe(false)
    // One CPU is ==; two or more are never equal to one, always unequal.
    expect(matches('cpu & CPUS{3}', { cpu: 3 })).toBe(true)
    expect(matches('cpu == CPUS{3}', { cpu: 3 })).toBe(true)
    expect(matches('cpu == CPUS{2,3}', { cpu: 3 })).toBe(false)
    expect(matches('cpu != CPUS{2,3}', { cpu: 3 })).toBe(true)
    // filter_pred_cpu has no case for &: a number is never a mask.
    expect(matches('cpu & 1', { cpu: 1 })).toBe(false)
  })

  it('a number field against CPUS: a CPU below nr_cpu_ids', () => {
    expect(matches('u8 & CPUS{1,5}', { u8: 5 })).toBe(true)
    expect(matches('u8 & CPUS{1,5}', { u8: 4 })).toBe(false)
    expect(matches('u8 != CPUS{1,5}', { u8: 200 })).toBe(false)
  })

  it('cpulist_parse', () => {
    expect([...(parseCpulist('0,2-4,N', 8) ?? [])].sort()).toEqual([0, 2, 3, 4, 7])
    expect([...(parseCpulist('all:1/4', 8) ?? [])].sort()).toEqual([0, 4])
    expect(parseCpulist('3-1', 8)).toBeNull()
    expect(parseCpulist('8', 8)).toBeNull()
    expect(parseCpulist('0-3:3/2', 8)).toBeNull()
    expect(parseCpulist('x', 8)).toBeNull()
  })
})

describe('.function', () => {
  const kaddr = (a: bigint) => Number(BigInt.asIntN(64, a))
  const kallsyms = new Kallsyms([
    { name: '_text', address: kaddr(0xffffffff81000000n), size: 0, type: 'T' },
    { name: 'do_fork', address: kaddr(0xffffffff81003cd0n), size: 0x45, type: 'T' },
    { name: 'sys_fork', address: kaddr(0xffffffff81003d20n), size: 0x2c, type: 'T' },
    { name: '_end', address: kaddr(0xffffffff8102b000n), size: 0, type: 'B' },
  ])
  const fn = (text: string, ip: bigint) => matches(text, { __probe_ip: ip, sym: ip }, { kallsyms })

  it('an unsigned long field is in a function (up to the next symbol, as kallsyms sizes it)', () => {
    expect(fn('__probe_ip.function == do_fork', 0xffffffff81003cd0n)).toBe(true)
    expect(fn('__probe_ip.function == do_fork', 0xffffffff81003d1fn)).toBe(true)
    expect(fn('__probe_ip.function == do_fork', 0xffffffff81003d20n)).toBe(false)
    expect(fn('sym.function != do_fork', 0xffffffff81003d20n)).toBe(true)
    expect(fn('sym.function == 0xffffffff81003d30', 0xffffffff81003d20n)).toBe(true)
  })

  it('refuses other fields, operators and unknown functions', () => {
    const o = { kallsyms }
    expect(errorOf('dfd.function == do_fork', FIELDS, o)).toMatch(/Illegal operation for field type$/)
    expect(errorOf('sym.function < do_fork', FIELDS, o)).toMatch(/Invalid operator$/)
    // One past the name: past the end, so at the end.
    expect(errorOf('sym.function == nosuch', FIELDS, o)).toBe(
      `sym.function == nosuch\n${' '.repeat(22)}^\nparse_error: Function not found`,
    )
    expect(errorOf('sym.function == do_fork', FIELDS)).toMatch(/Function not found$/)
  })
})

describe('logic', () => {
  it('&& binds tighter than ||; ! negates a term or a group', () => {
    const v = (a: number, b: number, c: number) => ({ u8: a, u16: b, dfd: c })
    expect(matches('u8 == 1 || u16 == 1 && dfd == 1', v(1, 0, 0))).toBe(true)
    expect(matches('(u8 == 1 || u16 == 1) && dfd == 1', v(1, 0, 0))).toBe(false)
    expect(matches('!u8 == 1', v(1, 0, 0))).toBe(false)
    expect(matches('!(u8 == 1 || u16 == 1)', v(0, 0, 0))).toBe(true)
    expect(matches('!!u8 == 1', v(1, 0, 0))).toBe(true)
    expect(matches('! ( ! (u8 == 1) && u16 == 1 )', v(0, 1, 0))).toBe(false)
  })

  it('"0" is no filter; a trailing && or || is ignored as Linux ignores it', () => {
    expect(parseEventFilter(' 0\n', FIELDS).expr).toBeNull()
    expect(eventFilterMatches(parseEventFilter('0', FIELDS), record({}))).toBe(true)
    expect(matches('u8 == 1 &&', { u8: 1 })).toBe(true)
    expect(matches('u8 == 1 || !', { u8: 0 })).toBe(false)
  })

  it('evaluates as the program predicate_parse compiles, over seeded random expressions', () => {
    const rand = prng(15)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]
    const atoms = ['u8', 'u16', 'flags', 'c']
    const atom = () => `${pick(atoms)} == 1`
    /** An expression by the grammar (with a space or none between tokens). */
    const expr = (depth: number): string => {
      const term = () =>
        '!'.repeat(rand() < 0.3 ? 1 + Math.floor(rand() * 2) : 0) +
        (depth > 0 && rand() < 0.3 ? `(${expr(depth - 1)})` : atom())
      const out = [term()]
      for (let k = Math.floor(rand() * 4); k > 0; k--) out.push(pick(['&&', '||']), term())
      return out.join(pick([' ', '']))
    }
    let accepted = 0
    for (let n = 0; n < 3000; n++) {
      let text: string
      if (n % 3 === 0) {
        // Any sequence of the tokens: mostly errors, which must be errors for both.
        const toks: string[] = []
        for (let i = 1 + Math.floor(rand() * 12); i > 0; i--)
          toks.push(pick(['(', ')', '!', '&&', '||', 'A', 'A', 'A']).replace('A', atom))
        text = toks.join(pick([' ', '']))
      } else {
        text = expr(3)
        // Sometimes a trailing operator, which Linux ignores (or WARNs on).
        if (rand() < 0.2) text += ` ${pick(['&&', '||'])}${pick(['', ' !', '!!'])}`
      }
      const linux = linuxProgram(text, atoms)
      let ours: EventFilter | 'error'
      try {
        ours = parseEventFilter(text, FIELDS)
      } catch (e) {
        if (!(e instanceof FilterError)) throw e
        ours = 'error'
      }
      expect([text, ours === 'error']).toEqual([text, linux === 'error'])
      if (ours === 'error' || linux === 'error') continue
      accepted++
      for (let bits = 0; bits < 1 << atoms.length; bits++) {
        const values = Object.fromEntries(atoms.map((a, i) => [a, (bits >> i) & 1]))
        const want = linux(atoms.map((_, i) => ((bits >> i) & 1) === 1))
        expect([text, bits, eventFilterMatches(ours, record(values))]).toEqual([text, bits, want])
      }
    }
    expect(accepted).toBeGreaterThan(1500)
  })
})

describe('errors, with the position trace_events_filter.c gives them', () => {
  it('says what is wrong and where, as reading the filter file back shows it', () => {
    const cases: [string, string, number][] = [
      ['foo == 1', 'Field not found', 4],
      ['dfd = 1', 'Invalid operator', 5],
      ['dfd =! 1', 'Invalid operator', 5],
      ['comm == sh', 'Invalid value (did you forget quotes)?', 9],
      ['dfd == "x"', 'Expecting numeric field', 8],
      ['comm == 1', 'Expecting string field', 9],
      ['comm < "a"', 'Illegal operation for field type', 8],
      ['dfd ~ 1', 'Illegal operation for field type', 7],
      ['dfd == 12x', 'Illegal integer value', 8],
      ['u8 == -1', 'Illegal integer value', 7],
      ['s64 == -9223372036854775809', 'Illegal integer value', 8],
      ['u64 == 18446744073709551616', 'Illegal integer value', 8],
      ['dfd == 0x1234567890123456789012', 'Operand too long', 31],
      ['dfd == 0x123456789012345678901', 'Illegal integer value', 8],
      ['(dfd == 1', "Too many '('", 0],
      ['dfd == 1 && (u8 == 1', "Too many '('", 12],
      ['dfd == 1)', "Too few '('", 8],
      ['comm == "sh', 'Missing matching quote', 8],
      ['dfd == 1 u8 == 2', 'Too many terms in predicate expression', 9],
      ['dfd == 1 & u8 == 2', 'Too many terms in predicate expression', 9],
      ['(dfd == 1)(u8 == 1)', 'Too many terms in predicate expression', 10],
      ['cpu & CPUS{99}', 'Invalid cpulist', 14],
      ['cpu & CPUS{}', 'Invalid cpulist', 12],
      ['cpu & CPUS{1', "Missing '}'", 12],
      ['cpu & CPUS 1', "Missing '{'", 12],
      ['cpu < CPUS{1}', 'Illegal operation for field type', 7],
      ['comm == CPUS{1}', 'Illegal operation for field type', 9],
      ['arr == 1', 'Illegal operation for field type', 8],
      ['!', 'No filter found', 1],
      ['', 'No filter found', 0],
      ['()', 'No filter found', 2],
      ['== 1', 'Missing field name and/or value', 0],
      ['dfd == 1 && ()', 'Missing field name and/or value', 13],
      ['dfd == 1 || u8 == 2 &&', 'Meaningless filter expression', 20],
    ]
    for (const [text, message, position] of cases)
      expect([text, errorOf(text)]).toEqual([
        text,
        `${text}\n${' '.repeat(position)}^\nparse_error: ${message}`,
      ])
  })

  it('a string value is at most 255 characters', () => {
    expect(errorOf(`name == "${'a'.repeat(255)}"`)).toBe('accepted')
    expect(matches(`name == "${'a'.repeat(255)}"`, { name: 'a'.repeat(255) })).toBe(true)
    expect(errorOf(`name == "${'a'.repeat(256)}"`)).toMatch(/Operand too long$/)
  })

  it('every mutation of a filter parses or is a FilterError at a place in it, never another exception', () => {
    const rand = prng(17)
    const seeds = [
      'comm == "sh" && dfd == -100',
      '((dfd >= 10 && dfd < 15) || u8 == 17) && name ~ "*.txt"',
      '!(cpu & CPUS{0-3}) || sym.function == do_fork',
      'u64 & 0xff && c != \'x\' || name.ustring != "a b"',
      'common_pid > 1 || common_type == 0 && common_flags & 1',
    ]
    const alphabet = ' ()!&|=<>~"\'{}.,-*?[]\\0x9azCPUS_'
    let parsed = 0
    let errors = 0
    for (let n = 0; n < 4000; n++) {
      let s = seeds[n % seeds.length]
      for (let k = 1 + Math.floor(rand() * 3); k > 0; k--) {
        const at = Math.floor(rand() * (s.length + 1))
        const c = alphabet[Math.floor(rand() * alphabet.length)]
        const r = rand()
        s =
          r < 0.4
            ? s.slice(0, at) + s.slice(at + 1)
            : r < 0.8
              ? s.slice(0, at) + c + s.slice(at)
              : s.slice(0, at) + c + s.slice(at + 1)
      }
      try {
        const f = parseEventFilter(s, FIELDS)
        eventFilterMatches(f, () => 1n)
        parsed++
      } catch (e) {
        if (!(e instanceof FilterError)) throw new Error(`'${s}': ${e}`)
        expect(e.position).toBeGreaterThanOrEqual(0)
        expect(e.position).toBeLessThanOrEqual(s.length)
        errors++
      }
    }
    expect(parsed).toBeGreaterThan(100)
    expect(errors).toBeGreaterThan(100)
  })
})

describe('a probe hit as the record', () => {
  function setup() {
    const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
    k.vfs.writeFile(
      '/bin/hello',
      new Uint8Array(readFileSync(new URL('../fixtures/bin/hello', import.meta.url))),
    )
    k.boot()
    const task = k.spawn('/bin/hello', ['hello', 'world'])
    return { k, task, regs: new PtRegsFrame(task.regs, 0) }
  }

  it('filters on what the fetches store: typed values, bitfields, strings, symbols, faults', () => {
    const { k, task, regs } = setup()
    const def = parseProbeDefinition(
      'p:e do_fork x=%di:s16 bits=%di:b4@2/32 who=$comm:string fn=%si:symbol bad=+0(\\16):u64',
    ) as ProbeDefinition
    const fields = probeEventFields(def)
    regs.set('di', 0b1011_0100) // x = 180, bits 2..5 = 0b1101
    const forkAt = k.kallsyms.lookupName('do_fork') as number
    regs.set('si', forkAt + 3)
    const hit = probeHitRecord({
      ctx: { kernel: k, regs, task },
      args: def.args,
      comm: task.comm,
      pid: task.pid,
      cpu: 0,
      address: forkAt,
    })
    const ok = (text: string) =>
      eventFilterMatches(parseEventFilter(text, fields, { kallsyms: k.kallsyms }), hit)
    expect(ok('x == 180 && bits == 13')).toBe(true)
    expect(ok('bits == 0xb4')).toBe(false)
    expect(ok('who == "hello" && comm == "hello"')).toBe(true)
    expect(ok(`common_pid == ${task.pid} && cpu == 0`)).toBe(true)
    expect(ok('fn.function == do_fork && __probe_ip.function == do_fork')).toBe(true)
    expect(ok(`fn == ${BigInt.asUintN(64, BigInt(forkAt + 3))}`)).toBe(true)
    expect(ok('bad == 0 || bad != 0')).toBe(false)
    expect(ok('common_flags & 1 && common_preempt_count == 0')).toBe(true)
  })
})

/**
 * predicate_parse of trace_events_filter.c, as the kernel builds its program
 * (first pass with update_preds, the second pass's jumps, the third's
 * inverts), over predicates "ATOM == 1"; and filter_match_preds running it.
 * 'error' where it fails (a ')' with no '(' open, a WARN on a backward jump).
 */
function linuxProgram(str: string, atoms: readonly string[]): ((v: boolean[]) => boolean) | 'error' {
  const INVERT = 1
  const AND = 2
  const OR = 4
  const prog: { target: number; when: number; atom: number }[] = []
  const inverts: number[] = []
  const stack = [0]
  let invert = 0
  let n = 0
  let ptr = 0
  /** prog[-1] was read: an entry left unlinked (Linux reads before the array, then WARNs). */
  let unlinked = false
  const update = (N: number, inv: number) => {
    const t = prog[N].target
    if (t < 0) {
      unlinked = true
      return
    }
    const s = prog[t].target
    prog[t].when = inv
    prog[t].target = N
    prog[N].target = s
  }
  outer: while (ptr < str.length) {
    const next = ptr++
    const c = str[next]
    if (c === ' ') continue
    if (c === '(') {
      stack.push(invert)
      continue
    }
    if (c === '!' && str[next + 1] !== '=' && str[next + 1] !== '~') {
      invert = invert ? 0 : 1
      continue
    }
    const m = /^([a-z0-9]+) == 1/.exec(str.slice(next))
    if (!m) return 'error'
    inverts[n] = invert
    prog[n] = { target: n - 1, when: 0, atom: atoms.indexOf(m[1]) }
    ptr = next + m[0].length
    n++
    for (;;) {
      const at = ptr++
      const ch = str[at] ?? '\0'
      if (ch === ' ') continue
      if (ch === '&' || ch === '|') {
        if (str[at + 1] !== ch) return 'error'
        ptr++
      } else if (ch !== ')' && ch !== '\0') return 'error'
      const top = stack.length - 1
      invert = stack[top] & INVERT
      if (stack[top] & AND) {
        update(n - 1, invert)
        stack[top] &= ~AND
      }
      if (ch === '&') {
        stack[top] |= AND
        break
      }
      if (stack[top] & OR) {
        update(n - 1, invert ? 0 : 1)
        stack[top] &= ~OR
      }
      if (ch === '|') {
        stack[top] |= OR
        break
      }
      if (ch === '\0') break outer
      if (top === 0) return 'error'
      stack.pop()
    }
  }
  if (stack.length !== 1 || n === 0 || unlinked) return 'error'
  prog[n] = { target: 1, when: 0, atom: -1 }
  prog[n + 1] = { target: 0, when: 0, atom: -1 }
  prog[n - 1].target = n
  prog[n - 1].when = 0
  for (let i = n - 1; i--; ) {
    const target = prog[i].target
    if (target < 0) return 'error'
    if (prog[i].when === prog[target].when) prog[i].target = prog[target].target
  }
  for (let i = 0; i < n; i++) {
    prog[i].when ^= inverts[i]
    if (prog[i].target <= i) return 'error'
  }
  return (v) => {
    let i = 0
    for (; prog[i].atom >= 0; i++) if ((v[prog[i].atom] ? 1 : 0) === prog[i].when) i = prog[i].target
    return prog[i].target === 1
  }
}
