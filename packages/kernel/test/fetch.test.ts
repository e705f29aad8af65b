// Fetching probe arguments from registers, kernel and user memory, and the
// ftrace line they print in.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  copyFromUser,
  fetchArg,
  functionArgument,
  Kernel,
  type KernelSymbol,
  type ProbeDefinition,
  PtRegsFrame,
  parseProbeDefinition,
  traceLine,
  uprobeWhere,
} from '../src/index.js'
import { guestImage } from './support/run.js'

function setup() {
  const k = new Kernel({ image: guestImage(), memorySize: 64 * 1024 * 1024 })
  k.vfs.writeFile(
    '/bin/hello',
    new Uint8Array(readFileSync(new URL('../fixtures/bin/hello', import.meta.url))),
  )
  k.boot()
  const task = k.spawn('/bin/hello', ['hello', 'world'])
  // A pt_regs image of the new task's first instruction (as a probe handler would see it).
  const regs = new PtRegsFrame(task.regs, 0)
  return { k, task, regs }
}

const BANNER = 'Linux version 0.0.0-probekit (guest kernel image, gcc -O2)\n'

const args = (line: string) => (parseProbeDefinition(line) as ProbeDefinition).args

describe('fetch args', () => {
  it('registers, $stack, $stackN, immediates and $comm, by type', () => {
    const { k, task, regs } = setup()
    regs.set('di', -2)
    const ctx = { kernel: k, regs, task }
    const sp = regs.get('sp')
    const out = args('p do_fork a=%di:s32 b=%di:u8 c=%di:x16 d=$stack e=$stack0:u64 f=\\42:u32 g=$comm').map(
      (a) => fetchArg(ctx, a),
    )
    expect(out).toEqual(['a=-2', 'b=254', 'c=0xfffe', `d=0x${sp.toString(16)}`, 'e=2', 'f=42', 'g="hello"'])
  })

  it('dereferences kernel memory; strings; faults print (fault)', () => {
    const { k, task, regs } = setup()
    const ctx = { kernel: k, regs, task }
    const first = k.readKernel(k.kallsyms.lookupName('do_fork') as number, 1)[0]
    const out = args(
      'p do_fork byte=@do_fork:x8 banner=@linux_banner:string bad=+0(\\16):u64 badstr=+0(\\8):string',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      `byte=0x${first.toString(16)}`,
      `banner="${BANNER}"`,
      'bad=(fault)',
      'badstr=(fault)',
    ])
  })

  it('kernel reads refuse user addresses and user reads kernel ones, as on x86-64 (use +u or :ustring)', () => {
    const { k, task, regs } = setup()
    regs.set('di', k.kallsyms.lookupName('linux_banner') as number)
    const ctx = { kernel: k, regs, task }
    // The initial user stack: argc at %sp, then argv[0], argv[1], NULL.
    const out = args(
      'p do_fork k=+0(+8($stack)):string ku=+0(+u8($stack)):string uu=+u0(+u8($stack)):string us=+0(+u8($stack)):ustring uk=+u0(%di):string ukn=+u0(%di):u8 kk=+0(%di):ustring',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      'k=(fault)',
      'ku=(fault)',
      'uu="hello"',
      'us="hello"',
      'uk=(fault)',
      'ukn=(fault)',
      'kk=(fault)',
    ])
  })

  it('$argN: %di %si %dx %cx %r8 %r9, then the stack above the return address; at a return, the saved ones', () => {
    const { k, task, regs } = setup()
    const ctx = { kernel: k, regs, task }
    regs.set('di', -100)
    regs.set('dx', 0x8000)
    regs.set('cx', 0o644)
    regs.set('r8', 5)
    regs.set('r9', 6)
    // At _start %sp holds argc, so "$arg7" (%sp+8) is argv[0] and $arg8 argv[1].
    const argv0 = BigInt(regs.get('sp') + 8)
    const entry = args(
      'p do_sys_open dfd=$arg1:s32 flags=$arg3:x32 mode=$arg4:u16 $arg5:u8 $arg6 $arg7 +0($arg7):ustring a8=+0($arg8):ustring',
    )
    const argv0Value = new DataView(copyFromUser(task.mm, Number(argv0), 8).buffer).getBigUint64(0, true)
    expect(entry.map((a) => fetchArg(ctx, a))).toEqual([
      'dfd=-100',
      'flags=0x8000',
      'mode=420',
      'arg4=5',
      'arg5=0x6',
      `arg6=0x${argv0Value.toString(16)}`,
      'arg7="hello"',
      'a8="world"',
    ])
    // A return probe reads them as its entry handler saved them (functionArgument at entry).
    const saved = new Map([
      [1, functionArgument(ctx, 1)],
      [7, functionArgument(ctx, 7)],
    ])
    regs.set('di', 0)
    regs.set('ax', 3)
    const ret = args('r do_sys_open dfd=$arg1:s32 name=+0($arg7):ustring ret=$retval:s64 $arg2')
    expect(ret.map((a) => fetchArg({ ...ctx, entryArgs: saved }, a))).toEqual([
      'dfd=-100',
      'name="hello"',
      'ret=3',
      'arg4=0x0',
    ])
  })

  it('types: char, symbol, symstr, bitfields, immediate strings, $COMM', () => {
    const { k, task, regs } = setup()
    const ks = k.kallsyms
    const doFork = ks.symbol('do_fork') as KernelSymbol
    const size = `0x${doFork.size.toString(16)}`
    regs.set('di', doFork.address + 4)
    regs.set('si', -2)
    regs.set('ax', 0x11)
    const ctx = { kernel: k, regs, task }
    // "Linux" is 4c 69 6e 75 78: the dword at linux_banner is 0x756e694c.
    const out = args(
      'p do_fork c=@linux_banner:char c4=@linux_banner+4:char d=+4(@linux_banner):char s=%di:symbol ss=%di:symstr n=\\17:symbol ns=%ax:symstr v=%si:s8 b=@linux_banner:b4@2/32 b8=@linux_banner:b4@4/8 b1=%si:b1@63/64 bs=%si:b3@1/8 t=\\"text" cm=$COMM',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      "c='L'",
      "c4='x'",
      // @SYM loads the word there: +4(...) reads 4 bytes past what "Linux ve" points at.
      'd=(fault)',
      `s=do_fork+0x4/${size}`,
      `ss="do_fork+0x4/${size}"`,
      'n=0x11',
      'ns="0x11"',
      'v=-2',
      // (0x756e694c >> 2) & 0xf, (0x4c >> 4) & 0xf
      'b=3',
      'b8=4',
      'b1=1',
      // -2 is 0b...11111110: bits 1..3
      'bs=7',
      't="text"',
      'cm="hello"',
    ])
  })

  it('arrays: N elements from the address, strings from N pointers; a fault is per element', () => {
    const { k, task, regs } = setup()
    const ks = k.kallsyms
    const doFork = ks.symbol('do_fork') as KernelSymbol
    // A kernel buffer (the names_cache pages): do_fork's address, 0x11, then the bytes 41 42 ff 80.
    const buf = ks.lookupName('names_cache') as number
    const data = new Uint8Array(20)
    const view = new DataView(data.buffer)
    view.setBigUint64(0, BigInt.asUintN(64, BigInt(doFork.address)), true)
    view.setBigUint64(8, 0x11n, true)
    data.set([0x41, 0x42, 0xff, 0x80], 16)
    k.writeKernel(buf, data)
    regs.set('dx', buf)
    const ctx = { kernel: k, regs, task }
    const out = args(
      'p do_fork a=@linux_banner:x8[5] c=@linux_banner:char[5] s=@linux_banner:x16[2] u=+16(%dx):u8[4] i=+16(%dx):s8[4] y=+0(%dx):symbol[2] w=+16(%dx):b4@4/8[4] argv=+u8($stack):ustring[3] kargv=+u8($stack):string[2]',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      'a={0x4c,0x69,0x6e,0x75,0x78}',
      "c={'L','i','n','u','x'}",
      's={0x694c,0x756e}',
      'u={65,66,255,128}',
      'i={65,66,-1,-128}',
      `y={do_fork+0x0/0x${doFork.size.toString(16)},0x11}`,
      'w={4,4,15,8}',
      // argv[2] is NULL: that string faults, not the others.
      'argv={"hello","world",(fault)}',
      // Pointers read from user memory, strings as kernel ones: each faults.
      'kargv={(fault),(fault)}',
    ])
  })

  it("uprobe fetches read only the task's user memory: a kernel address faults, u changes nothing", () => {
    const { k, task, regs } = setup()
    const ctx = { kernel: k, regs, task, user: true }
    const out = args(
      'p /bin/hello:0x1000 argv0=+0(+8($stack)):string argv0u=+u0(+8($stack)):string kbyte=@0xffffffff81000000:x8 byte=@0x400001:x8 str=@0x400001:string magic=@0x400000:x8[4] argv=+8($stack):string[3] ustr=+0(+8($stack)):ustring',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      'argv0="hello"',
      'argv0u="hello"',
      'kbyte=(fault)',
      'byte=0x45',
      'str="ELF\u0002\u0001\u0001"',
      'magic={0x7f,0x45,0x4c,0x46}',
      'argv={"hello","world",(fault)}',
      'ustr="hello"',
    ])
  })

  it('@+FILE_OFFSET reads where the probed file maps that offset (a fault when it does not)', () => {
    const { k, task, regs } = setup()
    // hello is static: its first PT_LOAD maps file offset 0 (the ELF header) at 0x400000;
    // e_entry (offset 24) points at _start, whose first byte is 0x48 (rex.W xor %rbp,%rbp).
    const mapped = { kernel: k, regs, task, user: true, fileAddress: (o: number) => 0x400000 + o }
    const unmapped = { kernel: k, regs, task, user: true, fileAddress: () => null }
    const a = args('p /bin/hello:0x1000 magic=@+0:x32 class=@+4:u8 entry=+0(@+24):x8 s=@+1:string')
    expect(a.map((x) => fetchArg(mapped, x))).toEqual([
      'magic=0x464c457f',
      'class=2',
      'entry=0x48',
      expect.stringMatching(/^s="ELF/),
    ])
    expect(a.map((x) => fetchArg(unmapped, x))).toEqual([
      'magic=(fault)',
      'class=(fault)',
      'entry=(fault)',
      's=(fault)',
    ])
    // Without a file mapping to go by (a kprobe's context), it is a fault too.
    expect(fetchArg({ kernel: k, regs, task }, a[0])).toBe('magic=(fault)')
  })

  it('prints ftrace lines', () => {
    expect(
      traceLine({
        comm: 'bash',
        pid: 1234,
        cpu: 1,
        nanoseconds: 5_123_456_789,
        event: 'myprobe',
        where: 'do_sys_open+0x0/0x1a',
        args: ['dfd=0xffffff9c'],
      }),
    ).toBe(
      '            bash-1234    [001] d....     5.123456: myprobe: (do_sys_open+0x0/0x1a) dfd=0xffffff9c',
    )
  })

  it('prints uprobe lines as print_uprobe_event does: (0xVADDR), and (0xRET <- 0xFUNC) for a return', () => {
    const line = (event: string, where: string, a: string[]) =>
      traceLine({ comm: 'zsh', pid: 24842, cpu: 6, nanoseconds: 258_544_995_456_000, event, where, args: a })
    expect(line('zfree_entry', uprobeWhere(0x446420), ['arg1=0x446420', 'arg2=0x79'])).toBe(
      '             zsh-24842   [006] d.... 258544.995456: zfree_entry: (0x446420) arg1=0x446420 arg2=0x79',
    )
    expect(line('zfree_exit', uprobeWhere(0x446540, 0x446420), ['arg1=0x446540'])).toBe(
      '             zsh-24842   [006] d.... 258544.995456: zfree_exit: (0x446540 <- 0x446420) arg1=0x446540',
    )
  })
})
