// kprobe_events definitions: the grammar of Documentation/trace/kprobetrace.rst
// (Linux 6.x), and the errors tracefs gives, each with its error_log text and
// caret (trace_probe_log_err's position).

import { describe, expect, it } from 'vitest'
import {
  entryArgNumbers,
  formatProbeDefinition,
  isUprobeDefinition,
  Kallsyms,
  kallsymsSizeOffset,
  kprobeOnFuncEntry,
  type ProbeDefinition,
  type ProbeParseOptions,
  ProbeSyntaxError,
  parseProbeDefinition,
} from '../src/index.js'

const def = (s: string, o?: ProbeParseOptions) => parseProbeDefinition(s, o) as ProbeDefinition

/** The error as tracefs's error_log shows it: the text, then the command with a caret under the column. */
function errorLog(line: string, o?: ProbeParseOptions): string {
  try {
    parseProbeDefinition(line, o)
  } catch (e) {
    if (!(e instanceof ProbeSyntaxError)) throw e
    return `${e.message}\n${line}\n${' '.repeat(e.position)}^`
  }
  return 'accepted'
}

const kaddr = (a: bigint) => Number(BigInt.asIntN(64, a))

/** A kallsyms laid out as the guest's: do_fork (0x45 bytes, padded to 0x50), then sys_fork. */
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
const withSyms = { kallsyms }

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

  it('MAXACTIVE is kstrtouint(s, 0): hex, octal, decimal, 1..4096', () => {
    expect(def('r0x10 do_fork').maxactive).toBe(16)
    expect(def('r010:e do_fork').maxactive).toBe(8)
    expect(def('r4096 do_fork').maxactive).toBe(4096)
  })

  it('SYM%return is the return-probe form of p: (p:EV SYM%return equals r:EV SYM)', () => {
    const d = def('p:myret do_sys_open%return ret=$retval:s64')
    expect(d).toEqual(def('r:myret do_sys_open ret=$retval:s64'))
    expect(d).toMatchObject({ kind: 'r', event: 'myret', target: { symbol: 'do_sys_open', offset: 0 } })
    expect(formatProbeDefinition(d)).toBe('r:kprobes/myret do_sys_open ret=$retval:s64')
    // The generated name is the return probe's; SYM+0%return is SYM%return.
    expect(def('p do_sys_open+0%return').event).toBe('r_do_sys_open_0')
  })

  it('names events after the probe point by default, as sanitize_event_name does', () => {
    expect(def('p do_fork+4').event).toBe('p_do_fork_4')
    expect(def('p do_fork+0x10').event).toBe('p_do_fork_16')
    expect(def('p do_fork+010').event).toBe('p_do_fork_8')
    expect(def('r do_fork').event).toBe('r_do_fork_0')
    expect(def('p 0xffffffff81000000').event).toBe('p_0xffffffff81000000')
    expect(def('p foo.cold').event).toBe('p_foo_cold_0')
    expect(def('p mymod:foo').event).toBe('p_mymod_foo_0')
    expect(def('p mymod:foo').target).toEqual({ module: 'mymod', symbol: 'foo', offset: 0 })
    // GROUP/ alone keeps the generated event name; GROUP.EVENT is GROUP/EVENT; a group may have '-'.
    expect(def('p:mygrp/ do_fork')).toMatchObject({ group: 'mygrp', event: 'p_do_fork_0' })
    expect(def('p:mygrp.ev do_fork')).toMatchObject({ group: 'mygrp', event: 'ev' })
    expect(def('p:my-mod/ev do_fork').group).toBe('my-mod')
  })

  it('parses every fetch argument form and type', () => {
    const d = def(
      'p vfs_read a=%di:u32 b=@0x1000:s8 c=@jiffies+8:x16 d=$stack2:u64 e=$stack f=$comm g=\\42:s64 h=+8(-16(%si)):string i=+0(%r12):u8 j=$arg3 k=\\"hi" l=\\-1:s8',
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
      ['arg', 'x64'],
      ['immstr', 'string'],
      ['imm', 's8'],
    ])
    expect(d.args[7].fetch).toEqual({
      kind: 'deref',
      offset: 8,
      user: false,
      inner: { kind: 'deref', offset: -16, user: false, inner: { kind: 'reg', reg: 'si' } },
    })
    expect(d.args[2].fetch).toEqual({ kind: 'symbol', symbol: 'jiffies', offset: 8 })
    expect(d.args[9].fetch).toEqual({ kind: 'arg', index: 3 })
    expect(d.args[10].fetch).toEqual({ kind: 'immstr', value: 'hi' })
    expect(d.args[11].fetch).toEqual({ kind: 'imm', value: -1n })
  })

  it('types: char, symbol, symstr, ustring, bitfields and arrays', () => {
    const d = def(
      'p do_sys_open c=+0(%si):char s=%di:symbol ss=+0(%sp):symstr u=+0(%si):ustring b=+0(%di):b4@2/32 a=+0(%di):u8[4] x=+0(%di):x32[2] sa=+0(%si):string[3] ua=+u8(%si):ustring[2] bf=+0(%di):b1@7/8[3]',
    )
    expect(d.args.map(({ name, type, bitfield, count }) => ({ name, type, bitfield, count }))).toEqual([
      { name: 'c', type: 'char' },
      { name: 's', type: 'symbol' },
      { name: 'ss', type: 'symstr' },
      { name: 'u', type: 'ustring' },
      { name: 'b', type: 'u32', bitfield: { width: 4, offset: 2, container: 32 } },
      { name: 'a', type: 'u8', count: 4 },
      { name: 'x', type: 'x32', count: 2 },
      { name: 'sa', type: 'string', count: 3 },
      { name: 'ua', type: 'ustring', count: 2 },
      { name: 'bf', type: 'u8', bitfield: { width: 1, offset: 7, container: 8 }, count: 3 },
    ])
    expect(formatProbeDefinition(d)).toBe(
      'p:kprobes/p_do_sys_open_0 do_sys_open c=+0(%si):char s=%di:symbol ss=+0(%sp):symstr u=+0(%si):ustring b=+0(%di):b4@2/32 a=+0(%di):u8[4] x=+0(%di):x32[2] sa=+0(%si):string[3] ua=+u8(%si):ustring[2] bf=+0(%di):b1@7/8[3]',
    )
    // Every form reads back to itself.
    expect(def(formatProbeDefinition(d))).toEqual(d)
    // symstr takes a register, $stackN, $retval, $argN or a dereference's value.
    for (const a of ['%di', '$stack1', '$arg1', '+8(%sp)', '@jiffies'])
      expect(def(`p do_fork x=${a}:symstr`).args[0].type).toBe('symstr')
    expect(def('r do_fork x=$retval:symstr').args[0].type).toBe('symstr')
  })

  it('$argN: on a function entry, and at its exit (saved at entry); entryArgNumbers lists them', () => {
    const p = def('p do_sys_open dfd=$arg1:s32 name=+0($arg2):ustring $arg7')
    expect(p.args.map((a) => a.fetch)).toEqual([
      { kind: 'arg', index: 1 },
      { kind: 'deref', offset: 0, user: false, inner: { kind: 'arg', index: 2 } },
      { kind: 'arg', index: 7 },
    ])
    expect(p.args[2].name).toBe('arg3')
    const r = def('r do_sys_open name=+0($arg2):ustring ret=$retval:s64 $arg2 $arg1:s32')
    expect(entryArgNumbers(r.args)).toEqual([1, 2])
    expect(def('p do_sys_open $arg2048').args[0].fetch).toEqual({ kind: 'arg', index: 2048 })
  })

  it('parses deletions', () => {
    expect(parseProbeDefinition('-:myprobe')).toEqual({ kind: '-', group: 'kprobes', event: 'myprobe' })
    expect(parseProbeDefinition('-:grp/myprobe')).toEqual({ kind: '-', group: 'grp', event: 'myprobe' })
  })

  it('takes an address for a return probe (its checks are register_kretprobe’s), without $retval as Linux does', () => {
    expect(def('r 0xffffffff81003cd0')).toMatchObject({ kind: 'r', target: { address: 0xffffffff81003cd0n } })
    // trace_kprobe sets TPARG_FL_RETURN only for a symbol: $retval and $argN are refused on an address.
    expect(errorLog('r 0xffffffff81003cd0 $retval')).toBe(
      '$retval is not available on probe\nr 0xffffffff81003cd0 $retval\n                     ^',
    )
  })

  // [definition, error_log text, caret]
  it.each([
    ['', 'empty probe definition', '^'],
    ['q:foo do_fork', "a definition starts with 'p', 'r' or '-' (got 'q:foo')", '^'],
    ['p:myprobe', 'missing the probe point: SYM[+OFFS] or an address', '         ^'],
    ['-:', "'-' needs an event name: -:[GRP/]EVENT", '^'],
    // MAXACTIVE
    ['p10 do_fork', 'Maxactive is only for function exit', ' ^'],
    ['r0 do_fork', 'Invalid maxactive number', ' ^'],
    ['r0:myret do_fork', 'Invalid maxactive number', ' ^'],
    ['r1x:e do_fork', 'Invalid maxactive number', ' ^'],
    ['r4097 do_fork', 'Maxactive is too big', ' ^'],
    // the probe point
    ['p do_fork%ret', 'Invalid probed address suffix', '         ^'],
    ['r do_fork+4', 'Retprobe address must be an function entry', '  ^'],
    ['p do_fork+0x10%return', 'Retprobe address must be an function entry', '  ^'],
    ['p do_fork+zz', 'Invalid probed address or symbol', '  ^'],
    ['p do_fork-4', 'Invalid probed address or symbol', '  ^'],
    ['p do_fork+0x100000000', 'Invalid probed address or symbol', '  ^'],
    ['p do+fork', 'Invalid probed address or symbol', '  ^'],
    ['p 0x12zz', 'Invalid probed address or symbol', '  ^'],
    // group and event names
    ['p:/ev do_fork', 'Group name is not specified', '  ^'],
    ['p:1grp/ev do_fork', 'Group name must follow the same rules as C identifiers', '  ^'],
    ['p:grp/my-ev do_fork', 'Event name must follow the same rules as C identifiers', '      ^'],
    ['p: do_fork', 'Event name is not specified', '  ^'],
    [`p:${'e'.repeat(64)} do_fork`, 'Event name is too long', '  ^'],
    // argument names
    ['p do_fork x=%di x=%si', 'This argument name is already used', '                ^'],
    ['p do_fork arg2=%di %si', 'This argument name is already used', '                   ^'],
    ['p do_fork common_pid=%di', 'This argument name is already used', '          ^'],
    ['p do_fork 1x=%di', 'Argument name must follow the same rules as C identifiers', '          ^'],
    ['p do_fork =%di', 'Argument name is not specified', '          ^'],
    [`p do_fork ${'n'.repeat(33)}=%di`, 'Argument name is too long', '          ^'],
    ['p do_fork x=', 'No argument expression', '            ^'],
    [`p do_fork x=+0(%di):${'u'.repeat(60)}`, 'Argument expression is too long', '            ^'],
    // $-variables
    ['p do_fork x=$retval', '$retval is not available on probe', '            ^'],
    ['p do_fork x=$stack2049', 'Invalid stack number', '            ^'],
    ['p do_fork x=$stackx', 'Invalid $-valiable specified', '            ^'],
    ['p do_fork x=$foo', 'Invalid $-valiable specified', '            ^'],
    ['p do_fork x=$arg0', 'Invalid argument number', '            ^'],
    ['p do_fork x=$arg2049', 'Invalid argument number', '            ^'],
    ['p do_fork x=$arg*', 'Invalid $-valiable specified', '            ^'],
    ['p do_fork+4 x=$arg1', '$arg* can be used only on function entry or exit', '              ^'],
    // bare $arg... are looked at before anything else (argv_has_var_arg)
    ['p do_fork+4 x=%zz $arg1', '$arg* can be used only on function entry or exit', '                  ^'],
    ['p do_fork $argx', 'Invalid $-valiable specified', '          ^'],
    ['p do_fork $arg* $arg*', '$arg* can be used only once in the parameters', '                ^'],
    ['p do_fork $arg* $arg1', 'BTF is not available or not supported', '                ^'],
    [
      'p 0xffffffff81003cd0 $arg1',
      '$arg* can be used only on function entry or exit',
      '                     ^',
    ],
    // registers, memory, immediates
    ['p do_fork x=%xyz', 'Invalid register name', '            ^'],
    ['p do_fork x=%rax', 'Invalid register name', '            ^'],
    ['p do_fork x=@0x12zz', 'Invalid memory address', '            ^'],
    ['p do_fork x=@+8', 'File offset is not available with kprobe', '            ^'],
    ['p do_fork x=\\zz', 'Invalid immediate value', '             ^'],
    ['p do_fork x=\\"abc', `String is not closed with '"'`, '                 ^'],
    ['p do_fork x=foo', 'BTF is not available or not supported', '            ^'],
    ['p do_fork x=9', 'Invalid fetch argument', '            ^'],
    // dereferences
    ['p do_fork x=+8%si', 'Dereference needs a brace', '            ^'],
    ['p do_fork x=+zz(%si)', 'Invalid dereference offset', '            ^'],
    ['p do_fork x=+8(%si', 'Dereference brace is not closed', '                  ^'],
    ['p do_fork x=+8(%zz)', 'Invalid register name', '               ^'],
    ['p do_fork x=-8(%zz)', 'Invalid register name', '               ^'],
    // Linux drops the u of +u8( without moving its offset: the caret is one byte early.
    ['p do_fork x=+u8(%zz)', 'Invalid register name', '               ^'],
    ['p do_fork x=+0($comm)', '$comm can not be dereferenced', '               ^'],
    ['p do_fork x=+0(\\"s")', '$comm can not be dereferenced', '               ^'],
    [
      `p do_fork x=${'+0('.repeat(15)}%di${')'.repeat(15)}`,
      'Dereference is too much nested',
      '               ^',
    ],
    // @0x1 is two fetch_insns, each +0( one more: the bitfield's or the array's would be the 16th.
    [
      `p do_fork x=${'+0('.repeat(13)}@0x1${')'.repeat(13)}:b1@0/8`,
      'Invalid bitfield',
      `${' '.repeat(15 + 57)}^`,
    ],
    [
      `p do_fork x=${'+0('.repeat(13)}@0x1${')'.repeat(13)}:u8[2]`,
      'Dereference is too much nested',
      '               ^',
    ],
    // types
    ['p do_fork x=%di:u128', 'Unknown type is specified', '                ^'],
    ['p do_fork x=%di:', 'Unknown type is specified', '                ^'],
    ['p do_fork x=%di:b4@2', 'Unknown type is specified', '                ^'],
    ['p do_fork x=%di:b4@2/33', 'Unknown type is specified', '                ^'],
    ['p do_fork x=%di:b0@2/32', 'Invalid bitfield', '                ^'],
    ['p do_fork x=%di:b4@30/32', 'Invalid bitfield', '                ^'],
    ['p do_fork x=%di:b4-2/32', 'Invalid bitfield', '                ^'],
    ['p do_fork x=$comm:u32', '$comm and immediate-string only accepts string type', '                  ^'],
    [
      'p do_fork x=$comm:string[2]',
      '$comm and immediate-string only accepts string type',
      '                  ^',
    ],
    ['p do_fork x=\\"s":u8', '$comm and immediate-string only accepts string type', '                 ^'],
    ['p do_fork x=%di:string', 'String accepts only memory argument', '                ^'],
    ['p do_fork x=$arg2:ustring', 'String accepts only memory argument', '                  ^'],
    ['p do_fork x=$stack:symstr', "Symbol String doesn't accept data/userdata", '                   ^'],
    ['p do_fork x=\\0x10:symstr', "Symbol String doesn't accept data/userdata", '                  ^'],
    ['r do_fork x=$arg1:symstr', "Symbol String doesn't accept data/userdata", '                  ^'],
    // After a dereference tracefs adds the type's offset to the inner argument's: the caret is past it.
    ['p do_fork x=+u0(%di):symstr', "Symbol String doesn't accept data/userdata", `${' '.repeat(24)}^`],
    ['p do_fork x=+0(%di):symstr[2]', 'String accepts only memory argument', `${' '.repeat(23)}^`],
    // arrays
    ['p do_fork x=%di:u8[4]', 'String accepts only memory argument', '                ^'],
    ['p do_fork x=$stack1:x8[8]', 'String accepts only memory argument', '                    ^'],
    ['p do_fork x=+0(%di):u8[4', 'Array is not closed', `${' '.repeat(24)}^`],
    ['p do_fork x=+0(%di):u8[4]x', 'Array has wrong suffix', `${' '.repeat(25)}^`],
    ['p do_fork x=+0(%di):u8[0]', 'Invalid array size', `${' '.repeat(23)}^`],
    ['p do_fork x=+0(%di):u8[x]', 'Invalid array size', `${' '.repeat(23)}^`],
    ['p do_fork x=+0(%di):u8[65]', 'Array number is too big', `${' '.repeat(23)}^`],
    // @SYM's offset is read when the probe is registered: the caret is the probe point's
    ['p do_fork x=@jiffies+zz', 'Failed to register probe event', '  ^'],
    [`p do_fork${' %di'.repeat(129)}`, 'Too many arguments are specified', '          ^'],
  ])('rejects %j as tracefs does', (line, message, caret) => {
    expect(() => parseProbeDefinition(line)).toThrow(ProbeSyntaxError)
    expect(errorLog(line)).toBe(`${message}\n${line}\n${caret}`)
  })

  it('accepts the longest ones: 64-element arrays, 14 dereferences, 128 arguments, 4095-byte strings', () => {
    expect(def('p do_fork x=+0(%di):u8[64]').args[0].count).toBe(64)
    expect(def(`p do_fork x=${'+0('.repeat(14)}%di${')'.repeat(14)}:u8`).args).toHaveLength(1)
    expect(def(`p do_fork${' %di'.repeat(128)}`).args).toHaveLength(128)
    expect(def(`p do_fork ${'n'.repeat(32)}=%di`).args[0].name).toBe('n'.repeat(32))
  })
})

describe("probe definitions against the kernel's symbols", () => {
  it('kallsymsSizeOffset counts a function’s padding as its own; kprobeOnFuncEntry follows it', () => {
    const doFork = kallsyms.lookupName('do_fork') as number
    expect(kallsymsSizeOffset(kallsyms, doFork + 0x46)).toMatchObject({
      symbol: { name: 'do_fork' },
      offset: 0x46,
      size: 0x50,
    })
    expect(kallsymsSizeOffset(kallsyms, doFork + 0x50)).toMatchObject({
      symbol: { name: 'sys_fork' },
      offset: 0,
    })
    expect(kallsymsSizeOffset(kallsyms, kaddr(0xffffffff8102b000n))).toBeNull()
    expect(kprobeOnFuncEntry(kallsyms, 'do_fork', 0)).toBe(0)
    expect(kprobeOnFuncEntry(kallsyms, 'do_fork', 0x45)).toBe(-22)
    expect(kprobeOnFuncEntry(kallsyms, 'do_fork', 0x50)).toBe(0)
    expect(kprobeOnFuncEntry(kallsyms, 'nosuch', 0)).toBe(-2)
  })

  it('SYM+OFFS past SYM is judged by the address: the next function’s entry is an entry', () => {
    // do_fork+0x50 is sys_fork's first byte: a return probe and $argN are allowed there.
    expect(def('r do_fork+0x50 $arg1', withSyms)).toMatchObject({
      kind: 'r',
      target: { symbol: 'do_fork', offset: 0x50 },
    })
    expect(def('p do_fork+0x50 $arg1', withSyms).args[0].fetch).toEqual({ kind: 'arg', index: 1 })
    expect(def('p do_fork+0x45', withSyms).target).toEqual({ symbol: 'do_fork', offset: 0x45 })
    // A module that is not loaded is not looked up (the probe waits for it).
    expect(def('r mymod:foo+8', withSyms).target).toEqual({ module: 'mymod', symbol: 'foo', offset: 8 })
  })

  it.each([
    ['p nosuch', 'Invalid probed address or symbol', '  ^'],
    ['p:e helper', 'The symbol is not unique', '    ^'],
    // do_fork+0x45 is do_fork's padding (its last instruction ends at 0x45).
    ['r do_fork+0x45', 'Retprobe address must be an function entry', '  ^'],
    ['p do_fork+0x45 $arg1', '$arg* can be used only on function entry or exit', '               ^'],
    ['p do_fork+0x51%return', 'Retprobe address must be an function entry', '  ^'],
    // An unknown @SYM fails the registration with -ENOENT: tracefs points at the probe point.
    ['p:e do_fork x=@jiffies y=+8(@nosuch+16):u32', 'Invalid probed address or symbol', '    ^'],
  ])('rejects %j as tracefs does', (line, message, caret) => {
    expect(errorLog(line, withSyms)).toBe(`${message}\n${line}\n${caret}`)
  })

  it('an unknown @SYM is ENOENT and names the symbol', () => {
    let err: ProbeSyntaxError | undefined
    try {
      parseProbeDefinition('p do_fork x=@nosuch', withSyms)
    } catch (e) {
      err = e as ProbeSyntaxError
    }
    expect(err).toMatchObject({
      message: 'Invalid probed address or symbol',
      position: 2,
      errno: 2,
      detail: "no kernel symbol 'nosuch' for @nosuch",
    })
    // Without the symbols it is left for whoever arms the probe.
    expect(def('p do_fork x=@nosuch').args[0].fetch).toEqual({ kind: 'symbol', symbol: 'nosuch', offset: 0 })
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

  it('fetches: user memory, @+FILE_OFFSET, strings, immediates, arrays, bitfields; u prefix accepted', () => {
    const d = def(
      'r /bin/prog:0x10 a=@0x601040:u32 b=@+0x6020:s64 c=+0(%di):string d=+u8($stack):x8 e=$stack1 f=$comm g=\\7 h=$retval:s32 i=+0(%si):ustring j=+0(%di):u16[3] k=%ax:b2@1/8 l=@0x601040:char',
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
      ['deref', 'ustring'],
      ['deref', 'u16'],
      ['reg', 'u8'],
      ['mem', 'char'],
    ])
    expect(d.args[1].fetch).toEqual({ kind: 'fileoffset', offset: 0x6020 })
    expect(formatProbeDefinition(d)).toContain(' b=@+0x6020:s64 ')
  })

  it.each([
    [
      'p /bin/prog',
      "bad probe point '/bin/prog': a uprobe is PATH:OFFSET or PATH:SYMBOL[+OFFS] (no ':' after the path)",
      '           ^',
    ],
    [
      'p /bin/prog:',
      "bad probe point '/bin/prog:' (expected PATH:OFFSET or PATH:SYMBOL[+OFFS])",
      '            ^',
    ],
    ['p /bin/prog:0x12zz', 'Invalid uprobe offset', '            ^'],
    ['p /bin/prog:09', 'Invalid uprobe offset', '            ^'],
    ['p /bin/prog:0xfffffffffffffffff', 'Invalid uprobe offset', '            ^'],
    ['p /bin/prog:0xffffffffffffffff', 'offset 0xffffffffffffffff is too large', '            ^'],
    [
      'p /bin/prog:my-func',
      "bad probe point '/bin/prog:my-func' (expected PATH:OFFSET or PATH:SYMBOL[+OFFS])",
      '  ^',
    ],
    ['p /bin/prog:0x10%entry', 'Invalid probed address suffix', '                ^'],
    [
      'p /bin/prog:0x10(0x20)',
      'reference counter offsets (PATH:OFFSET(REF_CTR_OFFSET), for SDT semaphores) are not supported',
      '                ^',
    ],
    ['r4 /bin/prog:0x10', 'MAXACTIVE is only for kernel return probes (kretprobes)', ' ^'],
    ['r0 /bin/prog:0x10', 'Invalid maxactive number', ' ^'],
    ['r /bin/prog:main+4', 'Retprobe address must be an function entry', '  ^'],
    ['p /bin/prog:0x10 x=$retval', '$retval is not available on probe', '                   ^'],
    ['p /bin/prog:0x10 x=$arg1', '$arg* can be used only on function entry or exit', '                   ^'],
    ['p /bin/prog:0x10 $arg1', '$arg* can be used only on function entry or exit', '                 ^'],
    ['p /bin/prog:0x10 x=@jiffies', 'Symbol is not available with uprobe', '                   ^'],
    ['p /bin/prog:0x10 x=+0(@jiffies+8)', 'Symbol is not available with uprobe', '                      ^'],
    ['p /bin/prog:0x10 x=@+zz', 'Invalid file offset value', '                   ^'],
    ['p /bin/prog:0x10 x=%xyz', 'Invalid register name', '                   ^'],
    ['p /bin/prog:0x10 x=%di:symbol', 'Unknown type is specified', '                       ^'],
    ['p /bin/prog:0x10 x=%di:symstr', 'Unknown type is specified', '                       ^'],
  ])('rejects %j as tracefs does', (line, message, caret) => {
    expect(errorLog(line)).toBe(`${message}\n${line}\n${caret}`)
  })

  it('kprobes keep @+OFFS refused (file offsets are for uprobes)', () => {
    expect(errorLog('p do_fork x=@+8')).toMatch(/^File offset is not available with kprobe\n/)
  })
})
