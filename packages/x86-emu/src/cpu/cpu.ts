// One x86-64 logical processor: architectural state, the MMU with its soft
// TLB, and the fast memory paths the compiled instructions call.
//
// Registers are 32-bit halves in an Int32Array (r[2n] low, r[2n+1] high) so
// 64-bit arithmetic never touches BigInt. Linear addresses are "linear
// numbers" (see ../address.ts).

import { linearFromHalves } from '../address.js'
import { PTE_A, PTE_D, PTE_P, PTE_PS, PTE_U, PTE_W } from '../memory/page-table.js'
import type { PhysicalMemory } from '../memory/physical-memory.js'
import {
  TLB_MASK,
  TLB_R_SUP,
  TLB_R_USER,
  TLB_W_SUP,
  TLB_W_USER,
  TLB_X_SUP,
  TLB_X_USER,
  Tlb,
} from '../memory/tlb.js'
import { CpuFault, PF_INSTR, PF_PRESENT, PF_USER, PF_WRITE, Vector } from './exceptions.js'
import { arithFlags, FK_EAGER } from './flags.js'
import {
  ARITH_FLAGS,
  CR0_PG,
  CR0_WP,
  CR4_PGE,
  DR6_FIXED,
  EFER_NXE,
  KERNEL_CS,
  KERNEL_SS,
  RFLAGS_FIXED,
} from './registers.js'

const TWO_32 = 0x1_0000_0000
const CANONICAL_LIMIT = 0x8000_0000_0000

export enum Access {
  Read = 0,
  Write = 1,
  Exec = 2,
}

/** What instructions need from the machine around the CPU (implemented by Machine). */
export interface CpuHost {
  /** vmcall: run the host service numbered by RAX (throws #UD when none is registered). */
  hypercall(cpu: Cpu): void
  /** The time-stamp counter for rdtsc: deterministic guest cycles. */
  readTsc(cpu: Cpu): bigint
  /** Counted by the cost model: a privilege change (syscall, sysret, iret across rings). */
  modeSwitch(cpu: Cpu): void
}

/** Map epochs are unique across all CPUs (and machines), so a block chain made under one vCPU's mappings never passes another's epoch check. */
let lastEpoch = 0
function nextEpoch(): number {
  return ++lastEpoch
}

const NO_HOST: CpuHost = {
  hypercall() {
    throw new CpuFault(Vector.UD, 0, 0, 'vmcall without a machine')
  },
  readTsc(cpu) {
    return BigInt(cpu.instructions)
  },
  modeSwitch() {},
}

/**
 * One x86-64 logical processor: architectural state, the MMU with its soft
 * TLB, and the fast memory paths the compiled instructions call.
 */
export class Cpu {
  readonly id: number
  host: CpuHost = NO_HOST
  readonly memory: PhysicalMemory
  readonly mem: Uint8Array
  readonly view: DataView

  // --- General-purpose registers: r[2n] = low 32 bits, r[2n+1] = high 32 bits (both int32).
  readonly r = new Int32Array(32)
  /** RIP as a linear number. Inside a block it is only exact at block boundaries and faults. */
  rip = 0
  /** RFLAGS except the six arithmetic flags while fop is lazy. */
  eflags = RFLAGS_FIXED

  // --- Lazy flags (see flags.ts).
  fop = FK_EAGER
  fa = 0
  fb = 0
  fr = 0
  fah = 0
  fbh = 0
  frh = 0
  /** CF carried across inc/dec. */
  fcf = 0

  /** Scratch high half for 64-bit reads and results (saves allocating pairs). */
  th = 0

  // --- System state.
  cpl = 0
  cs = KERNEL_CS
  ss = KERNEL_SS
  ds = 0
  es = 0
  fsSel = 0
  gsSel = 0
  fsBase = 0
  gsBase = 0
  kernelGsBase = 0
  cr0 = CR0_PG | CR0_WP | 1
  cr2 = 0
  /** Physical address of the PML4. */
  cr3 = 0
  cr4 = 0
  cr8 = 0
  efer = 0
  star = 0n
  lstar = 0
  cstar = 0
  fmask = 0
  tscAux = 0
  readonly dr = [0, 0, 0, 0]
  dr6 = DR6_FIXED
  dr7 = 0x400
  idtBase = 0
  idtLimit = 0
  gdtBase = 0
  gdtLimit = 0
  /** Base of the 64-bit TSS (RSP0 at +4, IST1 at +36). */
  trBase = 0
  trSel = 0
  ldtSel = 0
  /** Other MSRs written by the guest (read back as written). */
  readonly msrs = new Map<number, bigint>()

  // --- SSE / x87 state (executed from a later issue; saved/restored already).
  readonly xmm = new Int32Array(64)
  /** The XMM registers as doubles (register n's lanes at 2n, 2n+1): the block compiler's SSE2 fast paths. */
  readonly xmmD = new Float64Array(this.xmm.buffer)
  mxcsr = 0x1f80

  // --- Execution bookkeeping.
  halted = false
  /** Guest instructions retired. */
  instructions = 0
  /** Index of the instruction a compiled block is executing (for precise faults). */
  ci = 0
  /** Instructions of the iterations a looping compiled block completed before ci's (for precise faults). */
  ld = 0
  /** Set by anything that must end the current block early (SMC, stop request). */
  blockExit = false
  /** Set by an op that stopped part-way (a rep string op between chunks): RIP stays on it so it runs again. */
  repeatCurrent = false
  /**
   * A trap the last op raised without throwing (int3, int n, int1; it also set blockExit): the
   * runner delivers it as it would the thrown fault. A JavaScript throw costs about a microsecond
   * of host time, and an int3 is every kprobe and uprobe hit.
   */
  trap: CpuFault | null = null
  /**
   * Set by syscall: its single-step trap is not taken (IA32_FMASK clears TF on the way in, and the
   * #DB would land on the kernel entry with the user stack). The kernel reports the step itself
   * when the call returns, as Linux's syscall exit work does for a stepping task.
   */
  stepSuppressed = false
  /** Interrupts are inhibited for one instruction after sti / mov ss. */
  interruptShadow = false
  /** Pending external interrupt vectors (the timer and IPIs), delivered when IF=1. */
  readonly pendingInterrupts: number[] = []

  // --- MMU.
  readonly tlb = new Tlb()
  /**
   * Names the translations (and the privilege they are checked for) in force: chained blocks
   * re-check when it differs. New values whenever translations may have changed; a CPL change
   * switches between the user and the supervisor epoch, so returning from the kernel finds the
   * chains made before the trap still valid.
   */
  mapEpoch = nextEpoch()
  private userEpoch = nextEpoch()
  private supEpoch = this.mapEpoch
  /** Permission bits to test for the current CPL. */
  rBit = TLB_R_SUP
  wBit = TLB_W_SUP
  xBit = TLB_X_SUP
  /** When a data breakpoint is armed, its pages bypass the TLB. */
  dataBreakpoints = false
  /** Number of enabled debug-register breakpoints (execution and data): non-zero takes the careful path. */
  debugTraps = 0
  /** Linear addresses of enabled execution breakpoints (see debug.ts). */
  execBreakpoints: number[] = []
  /** DR6 B0-B3 bits of data breakpoints hit by the current instruction (#DB trap after it). */
  pendingDataHits = 0

  constructor(id: number, memory: PhysicalMemory) {
    this.id = id
    this.memory = memory
    this.mem = memory.bytes
    this.view = memory.view
  }

  // ------------------------------------------------------------------ registers

  /** A 64-bit register as a bigint (host convenience). */
  getReg(n: number): bigint {
    return (BigInt(this.r[2 * n + 1] >>> 0) << 32n) | BigInt(this.r[2 * n] >>> 0)
  }
  setReg(n: number, v: bigint | number): void {
    const b = BigInt.asUintN(64, BigInt(v))
    this.r[2 * n] = Number(b & 0xffff_ffffn) | 0
    this.r[2 * n + 1] = Number(b >> 32n) | 0
  }
  /** A register holding an address, as a linear number. */
  getLinear(n: number): number {
    return linearFromHalves(this.r[2 * n], this.r[2 * n + 1])
  }
  setLinear(n: number, addr: number): void {
    this.r[2 * n] = addr | 0
    this.r[2 * n + 1] = Math.floor(addr / TWO_32) | 0
  }

  get rflags(): number {
    return (this.eflags & ~ARITH_FLAGS) | arithFlags(this) | RFLAGS_FIXED
  }
  set rflags(v: number) {
    this.eflags = (v | RFLAGS_FIXED) & 0x3f7fd7
    this.fop = FK_EAGER
  }

  setCpl(cpl: number): void {
    this.cpl = cpl
    const user = cpl === 3
    this.mapEpoch = user ? this.userEpoch : this.supEpoch
    this.rBit = user ? TLB_R_USER : TLB_R_SUP
    this.wBit = user ? TLB_W_USER : TLB_W_SUP
    this.xBit = user ? TLB_X_USER : TLB_X_SUP
  }

  // ------------------------------------------------------------------ MMU

  /** Translations may have changed: new epochs for both privilege classes. */
  private newEpochs(): void {
    this.userEpoch = nextEpoch()
    this.supEpoch = nextEpoch()
    this.mapEpoch = this.cpl === 3 ? this.userEpoch : this.supEpoch
  }

  setCr3(v: number): void {
    this.newEpochs()
    this.cr3 = v
    this.tlb.flushAll((this.cr4 & CR4_PGE) !== 0)
  }

  invlpg(addr: number): void {
    this.newEpochs()
    this.tlb.flushPage(Math.floor(addr / 4096))
  }

  flushTlb(): void {
    this.newEpochs()
    this.tlb.flushAll(false)
  }

  /**
   * Walk the page tables for one access, set A/D bits, fill the TLB and
   * return the physical address. Throws #PF (or #GP for non-canonical).
   */
  translate(addr: number, access: Access, user: boolean): number {
    if (!(addr >= -CANONICAL_LIMIT && addr < CANONICAL_LIMIT))
      throw new CpuFault(Vector.GP, 0, 0, 'non-canonical address')
    const offset = addr & 0xfff
    const vpn = (addr - offset) / 4096
    if ((this.cr0 & CR0_PG) === 0) {
      const phys = addr - offset
      if (phys < 0 || phys >= this.memory.size)
        throw new CpuFault(Vector.GP, 0, 0, 'physical address outside memory')
      this.fillTlb(vpn, phys, 0x3f, false)
      return phys + offset
    }
    const u = addr < 0 ? addr + 2 ** 48 : addr
    const mem = this.view
    const errUser = user ? PF_USER : 0
    const errWrite = access === Access.Write ? PF_WRITE : 0
    const errInstr = access === Access.Exec && (this.efer & EFER_NXE) !== 0 ? PF_INSTR : 0
    let table = this.cr3
    let writable = true
    let userOk = true
    let nx = false
    let level = 3
    let entry = 0
    let lo = 0
    for (;;) {
      const idx = Math.floor(u / 2 ** (12 + 9 * level)) % 512
      entry = table + idx * 8
      if (entry < 0 || entry + 8 > this.memory.size)
        throw new CpuFault(Vector.MC, 0, addr, 'page table outside memory')
      lo = mem.getInt32(entry, true)
      if ((lo & PTE_P) === 0) {
        throw new CpuFault(Vector.PF, errUser | errWrite | errInstr, addr)
      }
      const hi = mem.getInt32(entry + 4, true)
      if ((lo & PTE_W) === 0) writable = false
      if ((lo & PTE_U) === 0) userOk = false
      if (hi < 0 && (this.efer & EFER_NXE) !== 0) nx = true
      if ((lo & PTE_A) === 0) mem.setInt32(entry, lo | PTE_A, true)
      if (level === 0 || (level <= 2 && (lo & PTE_PS) !== 0)) break
      table = (lo & 0xfffff000) >>> 0
      level--
    }
    // Permission check for this access.
    const wp = (this.cr0 & CR0_WP) !== 0
    let ok = true
    if (user && !userOk) ok = false
    else if (access === Access.Write && !writable && (user || wp)) ok = false
    else if (access === Access.Exec && nx) ok = false
    if (!ok) throw new CpuFault(Vector.PF, PF_PRESENT | errUser | errWrite | errInstr, addr)
    let frameBase: number
    if (level === 0) frameBase = (lo & 0xfffff000) >>> 0
    else {
      // Large page: the frame is the page base plus the address bits below the level.
      const span = 2 ** (12 + 9 * level)
      const base = (lo & 0xfffff000 & ~(span - 1)) >>> 0
      frameBase = base + ((u % span) - offset)
    }
    let dirty = (lo & PTE_D) !== 0
    if (access === Access.Write && !dirty && level === 0) {
      mem.setInt32(entry, mem.getInt32(entry, true) | PTE_D, true)
      dirty = true
    } else if (level > 0) dirty = true
    let bits = TLB_R_SUP
    if (!nx) bits |= TLB_X_SUP
    if (dirty && (writable || !wp)) bits |= TLB_W_SUP
    if (userOk) {
      bits |= TLB_R_USER
      if (!nx) bits |= TLB_X_USER
      if (dirty && writable) bits |= TLB_W_USER
    }
    if (frameBase >= this.memory.size) throw new CpuFault(Vector.MC, 0, addr, 'frame outside memory')
    this.fillTlb(vpn, frameBase, bits, (lo & 0x100) !== 0)
    return frameBase + offset
  }

  private fillTlb(vpn: number, phys: number, bits: number, global: boolean): void {
    const frame = phys / 4096
    // Writes to code pages and watched pages must keep taking the slow path.
    if (this.memory.codeFrames[frame] !== 0) bits &= ~(TLB_W_SUP | TLB_W_USER)
    if (this.dataBreakpoints && this.watchesPage(vpn))
      bits &= ~(TLB_R_SUP | TLB_R_USER | TLB_W_SUP | TLB_W_USER)
    this.tlb.fill((vpn ^ (vpn >> 10)) & TLB_MASK, vpn, phys, bits, global)
  }

  /** Data-breakpoint hook, replaced by the debug-register logic (debug.ts). */
  watchesPage(_vpn: number): boolean {
    return false
  }
  /** Called on every slow-path data access while data breakpoints are armed. */
  checkDataBreakpoint(_addr: number, _size: number, _write: boolean): void {}

  /** Translate for an access of `size` bytes that may cross a page: returns phys of the first byte, or -1 when it crosses (caller splits). */
  private slowPhys(addr: number, size: number, access: Access): number {
    const phys = this.translate(addr, access, this.cpl === 3)
    if (this.dataBreakpoints && access !== Access.Exec)
      this.checkDataBreakpoint(addr, size, access === Access.Write)
    return (addr & 0xfff) + size > 4096 ? -1 : phys
  }

  // ------------------------------------------------------------------ data reads

  read8(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    if (t.vpn[i] === vpn && (t.bits[i] & this.rBit) !== 0) return this.mem[t.phys[i] + (addr & 0xfff)]
    return this.mem[this.slowPhys(addr, 1, Access.Read)]
  }

  read16(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.rBit) !== 0 && off <= 4094)
      return this.view.getUint16(t.phys[i] + off, true)
    const p = this.slowPhys(addr, 2, Access.Read)
    if (p >= 0) return this.view.getUint16(p, true)
    return this.readBytesSplit(addr, 2)
  }

  /** 32-bit read as int32. */
  read32(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.rBit) !== 0 && off <= 4092)
      return this.view.getInt32(t.phys[i] + off, true)
    const p = this.slowPhys(addr, 4, Access.Read)
    if (p >= 0) return this.view.getInt32(p, true)
    return this.readBytesSplit(addr, 4) | 0
  }

  /** 64-bit read: returns the low half (int32), leaves the high half in this.th. */
  read64(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.rBit) !== 0 && off <= 4088) {
      const p = t.phys[i] + off
      this.th = this.view.getInt32(p + 4, true)
      return this.view.getInt32(p, true)
    }
    const p = this.slowPhys(addr, 8, Access.Read)
    if (p >= 0) {
      this.th = this.view.getInt32(p + 4, true)
      return this.view.getInt32(p, true)
    }
    const lo = this.readBytesSplit(addr, 4) | 0
    this.th = this.readBytesSplit(addr + 4, 4) | 0
    return lo
  }

  /**
   * read64 at the address whose halves are alo (low 32 bits) and ahi (high,
   * signed). The stack paths keep RSP in halves: a 64-bit address as one
   * number is a double, which V8 boxes when it crosses a call that is not
   * inlined.
   */
  read64h(alo: number, ahi: number): number {
    const vpn = ahi * 1048576 + (alo >>> 12)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = alo & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.rBit) !== 0 && off <= 4088) {
      const p = t.phys[i] + off
      this.th = this.view.getInt32(p + 4, true)
      return this.view.getInt32(p, true)
    }
    return this.read64(ahi * TWO_32 + (alo >>> 0))
  }

  /** A 64-bit value read as a linear number (pointers: return addresses, gate offsets). */
  readLinear(addr: number): number {
    const lo = this.read64(addr)
    return this.th * TWO_32 + (lo >>> 0)
  }

  private readBytesSplit(addr: number, size: number): number {
    // Translate both pages before reading, so a fault leaves nothing half-done.
    const p0 = this.translate(addr, Access.Read, this.cpl === 3)
    const second = addr + (4096 - (addr & 0xfff))
    // read64 splits into two halves; a half that stays inside one page must not touch the page after it.
    const p1 = addr + size > second ? this.translate(second, Access.Read, this.cpl === 3) : 0
    let v = 0
    for (let k = 0; k < size; k++) {
      const a = addr + k
      const b = a < second ? this.mem[p0 + k] : this.mem[p1 + (a - second)]
      v += b * 2 ** (8 * k)
    }
    return v
  }

  // ------------------------------------------------------------------ read-modify-write reads
  // These read with *write* permission checked, so the write that follows in
  // the same instruction cannot fault: read-modify-write stays precise.

  read8w(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0) return this.mem[t.phys[i] + (addr & 0xfff)]
    return this.mem[this.slowPhys(addr, 1, Access.Write)]
  }

  read16w(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4094)
      return this.view.getUint16(t.phys[i] + off, true)
    this.probeWrite(addr, 2)
    return this.read16(addr)
  }

  read32w(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4092)
      return this.view.getInt32(t.phys[i] + off, true)
    this.probeWrite(addr, 4)
    return this.read32(addr)
  }

  read64w(addr: number): number {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4088) {
      const p = t.phys[i] + off
      this.th = this.view.getInt32(p + 4, true)
      return this.view.getInt32(p, true)
    }
    this.probeWrite(addr, 8)
    return this.read64(addr)
  }

  // ------------------------------------------------------------------ data writes

  write8(addr: number, v: number): void {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0) {
      this.mem[t.phys[i] + (addr & 0xfff)] = v
      return
    }
    const p = this.slowPhys(addr, 1, Access.Write)
    this.noteCodeWrite(p, 1)
    this.mem[p] = v
  }

  write16(addr: number, v: number): void {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4094) {
      this.view.setUint16(t.phys[i] + off, v, true)
      return
    }
    const p = this.slowPhys(addr, 2, Access.Write)
    if (p >= 0) {
      this.noteCodeWrite(p, 2)
      this.view.setUint16(p, v, true)
    } else this.writeBytesSplit(addr, 2, v, 0)
  }

  write32(addr: number, v: number): void {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4092) {
      this.view.setInt32(t.phys[i] + off, v, true)
      return
    }
    const p = this.slowPhys(addr, 4, Access.Write)
    if (p >= 0) {
      this.noteCodeWrite(p, 4)
      this.view.setInt32(p, v, true)
    } else this.writeBytesSplit(addr, 4, v, 0)
  }

  write64(addr: number, lo: number, hi: number): void {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = addr & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4088) {
      const p = t.phys[i] + off
      this.view.setInt32(p, lo, true)
      this.view.setInt32(p + 4, hi, true)
      return
    }
    const p = this.slowPhys(addr, 8, Access.Write)
    if (p >= 0) {
      this.noteCodeWrite(p, 8)
      this.view.setInt32(p, lo, true)
      this.view.setInt32(p + 4, hi, true)
    } else this.writeBytesSplit(addr, 8, lo, hi)
  }

  /** write64 at the address in halves (see read64h). */
  write64h(alo: number, ahi: number, lo: number, hi: number): void {
    const vpn = ahi * 1048576 + (alo >>> 12)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    const off = alo & 0xfff
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && off <= 4088) {
      const p = t.phys[i] + off
      this.view.setInt32(p, lo, true)
      this.view.setInt32(p + 4, hi, true)
      return
    }
    this.write64(ahi * TWO_32 + (alo >>> 0), lo, hi)
  }

  /** Check that a write of `size` bytes would succeed (for instructions that must not fault half-way). */
  probeWrite(addr: number, size: number): void {
    const vpn = Math.floor(addr / 4096)
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    const t = this.tlb
    if (t.vpn[i] === vpn && (t.bits[i] & this.wBit) !== 0 && (addr & 0xfff) + size <= 4096) return
    this.translate(addr, Access.Write, this.cpl === 3)
    if ((addr & 0xfff) + size > 4096) this.translate(addr + size - 1, Access.Write, this.cpl === 3)
  }

  private writeBytesSplit(addr: number, size: number, lo: number, hi: number): void {
    const p0 = this.translate(addr, Access.Write, this.cpl === 3)
    const second = addr + (4096 - (addr & 0xfff))
    const p1 = this.translate(second, Access.Write, this.cpl === 3)
    const n0 = second - addr
    this.noteCodeWrite(p0, n0)
    this.noteCodeWrite(p1, size - n0)
    for (let k = 0; k < size; k++) {
      const b = k < 4 ? (lo >>> (8 * k)) & 0xff : (hi >>> (8 * (k - 4))) & 0xff
      if (k < n0) this.mem[p0 + k] = b
      else this.mem[p1 + (k - n0)] = b
    }
  }

  private noteCodeWrite(phys: number, len: number): void {
    const codeFrames = this.memory.codeFrames
    if (codeFrames[phys >>> 12] !== 0 || codeFrames[(phys + len - 1) >>> 12] !== 0) {
      this.memory.noteWrite(phys, len)
    }
  }

  // ------------------------------------------------------------------ host helpers

  /** Read guest-virtual bytes with the current CPL's rights (faults throw CpuFault). */
  readVirtual(addr: number, len: number): Uint8Array {
    const out = new Uint8Array(len)
    for (let k = 0; k < len; k++) out[k] = this.read8(addr + k)
    return out
  }
  writeVirtual(addr: number, data: ArrayLike<number>): void {
    for (let k = 0; k < data.length; k++) this.write8(addr + k, data[k])
  }
}
