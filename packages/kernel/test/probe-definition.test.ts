// kprobe_events definitions: the examples of Documentation/trace/kprobetrace.rst
// and the errors a user should get, one line each, with the position.

import { describe, expect, it } from 'vitest'
import {
  formatProbeDefinition,
  type ProbeDefinition,
  ProbeSyntaxError,
  parseProbeDefinition,
} from '../src/index.js'

const def = (s: string) => parseProbeDefinition(s) as ProbeDefinition

describe('probe definitions', () => {
  it('parses the kprobetrace example entry probe', () => {
    const d = def('p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)')
    expect(d).toMatchObject({
      kind: 'p',
      group: 'kprobes',
      event: 'myprobe',
      target: { symbol: 'do_sys_open', offset: 0 },
    })
    expect(d.args.map((a) => a.name)).toEqual(['dfd', 'filename', 'flags', 'mode'])
    expect(d.args[3].fetch).toEqual({
      kind: 'deref',
      offset: 4,
      user: false,
      inner: { kind: 'stackpointer' },
    })
    expect(formatProbeDefinition(d)).toBe(
      'p:kprobes/myprobe do_sys_open dfd=%ax:x64 filename=%dx:x64 flags=%cx:x64 mode=+4($stack):x64',
    )
  })

  it('parses return probes with MAXACTIVE and $retval', () => {
    const d = def('r20:mygroup/myret do_sys_open $retval:s32')
    expect(d).toMatchObject({ kind: 'r', maxactive: 20, group: 'mygroup', event: 'myret' })
    expect(d.args[0]).toEqual({ name: 'arg1', fetch: { kind: 'retval' }, type: 's32' })
    expect(formatProbeDefinition(d)).toBe('r20:mygroup/myret do_sys_open arg1=$retval:s32')
  })

  it('names events after the probe point by default', () => {
    expect(def('p do_fork+4').event).toBe('p_do_fork_4')
    expect(def('r do_fork').event).toBe('r_do_fork_0')
    expect(def('p 0xffffffff81000000').event).toBe('p_0xffffffff81000000')
  })

  it('parses every fetch argument form and type', () => {
    const d = def(
      'p vfs_read a=%di:u32 b=@0x1000:s8 c=@jiffies+8:x16 d=$stack2:u64 e=$stack f=$comm g=\\42:s64 h=+8(-16(%si)):string i=+0(%r12):u8',
    )
    expect(d.args.map((a) => [a.fetch.kind, a.type])).toEqual([
      ['reg', 'u32'],
      ['mem', 's8'],
      ['symbol', 'x16'],
      ['stack', 'u64'],
      ['stackpointer', 'x64'],
      ['comm', 'string'],
      ['imm', 's64'],
      ['deref', 'string'],
      ['deref', 'u8'],
    ])
    expect(d.args[7].fetch).toEqual({
      kind: 'deref',
      offset: 8,
      user: false,
      inner: { kind: 'deref', offset: -16, user: false, inner: { kind: 'reg', reg: 'si' } },
    })
  })

  it('parses deletions', () => {
    expect(parseProbeDefinition('-:myprobe')).toEqual({ kind: '-', group: 'kprobes', event: 'myprobe' })
  })

  it.each([
    ['', /empty/],
    ['q:foo do_fork', /starts with 'p', 'r' or '-'/],
    ['p:myprobe', /missing the probe point/],
    ['p10 do_fork', /MAXACTIVE is only for return probes/],
    ['r do_fork+4', /offset 0/],
    ['r 0xffffffff81000000', /needs a symbol/],
    ['p do_fork x=%xyz', /unknown register '%xyz'/],
    ['p do_fork x=$retval', /only valid on a return probe/],
    ['p do_fork x=%di:u128', /unknown type 'u128'/],
    ['p do_fork x=%di x=%si', /duplicate argument name 'x'/],
    ['p do+fork', /bad probe point/],
    ['-:', /needs an event name/],
  ])('rejects %j with a clear reason', (line, message) => {
    expect(() => parseProbeDefinition(line)).toThrow(ProbeSyntaxError)
    expect(() => parseProbeDefinition(line)).toThrow(message)
  })

  it('says where the problem is', () => {
    try {
      parseProbeDefinition('p do_fork ok=%di bad=%xyz')
    } catch (e) {
      expect((e as ProbeSyntaxError).position).toBe('p do_fork ok=%di bad='.length)
    }
    expect.assertions(1)
  })
})
