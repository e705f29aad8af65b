// The block compiler: flag liveness (a flag update that a later instruction
// overwrites unobserved is left out, and the flags are still exact wherever
// they can be seen: a fault mid-block, the block's end), and block functions
// shared by source across machines.

import { describe, expect, it } from 'vitest'
import { decode } from '../src/decoder/decode.js'
import type { Instruction } from '../src/decoder/instruction.js'
import { Vector } from '../src/index.js'
import { blockSource, compileBlock } from '../src/jit/block-compiler.js'
import { template } from '../src/jit/templates.js'
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

// ---------------------------------------------------------------------------------------------
// Looping blocks: memory access sites, flags in locals, the SSE templates. Each program runs in
// both modes and must leave the same state (registers, flags, XMM, MXCSR, memory, instruction
// count, the stopping event); the compiled mode must also have compiled the loop as designed.

const DATA = 0x600000

/** Everything a run can leave behind that these programs touch. */
function snapshot(r: Rig, events: { vector: number; cr2: number }[], dataPages: number) {
  const c = r.cpu
  const data: number[] = []
  for (let a = DATA; a < DATA + dataPages * 4096; a += 8) data.push(Number(r.readQword(a) & 0xffffffffn))
  return {
    regs: Array.from({ length: 16 }, (_, k) => c.getReg(k)),
    rip: c.rip,
    rflags: c.rflags,
    xmm: [...c.xmm],
    mxcsr: c.mxcsr,
    instructions: c.instructions,
    events,
    data,
  }
}

interface LoopRun {
  code: number[]
  setup?: (r: Rig) => void
  dataPages?: number
  /** Data pages left unmapped after the first `mapped` ones (to fault on). */
  mapped?: number
  writableCode?: boolean
  maxInstructions?: number
}

function runLoop(p: LoopRun, jitThreshold: number) {
  const r = new Rig({ jitThreshold })
  const pages = p.dataPages ?? 4
  r.load(USER_CODE, p.code, { user: true, writable: p.writableCode ?? false })
  r.mapZeroed(DATA, (p.mapped ?? pages) * 4096, { user: true, writable: true })
  // Deterministic data: a xorshift sequence of small positive doubles and bytes.
  let s = 0x9e3779b9
  for (let a = DATA; a < DATA + (p.mapped ?? pages) * 4096; a += 8) {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    const v = 1 + (s >>> 0) / 2 ** 32
    const b = new DataView(new Float64Array([v]).buffer)
    r.writeQword(a, Number(BigInt.asIntN(64, b.getBigUint64(0, true))))
  }
  r.enterUser(0, USER_CODE)
  p.setup?.(r)
  const events: { vector: number; cr2: number }[] = []
  r.machine.trapHandler = (c, ev) => {
    events.push({ vector: ev.vector, cr2: c.cr2 })
    return 'stop'
  }
  r.machine.run({ maxInstructions: p.maxInstructions ?? 1_000_000 })
  return { r, state: snapshot(r, events, p.mapped ?? pages) }
}

/** Runs a program in both modes: the compiled run's state, after checking it equals the interpreter's. */
function bothModes(p: LoopRun) {
  const interpreted = runLoop(p, Number.POSITIVE_INFINITY).state
  const compiled = runLoop(p, 0).state
  expect(compiled).toEqual(interpreted)
  return compiled
}

/** The looping block compiled from a program's first instructions (up to its backward branch). */
function loopSource(code: number[], count: number): string {
  const insns = decodeAll(code).slice(0, count)
  return blockSource(insns)
}

// movzx edx, byte [rcx+DATA]; add rax, rdx; movzx edx, word [rcx+DATA+3]; add rax, rdx;
// add eax, [rcx+DATA+1]; mov rdx, [rcx+DATA]; xor rax, rdx; mov [rcx+DATA+0x2000], rax;
// mov [rcx+DATA+0x2004], eax; mov [rcx+DATA+0x2001], al; add rcx, 7; cmp rcx, LIMIT; jb start; hlt
function accessLoop(limit: number): number[] {
  return [
    ...[0x0f, 0xb6, 0x91, ...le32(DATA)],
    ...[0x48, 0x01, 0xd0],
    ...[0x0f, 0xb7, 0x91, ...le32(DATA + 3)],
    ...[0x48, 0x01, 0xd0],
    ...[0x03, 0x81, ...le32(DATA + 1)],
    ...[0x48, 0x8b, 0x91, ...le32(DATA)],
    ...[0x48, 0x31, 0xd0],
    ...[0x48, 0x89, 0x81, ...le32(DATA + 0x2000)],
    ...[0x89, 0x81, ...le32(DATA + 0x2004)],
    ...[0x88, 0x81, ...le32(DATA + 0x2001)],
    ...[0x48, 0x83, 0xc1, 0x07],
    ...[0x48, 0x81, 0xf9, ...le32(limit)],
    ...[0x72, 0xbc],
    0xf4,
  ]
}

describe('memory access sites in looping blocks', () => {
  it('a loop reading and writing 1, 2, 4 and 8 bytes across pages, page-crossing ones included, matches the interpreter', () => {
    const src = loopSource(accessLoop(0x1ff0), 13)
    // Seven sites (four loads, three stores), each with its cached page in locals; the hit path is
    // a typed-array access.
    expect(src.match(/G\d+===T\.gen/g)?.length).toBe(7)
    expect(src).toContain('V.getInt32(p,true)')
    expect(src).toContain('M[p]=')
    const s = bothModes({ code: accessLoop(0x1ff0) })
    expect(s.events).toEqual([{ vector: Vector.GP, cr2: 0 }]) // hlt at CPL 3
    expect(s.instructions).toBe(Math.ceil(0x1ff0 / 7) * 13)
    // The stores landed (the last iteration's qword at DATA+0x2000+rcx).
    expect(s.data.slice(0x400).some((v) => v !== 0)).toBe(true)
  })

  it('a loop running into an unmapped page faults at the same instruction, with the same state', () => {
    // Only the first two pages are mapped: the reads run off the second one.
    const s = bothModes({ code: accessLoop(0x3000), dataPages: 4, mapped: 2 })
    expect(s.events.length).toBe(1)
    expect(s.events[0].vector).toBe(Vector.PF)
  })

  it('stores to a page holding the loop itself take the slow path and change the code the loop runs', () => {
    // add rax, 1; mov [rip+imm8 of that add], cl; inc ecx; cmp ecx, 50; jne start; hlt
    const code = [
      0x48, 0x83, 0xc0, 0x01, 0x88, 0x0d, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xc1, 0x83, 0xf9, 0x32, 0x75, 0xef,
      0xf4,
    ]
    const s = bothModes({ code, writableCode: true })
    // Iteration k adds the byte iteration k-1 wrote (k-1), the first one 1.
    expect(s.regs[0]).toBe(1177n)
  })
})

describe('flags in locals in looping blocks', () => {
  // add rax, [rsi]; shl rbx, 1; movzx edx, byte [rdi]; add rsi, 16; add rdi, 256; jmp start
  const SHIFT_THEN_FAULT = [
    0x48, 0x03, 0x06, 0x48, 0xd1, 0xe3, 0x0f, 0xb6, 0x17, 0x48, 0x83, 0xc6, 0x10, 0x48, 0x81, 0xc7, 0x00,
    0x01, 0x00, 0x00, 0xeb, 0xea,
  ]

  it('a fault after a shift sees the shift’s flags, made from the deferred form', () => {
    const src = loopSource(SHIFT_THEN_FAULT, 6)
    // The shift's flags are recorded in locals (a pseudo kind), not computed every iteration.
    expect(src).toContain('Ffop=-1')
    expect(src).not.toContain('szp64(v')
    const init = 0xb5a5_a5a5_5a5a_1234n
    const s = bothModes({
      code: SHIFT_THEN_FAULT,
      mapped: 1,
      dataPages: 2,
      setup: (r) => {
        r.cpu.setReg(6, BigInt(DATA)) // rsi
        r.cpu.setReg(7, BigInt(DATA)) // rdi: runs off the mapped page after 16 iterations
        r.cpu.setReg(3, init)
      },
    })
    expect(s.events[0].vector).toBe(Vector.PF)
    // 17 shifts: the last one moved bit 47 of the initial value into CF.
    const rbx = BigInt.asUintN(64, init << 17n)
    expect(s.regs[3]).toBe(rbx)
    expect(s.rflags & 1).toBe(Number((init >> 47n) & 1n))
    expect((s.rflags >> 6) & 1).toBe(rbx === 0n ? 1 : 0) // ZF
    expect((s.rflags >> 7) & 1).toBe(Number(rbx >> 63n)) // SF
  })

  it('imul’s deferred flags reach a jo side exit, a shift’s CF reaches adc, dec keeps CF', () => {
    // imul eax, ebx; jo out; shr rdx, 1; adc rcx, 0; add ebx, 3; dec esi; jne start; out: hlt
    const code = [
      0x0f, 0xaf, 0xc3, 0x70, 0x0e, 0x48, 0xd1, 0xea, 0x48, 0x83, 0xd1, 0x00, 0x83, 0xc3, 0x03, 0xff, 0xce,
      0x75, 0xed, 0xf4,
    ]
    for (const [eax, ebx] of [
      [1, 3],
      [7, 1],
      [0x1234, 0x10001],
    ]) {
      const s = bothModes({
        code,
        setup: (r) => {
          r.cpu.setReg(0, BigInt(eax))
          r.cpu.setReg(3, BigInt(ebx))
          r.cpu.setReg(2, 0xdead_beef_f00d_cafen)
          r.cpu.setReg(6, 40n)
        },
      })
      expect(s.events.map((e) => e.vector)).toEqual([Vector.GP])
    }
  })
})

describe('SSE templates in a looping block', () => {
  // movapd xmm1,[rsi]; mulpd xmm1,xmm2; addpd xmm0,xmm1; addsd xmm3,[rsi+8]; mulpd xmm4,[rsi];
  // sqrtsd xmm5,[rsi]; cvtsd2ss xmm6,xmm5; movss [rdi],xmm6; movss xmm7,[rdi]; mulss xmm7,[rsi+4];
  // addps xmm8,xmm7; cvttsd2si rax,xmm5; add rbx,rax; cvtsi2sd xmm5,rbx; maxsd xmm3,[rsi];
  // minsd xmm9,[rsi+8]; unpcklpd xmm1,[rsi]; unpckhpd xmm10,xmm1; shufps xmm1,xmm1,0x1b;
  // movq rdx,xmm1; movq xmm11,rdx; movd xmm12,edx; movq xmm13,xmm11; movq [rdi+8],xmm13;
  // divsd xmm3,xmm2; movapd [rdi+16],xmm0; add rsi,16; add rdi,32; dec ecx; jne start; hlt
  const SSE_LOOP = [
    0x66, 0x0f, 0x28, 0x0e, 0x66, 0x0f, 0x59, 0xca, 0x66, 0x0f, 0x58, 0xc1, 0xf2, 0x0f, 0x58, 0x5e, 0x08,
    0x66, 0x0f, 0x59, 0x26, 0xf2, 0x0f, 0x51, 0x2e, 0xf2, 0x0f, 0x5a, 0xf5, 0xf3, 0x0f, 0x11, 0x37, 0xf3,
    0x0f, 0x10, 0x3f, 0xf3, 0x0f, 0x59, 0x7e, 0x04, 0x44, 0x0f, 0x58, 0xc7, 0xf2, 0x48, 0x0f, 0x2c, 0xc5,
    0x48, 0x01, 0xc3, 0xf2, 0x48, 0x0f, 0x2a, 0xeb, 0xf2, 0x0f, 0x5f, 0x1e, 0xf2, 0x44, 0x0f, 0x5d, 0x4e,
    0x08, 0x66, 0x0f, 0x14, 0x0e, 0x66, 0x44, 0x0f, 0x15, 0xd1, 0x0f, 0xc6, 0xc9, 0x1b, 0x66, 0x48, 0x0f,
    0x7e, 0xca, 0x66, 0x4c, 0x0f, 0x6e, 0xda, 0x66, 0x44, 0x0f, 0x6e, 0xe2, 0xf3, 0x45, 0x0f, 0x7e, 0xeb,
    0x66, 0x44, 0x0f, 0xd6, 0x6f, 0x08, 0xf2, 0x0f, 0x5e, 0xda, 0x66, 0x0f, 0x29, 0x47, 0x10, 0x48, 0x83,
    0xc6, 0x10, 0x48, 0x83, 0xc7, 0x20, 0xff, 0xc9, 0x0f, 0x85, 0x7b, 0xff, 0xff, 0xff, 0xf4,
  ]
  const setup = (rsi: number, mxcsr: number) => (r: Rig) => {
    r.cpu.setReg(6, BigInt(DATA + rsi))
    r.cpu.setReg(7, BigInt(DATA + 0x2000))
    r.cpu.setReg(1, 100n)
    r.cpu.mxcsr = mxcsr
    // xmm2 = (1.5, -0.75); the others start from zero.
    r.cpu.xmmD[4] = 1.5
    r.cpu.xmmD[5] = -0.75
  }

  it('every instruction of the loop is inline (closures only as slow paths)', () => {
    expect(
      decodeAll(SSE_LOOP)
        .slice(0, 30)
        .every((insn) => template(insn) !== null),
    ).toBe(true)
    expect(loopSource(SSE_LOOP, 30)).toContain('for(;;)')
  })

  it.each([
    ['PE clear (the first inexact result takes the full path)', 0x1f80],
    ['PE set: the fast paths', 0x1fa0],
    ['rounding down: the closures’ path throughout', 0x3fa0],
    ['DAZ and FTZ', 0x9fc0],
  ])('matches the interpreter bit for bit: %s', (_what, mxcsr) => {
    const s = bothModes({ code: SSE_LOOP, setup: setup(0, mxcsr) })
    expect(s.events.map((e) => e.vector)).toEqual([Vector.GP])
    expect(s.instructions).toBe(100 * 30)
  })

  it('a misaligned movapd raises #GP at the same point in both modes', () => {
    const s = bothModes({ code: SSE_LOOP, setup: setup(8, 0x1fa0) })
    expect(s.events).toEqual([{ vector: Vector.GP, cr2: 0 }])
    expect(s.rip).toBe(USER_CODE)
    expect(s.instructions).toBe(0)
  })
})
