// kprobe_events definitions: the examples of Documentation/trace/kprobetrace.rst
// and the errors a user should get, one line each, with the position.

import { describe, expect, it } from 'vitest'
import {
  formatProbeDefinition,
  isUprobeDefinition,
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

// uprobe_events definitions (Documentation/trace/uprobetracer.rst), and the
// PATH:SYMBOL[+OFFS] form perf probe -x resolves.
describe('uprobe definitions', () => {
  it('parses the uprobetracer examples: a file offset, default group uprobes, event named after file and offset', () => {
    const d = def('p /bin/bash:0x4245c0')
    expect(d).toMatchObject({
      kind: 'p',
      group: 'uprobes',
      event: 'p_bash_0x4245c0',
      target: { path: '/bin/bash', offset: 0x4245c0 },
      maxactive: 0,
      args: [],
    })
    expect(isUprobeDefinition(d)).toBe(true)
    expect(isUprobeDefinition(def('p do_fork'))).toBe(false)
    const z = def('p:zfree_entry /bin/zsh:0x46420 %ip %ax')
    expect(z).toMatchObject({
      group: 'uprobes',
      event: 'zfree_entry',
      target: { path: '/bin/zsh', offset: 0x46420 },
    })
    // As reading uprobe_events back prints them.
    expect(formatProbeDefinition(z)).toBe(
      'p:uprobes/zfree_entry /bin/zsh:0x0000000000046420 arg1=%ip:x64 arg2=%ax:x64',
    )
    const r = def('r:zfree_exit /bin/zsh:0x46420 %ip %ax')
    expect(r).toMatchObject({ kind: 'r', event: 'zfree_exit' })
    expect(formatProbeDefinition(r)).toBe(
      'r:uprobes/zfree_exit /bin/zsh:0x0000000000046420 arg1=%ip:x64 arg2=%ax:x64',
    )
  })

  it('reads OFFSET as kstrtoul(s, 0) does; names the event after the basename up to its first . - or _', () => {
    expect(def('p /lib/libc.so.6:4096').target).toEqual({ path: '/lib/libc.so.6', offset: 4096 })
    expect(def('p /lib/libc.so.6:4096').event).toBe('p_libc_0x1000')
    expect(def('p ./my-prog:010').target).toEqual({ path: './my-prog', offset: 8 })
    expect(def('p ./my-prog:010').event).toBe('p_my_0x8')
    expect(def('r ./myprog:0X11B0').event).toBe('r_myprog_0x11b0')
    expect(def('p:g/e ./myprog:0').group).toBe('g')
    // A ':' in the path: the last one ends it.
    expect(def('p /tmp/a:b/prog:0x10').target).toEqual({ path: '/tmp/a:b/prog', offset: 16 })
  })

  it('PATH:OFFSET%return is a return probe', () => {
    const d = def('p /bin/zsh:0x46420%return ret=$retval')
    expect(d).toMatchObject({
      kind: 'r',
      event: 'r_zsh_0x46420',
      target: { path: '/bin/zsh', offset: 0x46420 },
    })
    expect(formatProbeDefinition(d)).toBe(
      'r:uprobes/r_zsh_0x46420 /bin/zsh:0x0000000000046420 ret=$retval:x64',
    )
  })

  it('takes PATH:SYMBOL[+OFFS] (resolved when armed)', () => {
    const d = def('p ./myprog:myfunc x=%di:s64 y=%si:s64')
    expect(d).toMatchObject({
      group: 'uprobes',
      event: 'p_myprog_myfunc_0',
      target: { path: './myprog', symbol: 'myfunc', offset: 0 },
    })
    expect(def('p /x/y:main+0x10').target).toEqual({ path: '/x/y', symbol: 'main', offset: 16 })
    expect(def('p /x/y:main+0x10').event).toBe('p_y_main_16')
    expect(def('r /x/y:_start.cold').event).toBe('r_y__start_cold_0')
    expect(formatProbeDefinition(def('p:e /x/y:main+4'))).toBe('p:uprobes/e /x/y:main+4')
  })

  it('fetches: user memory, @+FILE_OFFSET, strings, immediates; u prefix accepted', () => {
    const d = def(
      'r /bin/prog:0x10 a=@0x601040:u32 b=@+0x6020:s64 c=+0(%di):string d=+u8($stack):x8 e=$stack1 f=$comm g=\\7 h=$retval:s32',
    )
    expect(d.args.map((a) => [a.fetch.kind, a.type])).toEqual([
      ['mem', 'u32'],
      ['fileoffset', 's64'],
      ['deref', 'string'],
      ['deref', 'x8'],
      ['stack', 'x64'],
      ['comm', 'string'],
      ['imm', 'x64'],
      ['retval', 's32'],
    ])
    expect(d.args[1].fetch).toEqual({ kind: 'fileoffset', offset: 0x6020 })
    expect(formatProbeDefinition(d)).toContain(' b=@+0x6020:s64 ')
  })

  it.each([
    ['p /bin/prog', /no ':' after the path/],
    ['p /bin/prog:', /expected PATH:OFFSET or PATH:SYMBOL/],
    ['p /bin/prog:0x12zz', /bad uprobe offset '0x12zz'/],
    ['p /bin/prog:09', /bad uprobe offset '09'/],
    ['p /bin/prog:my-func', /bad probe point/],
    ['p /bin/prog:0x10%entry', /bad suffix '%entry'/],
    ['p /bin/prog:0x10(0x20)', /reference counter offsets .* are not supported/],
    ['r4 /bin/prog:0x10', /MAXACTIVE is only for kernel return probes/],
    ['r /bin/prog:main+4', /offset 0 of its function/],
    ['p /bin/prog:0x10 x=$retval', /only valid on a return probe/],
    ['p /bin/prog:0x10 x=@jiffies', /a uprobe cannot read a kernel symbol/],
    ['p /bin/prog:0x10 x=+0(@jiffies+8)', /a uprobe cannot read a kernel symbol/],
    ['p /bin/prog:0x10 x=@+zz', /bad file offset '@\+zz'/],
    ['p /bin/prog:0x10 x=%xyz', /unknown register '%xyz'/],
    ['p /bin/prog:0xfffffffffffffffff', /too large/],
  ])('rejects %j with a clear reason', (line, message) => {
    expect(() => parseProbeDefinition(line)).toThrow(ProbeSyntaxError)
    expect(() => parseProbeDefinition(line)).toThrow(message)
  })

  it('kprobes keep @+OFFS refused (file offsets are for uprobes)', () => {
    expect(() => parseProbeDefinition('p do_fork x=@+8')).toThrow(/bad memory reference/)
  })
})
