// probekit run -p with the kprobe_events grammar of current Linux
// (Documentation/trace/kprobetrace.rst): SYM%return, $argN, :ustring,
// :symbol, :symstr, bitfields, arrays, and the errors tracefs gives (its
// error_log text and caret column), through the real command on the guest.

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { imageKallsyms, type KernelSymbol, kallsymsSizeOffset, parseElf } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixtures = new URL('../../kernel/fixtures/', import.meta.url)
const program = (name: string) => fileURLToPath(new URL(`bin/${name}`, fixtures))
const ks = imageKallsyms(
  parseElf(new Uint8Array(readFileSync(new URL('../../kernel/guest/vmlinux', import.meta.url)))),
)
const sym = (name: string) => ks.symbol(name) as KernelSymbol
/** A kernel address as tracefs takes it. */
const addr = (name: string, offset: number) =>
  `0x${BigInt.asUintN(64, BigInt(sym(name).address + offset)).toString(16)}`
/** %pS's size part for a function: /0x<size>. */
const size = (name: string) => `/0x${sym(name).size.toString(16)}`

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Run with a trace file; its lines with the ftrace prefix (task, CPU, flags, timestamp) cut off. */
function traced(probes: string[], argv: string[], extra: string[] = []) {
  const trace = join(mkdtempSync(join(tmpdir(), 'probekit-kprobe-events-')), 'trace.txt')
  const r = run(...probes.flatMap((p) => ['-p', p]), '--trace', trace, ...extra, '--', ...argv)
  const lines = readFileSync(trace, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^ *\S+-\d+ +\[\d{3}\] d\.\.\.\. +\d+\.\d{6}: /, ''))
  return { ...r, lines }
}

const reEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('probekit run -p: the kprobe_events grammar of current Linux', () => {
  it('SYM%return is a kretprobe; $argN; :ustring reads user memory, :string kernel memory; :symbol and :symstr', () => {
    const r = traced(
      [
        'p:open do_sys_open dfd=$arg1:s32 name=+0($arg2):ustring flags=$arg3:x32 mode=$arg4:u16 kname=+0(%si):string',
        'p:opened do_sys_open%return name=+0($arg2):ustring ret=$retval:s64',
        'p:who sys_open caller=+0(%sp):symbol cs=+0(%sp):symstr',
      ],
      [program('fileio'), '/tmp'],
    )
    expect(r.code).toBe(0)
    // The first open: open("data.txt", O_RDWR | O_CREAT | O_EXCL, 0644) (musl adds O_LARGEFILE).
    // The file name is a user pointer: as :string (a kernel read) it faults, as on x86-64 Linux.
    expect(r.lines.find((l) => l.startsWith('open: '))).toBe(
      `open: (do_sys_open+0x0${size('do_sys_open')}) dfd=-100 name="data.txt" flags=0x80c2 mode=420 kname=(fault)`,
    )
    expect(r.lines.find((l) => l.startsWith('opened: '))).toMatch(
      new RegExp(
        `^opened: \\(sys_open\\+0x[0-9a-f]+${reEscape(size('sys_open'))} <- do_sys_open\\) name="data\\.txt" ret=3$`,
      ),
    )
    // The return address sys_open was called from, as %pS and as a string.
    const who = r.lines.find((l) => l.startsWith('who: ')) as string
    expect(who).toMatch(
      new RegExp(
        `^who: \\(sys_open\\+0x0${reEscape(size('sys_open'))}\\) caller=(\\w+\\+0x[0-9a-f]+/0x[0-9a-f]+) cs="\\1"$`,
      ),
    )
    // Every open is seen at entry and at return, with its file name saved at entry.
    const names = (prefix: string) =>
      r.lines.filter((l) => l.startsWith(prefix)).map((l) => /name="([^"]*)"/.exec(l)?.[1])
    expect(names('opened: ').length).toBeGreaterThan(4)
    expect(names('opened: ')).toEqual(names('open: '))
    expect(r.lines.filter((l) => l.startsWith('opened: ') && l.includes('"missing.txt"'))).toEqual([
      expect.stringMatching(
        /^opened: \(sys_open\+0x[0-9a-f]+\/0x[0-9a-f]+ <- do_sys_open\) name="missing\.txt" ret=-2$/,
      ),
    ])
  })

  it('$arg7 and on come from the stack: do_mmap has nine arguments; at the return they are the entry’s', () => {
    const r = traced(
      [
        'p:mm do_mmap file=$arg1 len=$arg3 prot=$arg4:x32 flags=$arg5:x32 vm_flags=$arg6 pgoff=$arg7 populate=$arg8 uf=$arg9',
        'r:mmr do_mmap pop=+0($arg8):u64 len=$arg3 ret=$retval',
      ],
      [program('memhog'), 'touch', '1'],
    )
    expect(r.code).toBe(0)
    expect(r.lines).toHaveLength(2)
    // mmap(NULL, 1 MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    expect(r.lines[0]).toMatch(
      new RegExp(
        `^mm: \\(do_mmap\\+0x0${reEscape(size('do_mmap'))}\\) file=0x0 len=0x100000 prot=0x3 flags=0x22 vm_flags=0x0 pgoff=0x0 populate=0xffff8[0-9a-f]+ uf=0x0$`,
      ),
    )
    // do_mmap sets *populate = 0 before it returns.
    expect(r.lines[1]).toMatch(
      /^mmr: \(vm_mmap_pgoff\+0x[0-9a-f]+\/0x[0-9a-f]+ <- do_mmap\) pop=0 len=0x100000 ret=0x7[0-9a-f]+$/,
    )
  })

  it('char, arrays, bitfields, immediate strings and $comm on kernel memory', () => {
    const r = traced(
      [
        'p:b do_group_exit c=@linux_banner:char[5] x=@linux_banner:x8[2] w=@linux_banner:x16[2] hi=@linux_banner:b4@4/8 lo=@linux_banner:b4@0/8 bits=@linux_banner:b3@1/32[2] s=\\"str" comm=$comm code=$arg1:s32',
      ],
      [program('hello')],
    )
    expect(r.code).toBe(0)
    // "Linux": 4c 69 6e 75 78.
    expect(r.lines).toEqual([
      `b: (do_group_exit+0x0${size('do_group_exit')}) c={'L','i','n','u','x'} x={0x4c,0x69} w={0x694c,0x756e} hi=4 lo=12 bits={6,4} s="str" comm="hello" code=0`,
    ])
  })

  it('SYM+OFFS past SYM’s last instruction is judged as Linux judges it', () => {
    const doFork = sym('do_fork')
    const after = kallsymsSizeOffset(ks, doFork.address + doFork.size)
    // The guest pads do_fork to the next 16 bytes: do_fork+SIZE is padding kallsyms counts as do_fork's.
    expect(after).toMatchObject({ symbol: { name: 'do_fork' }, offset: doFork.size })
    const next = kallsymsSizeOffset(ks, doFork.address + (after?.size ?? 0))
    expect(next).toMatchObject({ symbol: { name: 'sys_fork' }, offset: 0 })
    const pad = doFork.size
    const nextOffs = after?.size as number
    const r = traced(
      [
        // In the padding, on an instruction boundary: placed, and never hit.
        `p:pad do_fork+${pad}`,
        // The next function's first byte is its entry: $argN is allowed, and a return probe.
        `p:next do_fork+${nextOffs} $arg1`,
        `r:rnext do_fork+${nextOffs} ret=$retval:s32`,
      ],
      [program('proctree')],
      ['--dmesg'],
    )
    expect(r.code).toBe(Number(readFileSync(new URL('expected/proctree.status', fixtures), 'utf8').trim()))
    expect(r.lines.filter((l) => l.startsWith('pad: '))).toEqual([])
    const nexts = r.lines.filter((l) => l.startsWith('next: '))
    expect(nexts.length).toBe(7)
    for (const l of nexts)
      expect(l).toMatch(
        new RegExp(`^next: \\(sys_fork\\+0x0${reEscape(size('sys_fork'))}\\) arg1=0xffff8[0-9a-f]+$`),
      )
    const rnexts = r.lines.filter((l) => l.startsWith('rnext: '))
    expect(rnexts.length).toBe(7)
    for (const l of rnexts) expect(l).toMatch(/^rnext: \(\S+ <- sys_fork\) ret=\d+$/)
    expect(r.stderr).toContain(
      `probekit: pad at do_fork+${pad} is past do_fork's last instruction (do_fork is 0x${pad.toString(16)} bytes), in its alignment padding: placed as Linux places it, it never fires\n`,
    )
  })

  it('a symbol of a module that is not loaded is accepted and waits for it', () => {
    const r = run('--dmesg', '-p', 'p:m mymod:foo x=%di', '--', program('hello'))
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('hello, world\n')
    expect(r.stderr).toContain(
      'trace_kprobe: This probe might be able to register after target module is loaded. Continue.\n',
    )
  })

  const hello = program('hello')
  it.each([
    [
      'p:e do_sys_open x=@nosuch',
      "bad probe definition 'p:e do_sys_open x=@nosuch': Invalid probed address or symbol (column 5): no kernel symbol 'nosuch' for @nosuch (ENOENT)",
    ],
    ['r0:e do_sys_open', "bad probe definition 'r0:e do_sys_open': Invalid maxactive number (column 2)"],
    ['r5000 do_sys_open', "bad probe definition 'r5000 do_sys_open': Maxactive is too big (column 2)"],
    [
      'p3 do_sys_open',
      "bad probe definition 'p3 do_sys_open': Maxactive is only for function exit (column 2)",
    ],
    [
      'r do_sys_open+4',
      "bad probe definition 'r do_sys_open+4': Retprobe address must be an function entry (column 3)",
    ],
    [
      'p do_sys_open+4%return',
      "bad probe definition 'p do_sys_open+4%return': Retprobe address must be an function entry (column 3)",
    ],
    [
      'p do_sys_open%retprobe',
      "bad probe definition 'p do_sys_open%retprobe': Invalid probed address suffix (column 14)",
    ],
    [
      'p:e do_sys_open+4 $arg1',
      "bad probe definition 'p:e do_sys_open+4 $arg1': $arg* can be used only on function entry or exit (column 19)",
    ],
    [
      'p:e do_sys_open name=$arg2:string',
      "bad probe definition 'p:e do_sys_open name=$arg2:string': String accepts only memory argument (column 28)",
    ],
    [
      'p:e do_sys_open x=+0(%si):u8[65]',
      "bad probe definition 'p:e do_sys_open x=+0(%si):u8[65]': Array number is too big (column 30)",
    ],
    [
      'p:e do_sys_open x=%si:b4@30/32',
      "bad probe definition 'p:e do_sys_open x=%si:b4@30/32': Invalid bitfield (column 23)",
    ],
    [
      'p:e do_sys_open x=$stack:symstr',
      "bad probe definition 'p:e do_sys_open x=$stack:symstr': Symbol String doesn't accept data/userdata (column 26)",
    ],
    [
      'p do_fork+2',
      'cannot place probe p_do_fork_2 at do_fork+2: Probe point is not an instruction boundary (EILSEQ)',
    ],
    [
      `r ${addr('do_sys_open', 4)}`,
      `cannot place probe r_${addr('do_sys_open', 4)} at ${addr('do_sys_open', 4)}: Failed to register probe event (EINVAL: ${addr('do_sys_open', 4)} is not a function entry)`,
    ],
    // trace_kprobe marks a return probe as one (TPARG_FL_RETURN) only for a symbol.
    [
      `r ${addr('do_sys_open', 0)} $retval`,
      `bad probe definition 'r ${addr('do_sys_open', 0)} $retval': $retval is not available on probe (column 22)`,
    ],
    [
      'p do_fork+0x1000000',
      'cannot place probe p_do_fork_16777216 at do_fork+16777216: Invalid probed address or symbol (ENOENT: 0xffffffff82003d80 is outside the kernel image)'.replace(
        '0xffffffff82003d80',
        `0x${BigInt.asUintN(64, BigInt(sym('do_fork').address + 0x1000000)).toString(16)}`,
      ),
    ],
  ])('%s: one line, as tracefs would refuse it', (def, message) => {
    expect(run('-p', def, '--', hello)).toEqual({ code: 2, stdout: '', stderr: `probekit: ${message}\n` })
  })
})
