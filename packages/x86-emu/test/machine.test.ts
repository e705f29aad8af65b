import { describe, expect, it } from 'vitest'
import {
  AddressSpace,
  CF,
  DR6_BS,
  IF,
  Machine,
  MSR_FMASK,
  MSR_LSTAR,
  MSR_STAR,
  RF,
  TF,
  type TrapEvent,
  updateDebugState,
  Vector,
  writeMsr,
} from '../src/index.js'
import {
  IDT_ADDR,
  KERNEL_BASE,
  KSTACK_TOP,
  le32,
  Rig,
  USER_CODE,
  USER_DATA,
  USER_STACK_TOP,
} from './support/rig.js'

const HLT = 0xf4
const NOP = 0x90
const INT3 = 0xcc
const IRETQ = [0x48, 0xcf]

/** Run a rig with a trap handler that records events and stops on the first. */
function runCollect(r: Rig, max = 10_000): { events: TrapEvent[]; reason: string } {
  const events: TrapEvent[] = []
  r.machine.trapHandler = (_c, ev) => {
    events.push(ev)
    return 'stop'
  }
  const res = r.machine.run({ maxInstructions: max })
  return { events, reason: res.reason }
}

describe('paging and #PF', () => {
  it('reports a not-present user read with CR2 and the U bit', () => {
    const r = new Rig()
    // mov eax, [0x900000]  (8b 04 25 disp32)
    r.load(USER_CODE, [0x8b, 0x04, 0x25, ...le32(0x900000)], { user: true })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.PF, errorCode: 0b100, address: 0x900000, kind: 'fault' })
    expect(r.cpu.cr2).toBe(0x900000)
    expect(r.cpu.rip).toBe(USER_CODE)
  })

  it('user access to a supervisor page is a protection fault (P|U), write adds W', () => {
    const r = new Rig()
    r.mapZeroed(0x900000, 4096, { writable: true }) // supervisor page
    r.load(USER_CODE, [0x89, 0x04, 0x25, ...le32(0x900000)], { user: true }) // mov [0x900000], eax
    r.enterUser(0, USER_CODE)
    expect(runCollect(r).events[0]).toMatchObject({ vector: Vector.PF, errorCode: 0b111 })
  })

  it('a write to a read-only page faults in user mode and, with CR0.WP, in kernel mode', () => {
    const r = new Rig()
    r.mapZeroed(0x900000, 4096, { user: true, writable: false })
    const code = [0x89, 0x04, 0x25, ...le32(0x900000)]
    r.load(USER_CODE, code, { user: true })
    r.enterUser(0, USER_CODE)
    expect(runCollect(r).events[0]).toMatchObject({ vector: Vector.PF, errorCode: 0b111 })
    const k = new Rig()
    k.mapZeroed(0x900000, 4096, { writable: false })
    k.load(KERNEL_BASE, code, {})
    k.enterKernel(0, KERNEL_BASE)
    expect(runCollect(k).events[0]).toMatchObject({ vector: Vector.PF, errorCode: 0b011 })
  })

  it('fetching from a no-execute page faults with the I bit', () => {
    const r = new Rig()
    r.load(USER_DATA, [NOP], { user: true, writable: true, nx: true })
    r.enterUser(0, USER_DATA)
    expect(runCollect(r).events[0]).toMatchObject({
      vector: Vector.PF,
      errorCode: 0b10101,
      address: USER_DATA,
    })
  })

  it('sets accessed and dirty bits in the page table entry', () => {
    const r = new Rig()
    r.mapZeroed(0x900000, 4096, { user: true, writable: true })
    r.load(USER_CODE, [0x89, 0x04, 0x25, ...le32(0x900000), HLT], { user: true })
    r.enterUser(0, USER_CODE)
    runCollect(r)
    const flags = r.space.lookup(0x900000)!.flags
    expect(flags.accessed).toBe(true)
    expect(flags.dirty).toBe(true)
  })
})

describe('precise exceptions', () => {
  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])('a faulting push changes neither RSP nor memory (%s)', (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    r.load(USER_CODE, [0x50], { user: true }) // push rax
    r.enterUser(0, USER_CODE, 0x900000) // stack pointer into unmapped memory
    const { events } = runCollect(r)
    expect(events[0].vector).toBe(Vector.PF)
    expect(r.cpu.getLinear(4)).toBe(0x900000)
    expect(r.cpu.rip).toBe(USER_CODE)
  })

  it('a read-modify-write on a read-only page leaves flags and memory untouched', () => {
    const r = new Rig()
    r.mapZeroed(0x900000, 4096, { user: true, writable: false })
    r.machine.memory.write8(r.phys(0x900000), 0x7f)
    // stc; mov ebx, 0x900000; add byte [rbx], 1   (00 /0 with imm: 80 03 01)
    r.load(USER_CODE, [0xf9, 0xbb, ...le32(0x900000), 0x80, 0x03, 0x01], { user: true })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.PF, errorCode: 0b111 })
    expect(r.peek(0x900000)).toBe(0x7f)
    expect(r.cpu.rflags & CF).toBe(CF) // carry from stc, not from the add
    expect(r.cpu.rip).toBe(USER_CODE + 6)
  })

  it('#DE leaves the dividend registers unchanged', () => {
    const r = new Rig()
    // mov eax, 7; xor ecx, ecx; div ecx
    r.load(USER_CODE, [0xb8, ...le32(7), 0x31, 0xc9, 0xf7, 0xf1], { user: true })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.DE, kind: 'fault' })
    expect(r.cpu.getReg(0)).toBe(7n)
    expect(r.cpu.rip).toBe(USER_CODE + 7)
  })
})

describe('traps', () => {
  it('int3 traps with RIP after it', () => {
    const r = new Rig()
    r.load(USER_CODE, [NOP, INT3, NOP], { user: true })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.BP, kind: 'trap', software: true })
    expect(r.cpu.rip).toBe(USER_CODE + 2)
  })

  it('with TF set, #DB arrives after exactly one instruction each time', () => {
    const r = new Rig()
    // inc eax; inc eax; inc eax
    r.load(USER_CODE, [0xff, 0xc0, 0xff, 0xc0, 0xff, 0xc0, HLT], { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.rflags = IF | TF
    const steps: number[] = []
    r.machine.trapHandler = (c, ev) => {
      if (ev.vector !== Vector.DB) return 'stop'
      expect(c.dr6 & DR6_BS).toBe(DR6_BS)
      steps.push(c.rip - USER_CODE)
      return steps.length === 3 ? 'stop' : 'handled'
    }
    r.machine.run({ maxInstructions: 100 })
    expect(steps).toEqual([2, 4, 6])
    expect(r.cpu.getReg(0)).toBe(3n)
  })

  it('single-step through the guest IDT: the handler runs with TF clear and iretq resumes stepping', () => {
    const r = new Rig()
    const handler = KERNEL_BASE + 0x1000
    // handler: inc qword [counter]; iretq
    const counter = KERNEL_BASE + 0x2000
    r.load(handler, [0x48, 0xff, 0x04, 0x25, ...le32(counter | 0), ...IRETQ], {})
    r.mapZeroed(counter, 8, { writable: true, nx: true })
    r.setGate(Vector.DB, handler)
    r.load(USER_CODE, [NOP, NOP, NOP, NOP, 0xeb, 0xfe], { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.rflags = IF | TF
    r.machine.run({ maxInstructions: 4 + 4 * 2 })
    expect(r.readQword(counter)).toBe(4n)
    expect(r.cpu.rip).toBe(USER_CODE + 4)
  })

  it('a timer interrupt goes through the IDT on the kernel stack and iretq returns to user mode', () => {
    const r = new Rig({ timer: { period: 1000, vector: 32 } })
    const handler = KERNEL_BASE + 0x1000
    const counter = KERNEL_BASE + 0x2000
    r.load(handler, [0x48, 0xff, 0x04, 0x25, ...le32(counter | 0), ...IRETQ], {})
    r.mapZeroed(counter, 8, { writable: true, nx: true })
    r.setGate(32, handler)
    r.load(USER_CODE, [0xeb, 0xfe], { user: true }) // jmp $
    r.enterUser(0, USER_CODE)
    let sawKernelStack = false
    const before = r.machine.cpus[0]
    r.machine.trapHandler = (c) => {
      sawKernelStack = c.getLinear(4) <= KSTACK_TOP && c.getLinear(4) > KSTACK_TOP - 0x10000
      return 'deliver'
    }
    r.machine.run({ maxInstructions: 10_500 })
    expect(r.readQword(counter)).toBeGreaterThanOrEqual(9n)
    expect(before.cpl).toBe(3)
    expect(sawKernelStack).toBe(false) // delivery happens from user mode: RSP is still the user stack when offered
    // The frame the CPU pushed on the kernel stack: RIP, CS, RFLAGS, RSP, SS.
    expect(r.readQword(KSTACK_TOP - 40)).toBe(BigInt(USER_CODE))
    expect(r.readQword(KSTACK_TOP - 16)).toBe(BigInt(USER_STACK_TOP))
  })

  it('a taken branch to the next page goes there even when the fall-through would cross into a page that is not present', () => {
    for (const jitThreshold of [Number.POSITIVE_INFINITY, 1]) {
      const r = new Rig({ jitThreshold })
      const end = USER_CODE + 4096
      // xor eax, eax (ZF=1); jz +0x10 (to the next page); lea rdi, [rip+0] (7 bytes: crosses into it).
      // The next page is not present: the fault must be the branch target's, not the fall-through's.
      // biome-ignore format: one instruction per line
      r.load(end - 8, [
        0x31, 0xc0,
        0x74, 0x10,
        0x48, 0x8d, 0x3d,
        0x00,
      ], { user: true })
      r.enterUser(0, end - 8)
      const { events } = runCollect(r)
      expect(events[0]).toMatchObject({ vector: Vector.PF, address: end + 0x0c })
      expect(r.cpu.rip).toBe(end + 0x0c)
    }
  })

  it('a timer interrupt lands on the instruction it falls due on, however the code splits into blocks', () => {
    const takenAt = (jitThreshold: number) => {
      const r = new Rig({ timer: { period: 1000, vector: 32 }, jitThreshold })
      const handler = KERNEL_BASE + 0x1000
      r.load(handler, [...IRETQ], {})
      r.setGate(32, handler)
      // loop: inc ecx; test ecx, 1; jz skip; inc edx; skip: add eax, ecx; jmp loop (one superblock with a side exit)
      // biome-ignore format: one instruction per line
      r.load(USER_CODE, [
        0xff, 0xc1,
        0xf7, 0xc1, 0x01, 0x00, 0x00, 0x00,
        0x74, 0x02,
        0xff, 0xc2,
        0x01, 0xc8,
        0xeb, 0xf0,
      ], { user: true })
      r.enterUser(0, USER_CODE)
      const at: number[] = []
      r.machine.trapHandler = (c, ev) => {
        if (ev.kind === 'interrupt') at.push(c.instructions)
        return 'deliver'
      }
      r.machine.run({ maxInstructions: 10_500 })
      return at
    }
    const interpreted = takenAt(Number.POSITIVE_INFINITY)
    // One cycle per instruction: the first tick is due after exactly 1000 instructions.
    expect(interpreted[0]).toBe(1000)
    expect(interpreted.length).toBeGreaterThanOrEqual(9)
    expect(takenAt(1)).toEqual(interpreted)
  })
})

describe('privilege', () => {
  const privileged: [string, number[]][] = [
    ['hlt', [HLT]],
    ['cli', [0xfa]],
    ['mov rax, cr3', [0x0f, 0x20, 0xd8]],
    ['wrmsr', [0x0f, 0x30]],
    ['swapgs', [0x0f, 0x01, 0xf8]],
    ['lidt', [0x0f, 0x01, 0x18]],
  ]
  for (const [name, bytes] of privileged) {
    it(`${name} at CPL 3 raises #GP(0)`, () => {
      const r = new Rig()
      r.load(USER_CODE, bytes, { user: true })
      r.enterUser(0, USER_CODE)
      r.cpu.setReg(0, USER_DATA)
      expect(runCollect(r).events[0]).toMatchObject({ vector: Vector.GP, errorCode: 0, kind: 'fault' })
    })
  }

  it('syscall enters the kernel at LSTAR and sysretq returns with RCX and R11', () => {
    const r = new Rig()
    const c = r.cpu
    writeMsr(c, MSR_STAR, (0x10n << 32n) | (0x1bn << 48n))
    writeMsr(c, MSR_LSTAR, BigInt.asUintN(64, BigInt(KERNEL_BASE)))
    writeMsr(c, MSR_FMASK, BigInt(IF | TF))
    // kernel: mov eax, 42; sysretq
    r.load(KERNEL_BASE, [0xb8, ...le32(42), 0x48, 0x0f, 0x07], {})
    // user: syscall; hlt (the hlt is privileged: it stops the run with #GP)
    r.load(USER_CODE, [0x0f, 0x05, HLT], { user: true })
    r.enterUser(0, USER_CODE)
    const seen: number[] = []
    r.machine.trapHandler = (cpu, ev) => {
      seen.push(ev.vector, cpu.cpl)
      return 'stop'
    }
    r.machine.run({ maxInstructions: 100 })
    expect(seen).toEqual([Vector.GP, 3])
    expect(c.getReg(0)).toBe(42n)
    expect(c.getLinear(1)).toBe(USER_CODE + 2)
    expect(c.r[22] & IF).toBe(IF)
    expect(c.cs).toBe(0x2b)
    expect(r.machine.counters[0].modeSwitches).toBe(2)
  })

  it('a single-stepped syscall takes no #DB on the kernel entry (FMASK clears TF); the next user instruction after sysretq traps', () => {
    const r = new Rig()
    const c = r.cpu
    writeMsr(c, MSR_STAR, (0x10n << 32n) | (0x1bn << 48n))
    writeMsr(c, MSR_LSTAR, BigInt.asUintN(64, BigInt(KERNEL_BASE)))
    writeMsr(c, MSR_FMASK, BigInt(IF | TF))
    // kernel: mov eax, 42; sysretq (r11 still holds the user flags, TF included)
    r.load(KERNEL_BASE, [0xb8, ...le32(42), 0x48, 0x0f, 0x07], {})
    // user: syscall; inc eax; inc eax
    r.load(USER_CODE, [0x0f, 0x05, 0xff, 0xc0, 0xff, 0xc0, HLT], { user: true })
    r.enterUser(0, USER_CODE)
    c.rflags = IF | TF
    const traps: { rip: number; cpl: number }[] = []
    r.machine.trapHandler = (cpu, ev) => {
      if (ev.vector !== Vector.DB) return 'stop'
      traps.push({ rip: cpu.rip, cpl: cpu.cpl })
      return 'handled'
    }
    r.machine.run({ maxInstructions: 5 })
    // No trap in ring 0; one after each user instruction past the syscall.
    expect(traps.slice(0, 2)).toEqual([
      { rip: USER_CODE + 4, cpl: 3 },
      { rip: USER_CODE + 6, cpl: 3 },
    ])
    expect(c.getReg(0)).toBe(44n)
  })
})

describe('debug registers', () => {
  it('an execution breakpoint faults before the instruction and RF lets it run on resume', () => {
    const r = new Rig()
    r.load(USER_CODE, [NOP, 0xff, 0xc0, HLT], { user: true })
    r.enterUser(0, USER_CODE)
    const c = r.cpu
    c.dr[0] = USER_CODE + 1
    c.dr7 = 0x401
    // updateDebugState runs on mov-to-dr; from the host we call it directly.
    let hits = 0
    r.machine.trapHandler = (cpu, ev) => {
      if (ev.vector === Vector.DB) {
        hits++
        expect(ev.kind).toBe('fault')
        expect(cpu.rip).toBe(USER_CODE + 1)
        expect(cpu.getReg(0)).toBe(0n)
        cpu.eflags |= RF
        return 'handled'
      }
      return 'stop'
    }
    updateDebugStateForTest(r)
    r.machine.run({ maxInstructions: 10 })
    expect(hits).toBe(1)
    expect(c.getReg(0)).toBe(1n)
  })

  it('a data write breakpoint traps after the write', () => {
    const r = new Rig()
    r.mapZeroed(USER_DATA, 4096, { user: true, writable: true, nx: true })
    // mov [USER_DATA+8], eax; nop
    r.load(USER_CODE, [0x89, 0x04, 0x25, ...le32(USER_DATA + 8), NOP, HLT], { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.setReg(0, 0x1234)
    r.cpu.dr[1] = USER_DATA + 8
    r.cpu.dr7 = 0x400 | (1 << 2) | (0b01 << 20) | (0b11 << 22) // L1, write, 4 bytes
    updateDebugStateForTest(r)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.DB, kind: 'trap' })
    expect(r.cpu.dr6 & 2).toBe(2)
    expect(r.cpu.rip).toBe(USER_CODE + 7)
    expect(r.peek(USER_DATA + 8)).toBe(0x34)
  })
})

describe('self-modifying code', () => {
  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])('a guest write to the next instruction takes effect (%s)', (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    // mov byte [rip+1], 0x40 (patches the following "inc eax" ModRM? no: patches next opcode byte)
    // c6 05 01 00 00 00 XX ; then at +7+1: target byte
    // Sequence: mov byte [rip+0], 0xc1 patches the ModRM of "ff c0" (inc eax) into "ff c1" (inc ecx).
    const code = [0xc6, 0x05, 0x01, 0x00, 0x00, 0x00, 0xc1, 0xff, 0xc0, HLT]
    r.load(USER_CODE, code, { user: true, writable: true })
    r.enterUser(0, USER_CODE)
    runCollect(r)
    expect(r.cpu.getReg(0)).toBe(0n)
    expect(r.cpu.getReg(1)).toBe(1n)
  })

  it('a host write (a probe) invalidates cached code on every vCPU', () => {
    const r = new Rig({ cpus: 2 })
    // loop: inc eax; jmp loop
    r.load(USER_CODE, [0xff, 0xc0, 0xeb, 0xfc], { user: true })
    r.enterUser(0, USER_CODE)
    r.enterUser(1, USER_CODE)
    r.machine.trapHandler = (_c, ev) => (ev.vector === Vector.BP ? 'stop' : 'stop')
    r.machine.run({ maxInstructions: 2000 })
    expect(r.machine.codeCache.size).toBeGreaterThan(0)
    // Host writes int3 over "inc eax" through physical memory.
    r.machine.memory.write8(r.phys(USER_CODE), INT3)
    const events: number[] = []
    r.machine.trapHandler = (c, ev) => {
      events.push(c.id, ev.vector)
      return 'stop'
    }
    r.machine.run({ maxInstructions: 2000 })
    expect(events).toEqual([0, Vector.BP])
    expect(r.machine.codeCache.invalidations).toBeGreaterThan(0)
  })
})

describe('block chaining', () => {
  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])(
    'a chain made on one vCPU is not followed by another with a different address space (%s)',
    (_m, jitThreshold) => {
      const r = new Rig({ cpus: 2, jitThreshold, quantum: 50 })
      // Shared page: jmp USER_CODE+0x1000. The next page holds different code in each address space.
      r.load(USER_CODE, [0xe9, ...le32(0x1000 - 5)], { user: true })
      r.load(USER_CODE + 0x1000, [0xff, 0xc0, 0xe9, ...le32(-0x1000 - 7)], { user: true }) // inc eax; jmp back
      const other = new AddressSpace(r.machine.memory, r.machine.frames)
      other.map(USER_CODE, r.phys(USER_CODE) / 4096, { user: true })
      const frame = r.machine.frames.alloc()
      other.map(USER_CODE + 0x1000, frame, { user: true })
      r.machine.memory.writeBytes(frame * 4096, [0xff, 0xc1, 0xe9, ...le32(-0x1000 - 7)]) // inc ecx; jmp back
      other.map(USER_STACK_TOP - 0x1000, r.machine.frames.alloc(), { user: true, writable: true, nx: true })
      // Both vCPUs change their mappings the same number of times.
      r.machine.cpus[0].setCr3(r.space.root)
      r.machine.cpus[1].setCr3(other.root)
      r.enterUser(0, USER_CODE)
      r.enterUser(1, USER_CODE)
      r.machine.run({ maxInstructions: 2000 })
      const [a, b] = r.machine.cpus
      expect([a.getReg(0) > 0n, a.getReg(1)]).toEqual([true, 0n])
      expect([b.getReg(0), b.getReg(1) > 0n]).toEqual([0n, true])
    },
  )
})

describe('block chaining and invalidation', () => {
  const modes = [
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ] as const
  const B = USER_CODE + 0x1000
  const rel32 = (from: number, to: number) => le32(to - from)

  it.each(modes)('a chained successor rewritten by the guest runs its new code (%s)', (_m, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    // A: inc edx; cmp edx, 50; jne +8; mov byte [B+1], 0xc1 (inc eax -> inc ecx); jmp B
    r.load(
      USER_CODE,
      [
        0xff,
        0xc2,
        0x83,
        0xfa,
        50,
        0x75,
        8,
        0xc6,
        0x04,
        0x25,
        ...le32(B + 1),
        0xc1,
        0xe9,
        ...rel32(USER_CODE + 20, B),
      ],
      {
        user: true,
      },
    )
    // B: inc eax; cmp edx, 100; jne A; int3
    r.load(B, [0xff, 0xc0, 0x83, 0xfa, 100, 0x0f, 0x85, ...rel32(B + 11, USER_CODE), INT3], {
      user: true,
      writable: true,
    })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events.map((e) => e.vector)).toEqual([Vector.BP])
    expect([r.cpu.getReg(0), r.cpu.getReg(1), r.cpu.getReg(2)]).toEqual([49n, 51n, 100n])
  })

  it.each(modes)(
    'an int3 the host writes into a chained block through another mapping traps there (%s)',
    (_m, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      r.load(USER_CODE, [0xff, 0xc2, 0xe9, ...rel32(USER_CODE + 7, B)], { user: true }) // inc edx; jmp B
      r.load(B, [0xff, 0xc0, 0xe9, ...rel32(B + 7, USER_CODE)], { user: true }) // inc eax; jmp A
      r.space.map(USER_DATA, r.phys(B) / 4096, { user: true, writable: true, nx: true })
      r.enterUser(0, USER_CODE)
      expect(r.machine.run({ maxInstructions: 1001 }).reason).toBe('budget')
      // 1001 instructions: 250 rounds of A and B, then the budget cuts A after its inc.
      expect([r.cpu.getReg(2), r.cpu.getReg(0), r.cpu.rip]).toEqual([251n, 250n, USER_CODE + 2])
      r.cpu.writeVirtual(USER_DATA, [INT3])
      const { events } = runCollect(r)
      expect(events.map((e) => e.vector)).toEqual([Vector.BP])
      expect([r.cpu.rip, r.cpu.getReg(0)]).toEqual([B + 1, 250n])
    },
  )

  it.each(modes)(
    'a page remapped under a chain (then a TLB shootdown) runs the new frame (%s)',
    (_m, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      r.load(USER_CODE, [0xff, 0xc2, 0xe9, ...rel32(USER_CODE + 7, B)], { user: true }) // inc edx; jmp B
      r.load(B, [0xff, 0xc0, 0xe9, ...rel32(B + 7, USER_CODE)], { user: true }) // inc eax; jmp A
      const frame = r.machine.frames.alloc()
      r.machine.memory.writeBytes(frame * 4096, [0xff, 0xc1, 0xe9, ...rel32(B + 7, USER_CODE)]) // inc ecx; jmp A
      r.enterUser(0, USER_CODE)
      r.machine.run({ maxInstructions: 1000 })
      expect([r.cpu.getReg(0), r.cpu.getReg(1), r.cpu.rip]).toEqual([250n, 0n, USER_CODE])
      r.space.map(B, frame, { user: true })
      r.machine.flushTlb(B)
      r.machine.run({ maxInstructions: 1000 })
      expect([r.cpu.getReg(0), r.cpu.getReg(1)]).toEqual([250n, 250n])
    },
  )
})

describe('branches and page ends inside straight-line code', () => {
  // 0: xor eax,eax; 2: jmp 6; 4: ud2; 6: inc eax; 8: cmp eax,2; 11: jge 17; 13: jmp 6; 15: ud2; 17: mov ebx,[0x900000] (unmapped)
  const code = [
    0x31, 0xc0, 0xeb, 0x02, 0x0f, 0x0b, 0xff, 0xc0, 0x83, 0xf8, 0x02, 0x7d, 0x04, 0xeb, 0xf7, 0x0f, 0x0b,
  ]
  const load = [0x8b, 0x1c, 0x25, ...le32(0x900000)]

  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])(
    'a fault after taken and untaken branches reports its own RIP and exact counts (%s)',
    (_m, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      r.load(USER_CODE, [...code, ...load], { user: true })
      r.enterUser(0, USER_CODE)
      const { events } = runCollect(r)
      expect(events.map((e) => e.vector)).toEqual([Vector.PF])
      // xor, jmp, then (inc, cmp, jge, jmp) once and (inc, cmp, jge) once: 9 instructions before the load.
      expect([r.cpu.rip, r.cpu.getReg(0), r.cpu.instructions]).toEqual([USER_CODE + 17, 2n, 9])
    },
  )

  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])(
    'an instruction crossing into an unmapped page faults at itself, after the ones before it (%s)',
    (_m, jitThreshold) => {
      const r = new Rig({ jitThreshold })
      // inc eax; nop; then inc ecx (ff c1) split across the page boundary; the next page is unmapped.
      r.load(USER_CODE + 0xffc, [0xff, 0xc0, 0x90, 0xff], { user: true })
      r.enterUser(0, USER_CODE + 0xffc)
      const { events } = runCollect(r)
      expect(events.map((e) => e.vector)).toEqual([Vector.PF])
      expect([r.cpu.cr2, r.cpu.rip, r.cpu.getReg(0), r.cpu.instructions]).toEqual([
        USER_CODE + 0x1000,
        USER_CODE + 0xfff,
        1n,
        2,
      ])
    },
  )

  it('single-steps through taken and untaken branches one instruction at a time', () => {
    const r = new Rig()
    r.load(USER_CODE, [...code, ...load], { user: true })
    r.enterUser(0, USER_CODE)
    r.cpu.rflags = IF | TF
    const steps: number[] = []
    r.machine.trapHandler = (c, ev) => {
      if (ev.vector !== Vector.DB) return 'stop'
      steps.push(c.rip - USER_CODE)
      return 'handled'
    }
    r.machine.run({ maxInstructions: 100 })
    expect(steps).toEqual([2, 6, 8, 11, 13, 6, 8, 11, 17])
  })
})

describe('machine', () => {
  it('dispatches vmcall to host services by RAX, and #UD for an unknown one', () => {
    const r = new Rig()
    r.machine.registerHypercall(7, (c) => {
      c.setReg(0, 99)
      return 1000
    })
    r.load(USER_CODE, [0xb8, ...le32(7), 0x0f, 0x01, 0xc1, 0x0f, 0x01, 0xc1], { user: true })
    r.enterUser(0, USER_CODE)
    const { events } = runCollect(r)
    expect(events[0]).toMatchObject({ vector: Vector.UD })
    expect(r.cpu.getReg(0)).toBe(99n)
    expect(r.machine.counters[0].hypercalls).toBe(1)
  })

  it('stops a runaway guest at the instruction budget', () => {
    const r = new Rig()
    r.load(USER_CODE, [0xeb, 0xfe], { user: true })
    r.enterUser(0, USER_CODE)
    const res = r.machine.run({ maxInstructions: 12345 })
    expect(res.reason).toBe('budget')
    expect(res.instructions).toBe(12345)
  })

  it('interleaves vCPUs deterministically: the same inputs give the same run', () => {
    const runOnce = (quantum: number) => {
      const r = new Rig({ cpus: 3, quantum, timer: { period: 777, vector: 40 } })
      const handler = KERNEL_BASE + 0x1000
      r.load(handler, [...IRETQ], {})
      r.setGate(40, handler)
      r.mapZeroed(USER_DATA, 4096, { user: true, writable: true, nx: true })
      // loop: mov eax, [data]; add eax, ecx; mov [data], eax; inc ecx; jmp loop   (racy on purpose)
      const code = [
        0x8b,
        0x04,
        0x25,
        ...le32(USER_DATA),
        0x01,
        0xc8,
        0x89,
        0x04,
        0x25,
        ...le32(USER_DATA),
        0xff,
        0xc1,
        0xeb,
        0xea,
      ]
      r.load(USER_CODE, code, { user: true })
      for (let i = 0; i < 3; i++) {
        r.enterUser(i, USER_CODE)
        r.machine.cpus[i].setReg(1, i * 1000)
      }
      r.machine.run({ maxInstructions: 30_000 })
      return {
        value: r.readQword(USER_DATA),
        counts: r.machine.cpus.map((c) => c.instructions),
        rips: r.machine.cpus.map((c) => c.rip),
      }
    }
    const a = runOnce(37)
    expect(runOnce(37)).toEqual(a)
    expect(runOnce(1)).not.toEqual(a)
  })

  it('hlt waits for the next timer interrupt', () => {
    const r = new Rig({ timer: { period: 5000, vector: 32 } })
    const handler = KERNEL_BASE + 0x1000
    const counter = KERNEL_BASE + 0x2000
    r.load(handler, [0x48, 0xff, 0x04, 0x25, ...le32(counter | 0), ...IRETQ], {})
    r.mapZeroed(counter, 8, { writable: true, nx: true })
    r.setGate(32, handler)
    // sti; hlt; jmp back to hlt
    r.load(KERNEL_BASE, [0xfb, HLT, 0xeb, 0xfd], {})
    r.enterKernel(0, KERNEL_BASE)
    r.machine.run({ maxInstructions: 60 })
    expect(r.readQword(counter)).toBeGreaterThanOrEqual(3n)
    expect(r.machine.cycles(0)).toBeGreaterThan(15000)
  })

  it('charges traps in the cost model', () => {
    const m = new Machine({ memorySize: 1 << 20, costs: { trap: 500 } })
    expect(m.costs.trap).toBe(500)
    expect(IDT_ADDR).toBeLessThan(0)
  })
})

function updateDebugStateForTest(r: Rig): void {
  updateDebugState(r.cpu)
}

describe('segment bases and gate checks', () => {
  it.each([
    ['interpreter', Number.POSITIVE_INFINITY],
    ['block compiler', 0],
  ])('gs: absolute operands add the GS base (%s)', (_mode, jitThreshold) => {
    const r = new Rig({ jitThreshold })
    r.mapZeroed(USER_DATA, 4096, { user: true, writable: true, nx: true })
    r.writeQword(USER_DATA + 0x28, 0x1234567)
    // mov rax, gs:[0x28] ; mov fs:[0x30], rax ; hlt
    r.load(
      USER_CODE,
      [0x65, 0x48, 0x8b, 0x04, 0x25, ...le32(0x28), 0x64, 0x48, 0x89, 0x04, 0x25, ...le32(0x30), HLT],
      { user: true },
    )
    r.enterUser(0, USER_CODE)
    r.cpu.gsBase = USER_DATA
    r.cpu.fsBase = USER_DATA
    runCollect(r)
    expect(r.cpu.getReg(0)).toBe(0x1234567n)
    expect(r.readQword(USER_DATA + 0x30)).toBe(0x1234567n)
  })

  it('int n through a gate with DPL < CPL is a #GP fault at the int instruction', () => {
    const r = new Rig()
    const handler = KERNEL_BASE + 0x1000
    r.load(handler, [HLT], {})
    r.setGate(Vector.GP, handler)
    r.setGate(0x80, handler, { dpl: 0 })
    r.load(USER_CODE, [NOP, 0xcd, 0x80], { user: true })
    r.enterUser(0, USER_CODE)
    const seen: { vector: number; rip: bigint }[] = []
    r.machine.run({ maxInstructions: 10 })
    // The #GP frame's RIP (top of the kernel stack frame) is the int instruction, error code 0x80*8+2.
    seen.push({ vector: Vector.GP, rip: r.readQword(KSTACK_TOP - 40) })
    expect(seen[0].rip).toBe(BigInt(USER_CODE + 1))
    expect(r.readQword(KSTACK_TOP - 48)).toBe(BigInt(0x80 * 8 + 2))
  })
})
