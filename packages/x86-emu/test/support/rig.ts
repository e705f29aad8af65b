// A small system for machine-level tests: one address space with user and
// kernel mappings, an IDT and a TSS, so traps and interrupts go through the
// guest exactly as on hardware.

import {
  AddressSpace,
  EFER_LMA,
  EFER_NXE,
  EFER_SCE,
  KERNEL_CS,
  KERNEL_SS,
  Machine,
  type MachineOptions,
  type PageFlags,
  USER_CS,
  USER_SS,
} from '../../src/index.js'

export const KERNEL_BASE = -0x7f000000 // 0xffffffff81000000
export const IDT_ADDR = KERNEL_BASE + 0x10000
export const TSS_ADDR = KERNEL_BASE + 0x11000
export const KSTACK_TOP = KERNEL_BASE + 0x20000
export const USER_CODE = 0x400000
export const USER_DATA = 0x600000
export const USER_STACK_TOP = 0x7ff000

export class Rig {
  readonly machine: Machine
  readonly space: AddressSpace

  constructor(options: MachineOptions = {}) {
    this.machine = new Machine({ memorySize: 32 * 1024 * 1024, ...options })
    this.space = new AddressSpace(this.machine.memory, this.machine.frames)
    // Kernel stack, IDT, TSS (RSP0 = top of the kernel stack).
    this.mapZeroed(KERNEL_BASE + 0x10000, 0x10000, { writable: true, nx: true })
    this.writeQword(TSS_ADDR + 4, KSTACK_TOP)
    this.mapZeroed(USER_STACK_TOP - 0x4000, 0x4000, { user: true, writable: true, nx: true })
    for (const c of this.machine.cpus) {
      c.efer = EFER_LMA | EFER_NXE | EFER_SCE
      c.setCr3(this.space.root)
      c.idtBase = IDT_ADDR
      c.idtLimit = 256 * 16 - 1
      c.trBase = TSS_ADDR
    }
  }

  get cpu() {
    return this.machine.cpus[0]
  }

  /** Map fresh zeroed pages covering [va, va+len). */
  mapZeroed(va: number, len: number, flags: Partial<PageFlags>): void {
    for (let p = Math.floor(va / 4096) * 4096; p < va + len; p += 4096) {
      if (!this.space.lookup(p)) this.space.map(p, this.machine.frames.alloc(), flags)
    }
  }

  /** Map pages and copy bytes there (host write, through the physical frames). */
  load(va: number, bytes: ArrayLike<number>, flags: Partial<PageFlags>): void {
    this.mapZeroed(va, bytes.length, flags)
    for (let k = 0; k < bytes.length; k++) this.poke(va + k, bytes[k])
  }

  phys(va: number): number {
    const m = this.space.lookup(Math.floor(va / 4096) * 4096)
    if (!m) throw new Error(`unmapped ${va}`)
    return m.frame * 4096 + (((va % 4096) + 4096) % 4096)
  }

  poke(va: number, b: number): void {
    this.machine.memory.write8(this.phys(va), b)
  }

  peek(va: number): number {
    return this.machine.memory.read8(this.phys(va))
  }

  writeQword(va: number, v: number): void {
    const b = BigInt.asUintN(64, BigInt(v))
    for (let k = 0; k < 8; k++) this.poke(va + k, Number((b >> BigInt(8 * k)) & 0xffn))
  }

  readQword(va: number): bigint {
    let v = 0n
    for (let k = 7; k >= 0; k--) v = (v << 8n) | BigInt(this.peek(va + k))
    return v
  }

  /** Install a 64-bit interrupt (type 0xE) or trap (0xF) gate. */
  setGate(vector: number, handler: number, opts: { dpl?: number; ist?: number; trap?: boolean } = {}): void {
    const off = BigInt.asUintN(64, BigInt(handler))
    const lo =
      (off & 0xffffn) |
      (BigInt(KERNEL_CS) << 16n) |
      (BigInt(opts.ist ?? 0) << 32n) |
      (BigInt(opts.trap ? 0xf : 0xe) << 40n) |
      (BigInt(opts.dpl ?? 0) << 45n) |
      (1n << 47n) |
      (((off >> 16n) & 0xffffn) << 48n)
    const hi = off >> 32n
    this.writeQword(IDT_ADDR + vector * 16, Number(BigInt.asIntN(64, lo)))
    this.writeQword(IDT_ADDR + vector * 16 + 8, Number(hi))
  }

  /** Put a CPU in user mode at rip with the user stack. */
  enterUser(cpuIndex: number, rip: number, rsp = USER_STACK_TOP): void {
    const c = this.machine.cpus[cpuIndex]
    c.setCpl(3)
    c.cs = USER_CS
    c.ss = USER_SS
    c.rip = rip
    c.setLinear(4, rsp)
    c.rflags = 1 << 9
  }

  enterKernel(cpuIndex: number, rip: number, rsp = KSTACK_TOP): void {
    const c = this.machine.cpus[cpuIndex]
    c.setCpl(0)
    c.cs = KERNEL_CS
    c.ss = KERNEL_SS
    c.rip = rip
    c.setLinear(4, rsp)
    c.rflags = 0
  }
}

export function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff]
}
