// Run a freestanding static ELF at CPL 3 with the tiny vmcall ABI the
// native/ workloads use: rax=1 exit(rdi), rax=2 write(rdi=buf, rsi=len).

import { AddressSpace, EFER_LMA, EFER_NXE, EFER_SCE, IF, Machine, USER_CS, USER_SS } from '../../src/index.js'
import { readElf } from './elf.js'

export interface BareResult {
  exitCode: number
  stdout: string
  instructions: number
}

export const BARE_STACK_TOP = 0x7ffffff00000
const STACK_SIZE = 1024 * 1024

/** Load an ELF into a fresh machine; returns the machine ready to run. */
export function loadBare(
  elf: Uint8Array,
  memorySize = 64 * 1024 * 1024,
): { machine: Machine; out: { stdout: string; exitCode: number | null } } {
  const { entry, segments } = readElf(elf)
  const m = new Machine({ memorySize })
  const space = new AddressSpace(m.memory, m.frames)
  const pages = new Map<number, number>()
  for (const s of segments) {
    const first = Math.floor(s.vaddr / 4096) * 4096
    const last = Math.ceil((s.vaddr + s.memsz) / 4096) * 4096
    for (let va = first; va < last; va += 4096) {
      let f = pages.get(va)
      if (f === undefined) {
        f = m.frames.alloc()
        pages.set(va, f)
      }
      space.map(va, f, {
        user: true,
        writable: s.flags.w || space.lookup(va)?.flags.writable === true,
        nx: !s.flags.x,
      })
    }
    for (let k = 0; k < s.data.length; k++) {
      const va = s.vaddr + k
      const f = pages.get(Math.floor(va / 4096) * 4096)!
      m.memory.bytes[f * 4096 + (va % 4096)] = s.data[k]
    }
  }
  for (let va = BARE_STACK_TOP - STACK_SIZE; va < BARE_STACK_TOP; va += 4096) {
    space.map(va, m.frames.alloc(), { user: true, writable: true, nx: true })
  }
  const cpu = m.cpus[0]
  cpu.efer = EFER_LMA | EFER_NXE | EFER_SCE
  cpu.setCr3(space.root)
  cpu.setCpl(3)
  cpu.cs = USER_CS
  cpu.ss = USER_SS
  cpu.rflags = IF
  cpu.rip = entry
  cpu.setReg(4, BigInt(BARE_STACK_TOP))
  const out = { stdout: '', exitCode: null as number | null }
  const decoder = new TextDecoder()
  m.registerHypercall(1, (c, machine) => {
    out.exitCode = c.r[14] & 0xff
    machine.stop('exit')
  })
  m.registerHypercall(2, (c) => {
    const buf = c.getLinear(7)
    const len = c.r[12] >>> 0
    out.stdout += decoder.decode(c.readVirtual(buf, len))
    c.r[0] = len
    c.r[1] = 0
  })
  m.trapHandler = () => 'stop'
  return { machine: m, out }
}

export function runBare(elf: Uint8Array, opts: { maxInstructions?: number } = {}): BareResult {
  const { machine, out } = loadBare(elf)
  const r = machine.run({ maxInstructions: opts.maxInstructions ?? 5_000_000_000 })
  if (out.exitCode === null) throw new Error(`bare program did not exit: ${r.reason}: ${r.detail}`)
  return { exitCode: out.exitCode, stdout: out.stdout, instructions: machine.totalInstructions() }
}
