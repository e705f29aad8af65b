// Fetching probe arguments from registers, kernel and user memory, and the
// ftrace line they print in.

import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  fetchArg,
  Kernel,
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

  it('dereferences user and kernel memory; strings; faults print (fault)', () => {
    const { k, task, regs } = setup()
    const ctx = { kernel: k, regs, task }
    const out = args(
      'p do_fork argv0=+0(+8($stack)):string argv1=+0(+16($stack)):string byte=@do_fork:x8 bad=+0(\\16):u64 badstr=+0(\\8):string',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual(['argv0="hello"', 'argv1="world"', 'byte=0x55', 'bad=(fault)', 'badstr=(fault)'])
  })

  it("uprobe fetches read only the task's user memory: a kernel address faults, u changes nothing", () => {
    const { k, task, regs } = setup()
    const ctx = { kernel: k, regs, task, user: true }
    const out = args(
      'p /bin/hello:0x1000 argv0=+0(+8($stack)):string argv0u=+u0(+8($stack)):string kbyte=@0xffffffff81000000:x8 byte=@0x400001:x8 str=@0x400001:string',
    ).map((a) => fetchArg(ctx, a))
    expect(out).toEqual([
      'argv0="hello"',
      'argv0u="hello"',
      'kbyte=(fault)',
      'byte=0x45',
      'str="ELF\u0002\u0001\u0001"',
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
