// The block compiler: flag liveness (a flag update that a later instruction
// overwrites unobserved is left out, and the flags are still exact wherever
// they can be seen: a fault mid-block, the block's end), and block functions
// shared by source across machines.

import { describe, expect, it } from 'vitest'
import { decode } from '../src/decoder/decode.js'
import type { Instruction } from '../src/decoder/instruction.js'
import { Vector } from '../src/index.js'
import { blockSource, compileBlock } from '../src/jit/block-compiler.js'
import { le32, Rig, USER_CODE } from './support/rig.js'

function decodeAll(bytes: number[]): Instruction[] {
  const buf = new Uint8Array(bytes)
  const out: Instruction[] = []
  for (let off = 0; off < buf.length; ) {
    const insn = decode(buf, USER_CODE + off, off)
    out.push(insn)
    off += insn.length
  }
  return out
}

/** Both execution modes: every behaviour here must hold in the interpreter and in compiled blocks. */
const MODES = [
  ['interpreter', Number.POSITIVE_INFINITY],
  ['block compiler', 0],
] as const

/** Lazy-flag updates (each sets Cpu.fop) in a block's source. */
const flagUpdates = (src: string) => src.match(/c\.fop=(?!=)/g)?.length ?? 0

const ADD_RAX_1 = [0x48, 0x83, 0xc0, 0x01]
const SHR_RBX_3 = [0x48, 0xc1, 0xeb, 0x03]
const XOR_RCX_RDX = [0x48, 0x31, 0xd1]
const CMP_RAX_RBX = [0x48, 0x39, 0xd8]
const LOAD_RSI = [0x48, 0x8b, 0x34, 0x25, ...le32(0x900000)] // mov rsi, [0x900000]
const JNE_0 = [0x75, 0x00]

describe('block compiler flag liveness', () => {
  it('leaves out the updates of flags overwritten before any reader', () => {
    // add, shr, xor and cmp all write every arithmetic flag; only cmp's reach the jne.
    const src = blockSource(decodeAll([...ADD_RAX_1, ...SHR_RBX_3, ...XOR_RCX_RDX, ...CMP_RAX_RBX, ...JNE_0]))
    expect(flagUpdates(src)).toBe(1)
    expect(src).not.toContain('szp64')
  })

  it('keeps the update before an instruction that may fault', () => {
    const src = blockSource(decodeAll([...ADD_RAX_1, ...LOAD_RSI, ...CMP_RAX_RBX, ...JNE_0]))
    expect(flagUpdates(src)).toBe(2)
  })

  it('keeps the update at the end of the block', () => {
    expect(flagUpdates(blockSource(decodeAll([...ADD_RAX_1, ...XOR_RCX_RDX])))).toBe(1)
    expect(flagUpdates(blockSource(decodeAll([...XOR_RCX_RDX])))).toBe(1)
  })

  it.each(MODES)("a fault after a flag writer sees that writer's flags (%s)", (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    // mov eax, -1; add eax, 1 (CF=1, ZF=1); load from an unmapped page; cmp (would clear CF and ZF); jne
    r.load(USER_CODE, [0xb8, ...le32(-1), 0x83, 0xc0, 0x01, ...LOAD_RSI, ...CMP_RAX_RBX, ...JNE_0], {
      user: true,
    })
    r.enterUser(0, USER_CODE)
    r.cpu.setReg(3, 5n) // rbx
    const events: number[] = []
    r.machine.trapHandler = (_c, ev) => {
      events.push(ev.vector)
      return 'stop'
    }
    r.machine.run({ maxInstructions: 100 })
    expect(events[0]).toBe(Vector.PF)
    expect(r.cpu.rip).toBe(USER_CODE + 8)
    expect(r.cpu.rflags & 0x41).toBe(0x41) // CF and ZF from the add
  })
})

describe('block functions shared across machines', () => {
  it('the same code at the same address gets the same function; other code or another address does not', () => {
    const code = [...ADD_RAX_1, ...CMP_RAX_RBX, ...JNE_0]
    const a = compileBlock(decodeAll(code))
    expect(a).not.toBeNull()
    expect(compileBlock(decodeAll(code))).toBe(a)
    expect(compileBlock(decodeAll([...SHR_RBX_3, ...CMP_RAX_RBX, ...JNE_0]))).not.toBe(a)
    // jne's target is a constant in the source: the same bytes elsewhere are another function.
    const moved = decodeAll(code).map((i) =>
      decode(new Uint8Array(code), i.address + 0x1000, i.address - USER_CODE),
    )
    expect(compileBlock(moved)).not.toBe(a)
  })

  it('two machines running one program in turn give the same results as the interpreter', () => {
    // A loop summing 1..1000 into rax, then hlt: the second machine runs the first one's compiled loop.
    const prog = [0x31, 0xc0, 0xb9, ...le32(1000), 0x48, 0x01, 0xc8, 0xff, 0xc9, 0x75, 0xf9, 0xf4]
    const run = (jitThreshold: number) => {
      const r = new Rig({ jitThreshold })
      r.load(USER_CODE, prog, { user: true })
      r.enterUser(0, USER_CODE)
      r.machine.trapHandler = () => 'stop'
      r.machine.run({ maxInstructions: 100_000 })
      return r.cpu.getReg(0)
    }
    const expected = run(Number.POSITIVE_INFINITY)
    expect(expected).toBe(500500n)
    expect(run(0)).toBe(expected)
    expect(run(0)).toBe(expected)
  })
})

describe('compiling from guest memory', () => {
  it.each(MODES)(
    'a hot block whose last instruction spans two pages runs the bytes of both frames (%s)',
    (_mode, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      // The loop body ends in `add rax, imm32` split 3 bytes / 3 bytes across the page boundary, then a loop back.
      const end = USER_CODE + 0x1000
      // Two frames that are not neighbours in physical memory.
      r.mapZeroed(USER_CODE, 0x1000, { user: true })
      r.mapZeroed(USER_CODE + 0x10000, 0x1000, { user: true })
      r.mapZeroed(end, 0x1000, { user: true })
      expect(r.phys(end)).not.toBe(r.phys(end - 1) + 1)
      const body = [0x48, 0xff, 0xc1, 0x48, 0x05, ...le32(0x10203)] // inc rcx; add rax, 0x10203
      const start = end - 6
      r.load(start, body, { user: true })
      // cmp rcx, 50; jne start; hlt
      r.load(end + 3, [0x48, 0x83, 0xf9, 0x32, 0x75, (start - (end + 9)) & 0xff, 0xf4], { user: true })
      r.enterUser(0, start)
      r.machine.trapHandler = () => 'stop'
      r.machine.run({ maxInstructions: 10_000 })
      expect(r.cpu.getReg(1)).toBe(50n)
      expect(r.cpu.getReg(0)).toBe(50n * 0x10203n)
    },
  )
})

describe('stack pushes and pops keep RSP in halves', () => {
  it.each(MODES)('across a 4 GiB boundary, down and back up (%s)', (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    r.mapZeroed(0xfffff000, 0x2000, { user: true, writable: true })
    // push rax; push rbx; pop rcx; pop rdx; then a fault (hlt at CPL 3) stops the run.
    r.load(USER_CODE, [0x50, 0x53, 0x59, 0x5a, 0xf4], { user: true })
    r.enterUser(0, USER_CODE, 0x1_0000_0008)
    r.cpu.setReg(0, 0x1122334455667788n)
    r.cpu.setReg(3, 0x99aabbccddeeff00n)
    r.machine.trapHandler = () => 'stop'
    r.machine.run({ maxInstructions: 100 })
    expect(r.readQword(0x1_0000_0000)).toBe(0x1122334455667788n)
    expect(r.readQword(0xffff_fff8)).toBe(0x99aabbccddeeff00n)
    expect(r.cpu.getReg(1)).toBe(0x99aabbccddeeff00n)
    expect(r.cpu.getReg(2)).toBe(0x1122334455667788n)
    expect(r.cpu.getReg(4)).toBe(0x1_0000_0008n)
  })

  it.each(MODES)(
    'a push or pop at a non-canonical RSP raises #SS and changes nothing (%s)',
    (_mode, jitThreshold) => {
      for (const [code, rsp] of [
        [[0x50], 0x8000_0000_0008n], // push: RSP - 8 = 2^47, not canonical
        [[0x58], 0x8000_0000_0000n], // pop from 2^47
        [[0x58], 0xffff_7fff_ffff_fff8n], // pop just below the canonical upper half
      ] as const) {
        const r = new Rig({ jitThreshold })
        r.load(USER_CODE, code, { user: true })
        r.enterUser(0, USER_CODE)
        r.cpu.setReg(4, rsp)
        const events: number[] = []
        r.machine.trapHandler = (_c, ev) => {
          events.push(ev.vector)
          return 'stop'
        }
        r.machine.run({ maxInstructions: 10 })
        expect(events[0]).toBe(Vector.SS)
        expect(r.cpu.getReg(4)).toBe(rsp)
        expect(r.cpu.rip).toBe(USER_CODE)
      }
    },
  )
})

describe('blocks at the end of a page', () => {
  it.each(MODES)(
    'a taken conditional branch whose fall-through starts the next page goes to its target (%s)',
    (_mode, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      r.mapZeroed(USER_CODE, 0x2000, { user: true })
      // Ending exactly at the page end: mov ecx, 5; dec ecx; jne +0x20 (6-byte form, fall-through = next page).
      const end = USER_CODE + 0x1000
      const jne = [0x0f, 0x85, ...le32(0x20)]
      r.load(end - 13, [0xb9, ...le32(5), 0xff, 0xc9, ...jne], { user: true })
      // Fall-through: mov eax, 1; then a fault (hlt at CPL 3). Target: mov eax, 2; same.
      r.load(end, [0xb8, ...le32(1), 0xf4], { user: true })
      r.load(end + 0x20, [0xb8, ...le32(2), 0xf4], { user: true })
      r.enterUser(0, end - 13)
      r.machine.trapHandler = () => 'stop'
      r.machine.run({ maxInstructions: 100 })
      expect(r.cpu.getReg(0)).toBe(2n)
    },
  )
})

describe('ret inside blocks, and loops through a call', () => {
  // loop: call f; dec ecx; jne loop; hlt        f: add rax, 3; ret
  // After the first return, the block at `dec ecx` goes on past the backward jne (to code
  // before it) through the call into f and its ret, which lands on the block's start: one
  // block function loops the whole body.
  const F = USER_CODE + 0x40
  const LOOP = [
    0xe8,
    ...le32(F - (USER_CODE + 5)), // call f
    0xff,
    0xc9, // dec ecx
    0x75,
    0xf7, // jne loop (back 9)
    0xf4, // hlt
  ]
  const FN = [0x48, 0x83, 0xc0, 0x03, 0xc3] // add rax, 3; ret

  function run(jitThreshold: number, budget: number, n = 1000) {
    const r = new Rig({ jitThreshold })
    r.mapZeroed(USER_CODE, 0x1000, { user: true })
    r.load(USER_CODE, LOOP, { user: true })
    r.load(F, FN, { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.setReg(1, BigInt(n))
    r.machine.trapHandler = () => 'stop'
    const res = r.machine.run({ maxInstructions: budget })
    return {
      reason: res.reason,
      instructions: res.instructions,
      rax: r.cpu.getReg(0),
      rcx: r.cpu.getReg(1),
      rsp: r.cpu.getReg(4),
      rip: r.cpu.rip,
    }
  }

  it('the loop gives the interpreter’s registers and instruction count, whole and cut anywhere', () => {
    const whole = run(0, 1e9)
    expect(whole.rax).toBe(3000n)
    expect(whole.rcx).toBe(0n)
    expect(whole).toEqual(run(Number.POSITIVE_INFINITY, 1e9))
    for (const budget of [1, 2, 3, 4, 5, 6, 7, 97, 1003, 2501, 4999])
      expect(run(0, budget), `budget ${budget}`).toEqual(run(Number.POSITIVE_INFINITY, budget))
  })

  it('the looping block is compiled as a loop', () => {
    // The block from dec ecx: dec, jne (taken: back before the block), call, add, ret.
    const r = new Rig({ jitThreshold: 0 })
    r.mapZeroed(USER_CODE, 0x1000, { user: true })
    r.load(USER_CODE, LOOP, { user: true })
    r.load(F, FN, { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.setReg(1, 10n)
    r.machine.trapHandler = () => 'stop'
    r.machine.run({ maxInstructions: 1e6 })
    expect(r.cpu.getReg(0)).toBe(30n)
    const block = r.machine.codeCache.lookup(r.phys(USER_CODE + 5), USER_CODE + 5)
    expect(block?.ips).toEqual([USER_CODE + 5, USER_CODE + 7, USER_CODE, F, F + 4, F + 5])
    expect(block?.jit?.toString()).toContain('for(;;)')
  })

  it.each(MODES)(
    'ret to a non-canonical address raises #GP with RSP and RIP unchanged (%s)',
    (_mode, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      // xor eax, eax; ret 16
      r.load(USER_CODE, [0x31, 0xc0, 0xc2, 0x10, 0x00], { user: true })
      r.enterUser(0, USER_CODE)
      const sp = r.cpu.getReg(4) - 8n
      r.cpu.setReg(4, sp)
      r.writeQword(Number(sp), 0x8000_0000_0000)
      const events: number[] = []
      r.machine.trapHandler = (_c, ev) => {
        events.push(ev.vector)
        return 'stop'
      }
      r.machine.run({ maxInstructions: 10 })
      expect(events).toEqual([Vector.GP])
      expect(r.cpu.getReg(4)).toBe(sp)
      expect(r.cpu.rip).toBe(USER_CODE + 2)
    },
  )

  it.each(MODES)('ret imm16 releases its argument bytes (%s)', (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    // call f; hlt; f: ret 24
    r.load(USER_CODE, [0xe8, ...le32(1), 0xf4, 0xc2, 0x18, 0x00], { user: true })
    r.enterUser(0, USER_CODE)
    const sp = r.cpu.getReg(4)
    r.machine.trapHandler = () => 'stop'
    r.machine.run({ maxInstructions: 10 })
    expect(r.cpu.getReg(4)).toBe(sp + 24n)
    expect(r.cpu.rip).toBe(USER_CODE + 5)
  })
})

describe('blocks past a backward branch', () => {
  it('a backward branch ends the block when the code it goes back to does not come back to the block', () => {
    // top: add rax, 1; start: dec ecx; jne top; hlt   (entered at `start`)
    // From `start`, going on past jne would duplicate the loop (top ... jne top), which never
    // returns to `start`: the block is cut at the jne, as without going on.
    const r = new Rig({ jitThreshold: 0 })
    r.mapZeroed(USER_CODE, 0x1000, { user: true })
    r.load(USER_CODE, [0x48, 0x83, 0xc0, 0x01, 0xff, 0xc9, 0x75, 0xf8, 0xf4], { user: true })
    r.enterUser(0, USER_CODE + 4)
    r.cpu.setReg(1, 5n)
    r.machine.trapHandler = () => 'stop'
    r.machine.run({ maxInstructions: 1000 })
    expect(r.cpu.getReg(0)).toBe(4n)
    const block = r.machine.codeCache.lookup(r.phys(USER_CODE + 4), USER_CODE + 4)
    expect(block?.ips).toEqual([USER_CODE + 4, USER_CODE + 6, USER_CODE + 8])
    expect(block?.lastBranch).toBe(true)
  })
})

describe('registers held in locals', () => {
  it.each(MODES)(
    'a closure that moves registers and then faults (rep movsb onto an unmapped page) leaves them moved (%s)',
    (_mode, jitThreshold) => {
      const SRC = USER_CODE + 0x10000
      const DST = USER_CODE + 0x20000
      const r = new Rig({ jitThreshold })
      r.mapZeroed(SRC, 0x2000, { user: true })
      r.mapZeroed(DST, 0x1000, { user: true, writable: true }) // DST + 0x1000 is not mapped
      // mov esi, SRC; mov edi, DST + 0xff0; mov ecx, 0x40; rep movsb; hlt
      r.load(
        USER_CODE,
        [0xbe, ...le32(SRC), 0xbf, ...le32(DST + 0xff0), 0xb9, ...le32(0x40), 0xf3, 0xa4, 0xf4],
        { user: true },
      )
      r.enterUser(0, USER_CODE)
      const events: number[] = []
      r.machine.trapHandler = (_c, ev) => {
        events.push(ev.vector)
        return 'stop'
      }
      r.machine.run({ maxInstructions: 100 })
      expect(events).toEqual([Vector.PF])
      // 16 bytes were copied before the fault: the registers say so, as the SDM requires.
      expect(r.cpu.getReg(1)).toBe(0x30n)
      expect(r.cpu.getReg(6)).toBe(BigInt(SRC + 0x10))
      expect(r.cpu.getReg(7)).toBe(BigInt(DST + 0x1000))
      expect(r.cpu.rip).toBe(USER_CODE + 15)
    },
  )
})
