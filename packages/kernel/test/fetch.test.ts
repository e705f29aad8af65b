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
})
