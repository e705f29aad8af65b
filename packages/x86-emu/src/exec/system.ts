// System instructions: syscall/sysret, iretq, int3/int n, hlt, cli/sti,
// vmcall, cpuid, rdtsc(p), rdmsr/wrmsr, control and debug registers, swapgs,
// invlpg, descriptor tables, and the architectural #UD instructions.

import type { Cpu } from '../cpu/cpu.js'
import { updateDebugState } from '../cpu/debug.js'
import { CpuFault, SoftwareInterrupt, Unimplemented, Vector } from '../cpu/exceptions.js'
import { arithFlags, FK_EAGER } from '../cpu/flags.js'
import { iretq } from '../cpu/interrupts.js'
import {
  ARITH_FLAGS,
  CR4_PGE,
  DR6_FIXED,
  EFER_LMA,
  EFER_SCE,
  IF,
  IOPL,
  MSR_CSTAR,
  MSR_EFER,
  MSR_FMASK,
  MSR_FS_BASE,
  MSR_GS_BASE,
  MSR_KERNEL_GS_BASE,
  MSR_LSTAR,
  MSR_STAR,
  MSR_TSC,
  MSR_TSC_AUX,
  RF,
  RFLAGS_FIXED,
  TF,
} from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { cpuid } from './cpuid.js'
import type { Op } from './op.js'
import { compileEa, readRm } from './operands.js'

const TWO_32 = 0x1_0000_0000

function requireCpl0(c: Cpu, what: string): void {
  if (c.cpl !== 0) throw new CpuFault(Vector.GP, 0, 0, `${what} at CPL ${c.cpl}`)
}

function setRegLinear(c: Cpu, n: number, v: number): void {
  c.r[2 * n] = v | 0
  c.r[2 * n + 1] = Math.floor(v / TWO_32) | 0
}

/** 0F 05 syscall. */
export function compileSyscall(insn: Instruction): Op {
  const next = insn.address + insn.length
  return (c) => {
    if ((c.efer & EFER_SCE) === 0) throw new CpuFault(Vector.UD, 0, 0, 'syscall with EFER.SCE clear')
    const flags = ((c.eflags & ~ARITH_FLAGS) | arithFlags(c) | RFLAGS_FIXED) & ~RF
    setRegLinear(c, 1, next)
    c.r[22] = flags
    c.r[23] = 0
    const sel = Number((c.star >> 32n) & 0xffffn)
    c.cs = sel & 0xfffc
    c.ss = (sel + 8) & 0xfffc
    c.setCpl(0)
    c.eflags = (flags & ~c.fmask & ~RF) | RFLAGS_FIXED
    if ((flags & TF) !== 0 && (c.fmask & TF) !== 0) c.stepSuppressed = true
    c.fop = FK_EAGER
    c.rip = c.lstar
    c.host.modeSwitch(c)
  }
}

/** 0F 07 sysretq. */
export function compileSysret(insn: Instruction): Op {
  if (!insn.rexW)
    return () => {
      throw new Unimplemented('sysret to compatibility mode')
    }
  return (c) => {
    if ((c.efer & EFER_SCE) === 0) throw new CpuFault(Vector.UD, 0, 0, 'sysret with EFER.SCE clear')
    requireCpl0(c, 'sysret')
    const target = c.r[3] * TWO_32 + (c.r[2] >>> 0)
    if (!(target >= -0x8000_0000_0000 && target < 0x8000_0000_0000))
      throw new CpuFault(Vector.GP, 0, 0, 'sysret to a non-canonical RCX')
    c.eflags = (c.r[22] & 0x3c7fd7) | RFLAGS_FIXED
    c.fop = FK_EAGER
    const sel = Number((c.star >> 48n) & 0xffffn)
    c.cs = ((sel + 16) & 0xfffc) | 3
    c.ss = ((sel + 8) & 0xfffc) | 3
    c.setCpl(3)
    c.rip = target
    c.host.modeSwitch(c)
  }
}

/** CF iretq (the 32-bit form is not supported in long mode here). */
export function compileIret(insn: Instruction): Op {
  if (!insn.rexW)
    return () => {
      throw new Unimplemented('iretd (32-bit iret) in 64-bit mode')
    }
  return (c) => {
    const before = c.cpl
    iretq(c)
    if (c.cpl !== before) c.host.modeSwitch(c)
  }
}

/**
 * CC int3, CD int n, F1 int1: a trap after the instruction, recorded in Cpu.trap for the runner
 * (not thrown: int3 is every kprobe and uprobe hit, and a throw costs more than the rest of the
 * instruction's host work). They always end their block. The fault objects are immutable: made once
 * per instruction, not per execution.
 */
export function compileInt(insn: Instruction): Op {
  const fault =
    insn.opcode === 0xcc
      ? new SoftwareInterrupt(Vector.BP, insn.length)
      : insn.opcode === 0xf1
        ? new CpuFault(Vector.DB, 0, 0, 'int1', true)
        : new SoftwareInterrupt(insn.immediate & 0xff, insn.length)
  return (c) => {
    c.trap = fault
    c.blockExit = true
  }
}

/** F4 hlt. */
export function compileHlt(insn: Instruction): Op {
  const next = insn.address + insn.length
  return (c) => {
    requireCpl0(c, 'hlt')
    c.halted = true
    c.rip = next
  }
}

/** FA cli, FB sti. */
export function compileCliSti(insn: Instruction): Op {
  const sti = insn.opcode === 0xfb
  return (c) => {
    if (c.cpl > (c.eflags & IOPL) >>> 12) throw new CpuFault(Vector.GP, 0, 0, sti ? 'sti' : 'cli')
    if (sti) {
      if ((c.eflags & IF) === 0) c.interruptShadow = true
      c.eflags |= IF
    } else c.eflags &= ~IF
  }
}

/** 0F 01 C1 vmcall: a host service. */
export const vmcall: Op = (c) => c.host.hypercall(c)

/** 0F A2 cpuid. */
export const cpuidOp: Op = (c) => {
  const [a, b, cx, d] = cpuid(c, c.r[0] >>> 0, c.r[2] >>> 0)
  c.r[0] = a
  c.r[1] = 0
  c.r[6] = b
  c.r[7] = 0
  c.r[2] = cx
  c.r[3] = 0
  c.r[4] = d
  c.r[5] = 0
}

/** 0F 31 rdtsc, 0F 01 F9 rdtscp. */
export function compileRdtsc(withAux: boolean): Op {
  return (c) => {
    if (c.cpl !== 0 && (c.cr4 & 4) !== 0) throw new CpuFault(Vector.GP, 0, 0, 'rdtsc with CR4.TSD')
    const t = c.host.readTsc(c)
    c.r[0] = Number(t & 0xffff_ffffn) | 0
    c.r[1] = 0
    c.r[4] = Number((t >> 32n) & 0xffff_ffffn) | 0
    c.r[5] = 0
    if (withAux) {
      c.r[2] = c.tscAux
      c.r[3] = 0
    }
  }
}

function linearToBig(v: number): bigint {
  return BigInt.asUintN(64, BigInt(v))
}
function bigToLinear(v: bigint): number {
  return Number(BigInt.asIntN(64, v))
}

export function readMsr(c: Cpu, msr: number): bigint {
  switch (msr) {
    case MSR_EFER:
      return BigInt(c.efer >>> 0)
    case MSR_STAR:
      return c.star
    case MSR_LSTAR:
      return linearToBig(c.lstar)
    case MSR_CSTAR:
      return linearToBig(c.cstar)
    case MSR_FMASK:
      return BigInt(c.fmask >>> 0)
    case MSR_FS_BASE:
      return linearToBig(c.fsBase)
    case MSR_GS_BASE:
      return linearToBig(c.gsBase)
    case MSR_KERNEL_GS_BASE:
      return linearToBig(c.kernelGsBase)
    case MSR_TSC:
      return c.host.readTsc(c)
    case MSR_TSC_AUX:
      return BigInt(c.tscAux >>> 0)
  }
  const v = c.msrs.get(msr)
  if (v === undefined) {
    if (msr === MSR_PAT) return PAT_DEFAULT
    throw new CpuFault(Vector.GP, 0, 0, `rdmsr of unknown MSR 0x${msr.toString(16)}`)
  }
  return v
}

/** IA32_PAT: the memory types are stored (no caches to apply them to); power-on value, and reserved types #GP. */
const MSR_PAT = 0x277
const PAT_DEFAULT = 0x0007040600070406n
function checkPat(v: bigint): void {
  for (let i = 0n; i < 64n; i += 8n) {
    const t = (v >> i) & 0xffn
    if (t === 2n || t === 3n || t > 7n) throw new CpuFault(Vector.GP, 0, 0, 'IA32_PAT: reserved memory type')
  }
}

export function writeMsr(c: Cpu, msr: number, v: bigint): void {
  const canonical = (x: bigint) => {
    const n = bigToLinear(x)
    if (!(n >= -0x8000_0000_0000 && n < 0x8000_0000_0000))
      throw new CpuFault(Vector.GP, 0, 0, 'non-canonical MSR value')
    return n
  }
  if (msr === MSR_PAT) checkPat(v)
  switch (msr) {
    case MSR_EFER:
      c.efer = (Number(v & 0xffffn) & ~EFER_LMA) | EFER_LMA
      c.flushTlb()
      return
    case MSR_STAR:
      c.star = v
      return
    case MSR_LSTAR:
      c.lstar = canonical(v)
      return
    case MSR_CSTAR:
      c.cstar = canonical(v)
      return
    case MSR_FMASK:
      c.fmask = Number(v & 0xffff_ffffn) | 0
      return
    case MSR_FS_BASE:
      c.fsBase = canonical(v)
      return
    case MSR_GS_BASE:
      c.gsBase = canonical(v)
      return
    case MSR_KERNEL_GS_BASE:
      c.kernelGsBase = canonical(v)
      return
    case MSR_TSC_AUX:
      c.tscAux = Number(v & 0xffff_ffffn) | 0
      return
  }
  c.msrs.set(msr, v)
}

/** 0F 32 rdmsr, 0F 30 wrmsr. */
export function compileMsr(write: boolean): Op {
  return (c) => {
    requireCpl0(c, write ? 'wrmsr' : 'rdmsr')
    const msr = c.r[2] >>> 0
    if (write) {
      writeMsr(c, msr, (BigInt(c.r[4] >>> 0) << 32n) | BigInt(c.r[0] >>> 0))
      return
    }
    const v = readMsr(c, msr)
    c.r[0] = Number(v & 0xffff_ffffn) | 0
    c.r[1] = 0
    c.r[4] = Number((v >> 32n) & 0xffff_ffffn) | 0
    c.r[5] = 0
  }
}

/** 0F 20 / 0F 22: mov from / to a control register (the r/m is always a register). */
export function compileMovCr(insn: Instruction): Op {
  const cr = insn.reg
  const g = 2 * insn.rm
  const toCr = insn.opcode === 0x22
  if (![0, 2, 3, 4, 8].includes(cr))
    return () => {
      throw new CpuFault(Vector.UD, 0, 0, `mov cr${cr}`)
    }
  return (c) => {
    requireCpl0(c, 'mov cr')
    if (!toCr) {
      const v = cr === 0 ? c.cr0 >>> 0 : cr === 2 ? c.cr2 : cr === 3 ? c.cr3 : cr === 4 ? c.cr4 : c.cr8
      setRegLinear(c, insn.rm, v)
      return
    }
    const lo = c.r[g]
    const v = c.r[g + 1] * TWO_32 + (lo >>> 0)
    switch (cr) {
      case 0:
        c.cr0 = lo
        c.flushTlb()
        break
      case 2:
        c.cr2 = v
        break
      case 3:
        c.setCr3((lo & ~0xfff) >>> 0)
        break
      case 4:
        c.cr4 = lo
        if ((lo & CR4_PGE) === 0) c.flushTlb()
        break
      default:
        c.cr8 = lo & 15
    }
  }
}

/** 0F 21 / 0F 23: mov from / to a debug register. */
export function compileMovDr(insn: Instruction): Op {
  let dr = insn.reg
  if (dr === 4 || dr === 5) dr += 2
  const toDr = insn.opcode === 0x23
  if (dr > 7)
    return () => {
      throw new CpuFault(Vector.UD, 0, 0, `mov dr${dr}`)
    }
  return (c) => {
    requireCpl0(c, 'mov dr')
    if (!toDr) {
      const v = dr < 4 ? c.dr[dr] : dr === 6 ? (c.dr6 | DR6_FIXED) >>> 0 : c.dr7 >>> 0
      setRegLinear(c, insn.rm, v)
      return
    }
    const lo = c.r[2 * insn.rm]
    const v = c.r[2 * insn.rm + 1] * TWO_32 + (lo >>> 0)
    if (dr === 6) {
      // DR6 is status only: clearing it (every #DB handler does) re-arms nothing.
      c.dr6 = lo | DR6_FIXED
      return
    }
    if (dr < 4) c.dr[dr] = v
    else c.dr7 = lo | 0x400
    updateDebugState(c)
  }
}

/** 0F 01 F8 swapgs. */
export const swapgs: Op = (c) => {
  requireCpl0(c, 'swapgs')
  const t = c.gsBase
  c.gsBase = c.kernelGsBase
  c.kernelGsBase = t
}

/** 0F 01 /7 invlpg m. */
export function compileInvlpg(insn: Instruction): Op {
  const ea = compileEa(insn)
  return (c) => {
    requireCpl0(c, 'invlpg')
    c.invlpg(ea(c))
  }
}

/** 0F 01 /0 sgdt, /1 sidt, /2 lgdt, /3 lidt: 2-byte limit then 8-byte base. */
export function compileDescriptorTable(insn: Instruction): Op {
  const which = insn.reg & 7
  const ea = compileEa(insn)
  return (c) => {
    const a = ea(c)
    if (which >= 2) {
      requireCpl0(c, which === 2 ? 'lgdt' : 'lidt')
      const limit = c.read16(a)
      const base = c.readLinear(a + 2)
      if (which === 2) {
        c.gdtBase = base
        c.gdtLimit = limit
      } else {
        c.idtBase = base
        c.idtLimit = limit
      }
      return
    }
    const base = which === 0 ? c.gdtBase : c.idtBase
    c.probeWrite(a, 10)
    c.write16(a, which === 0 ? c.gdtLimit : c.idtLimit)
    c.write64(a + 2, base | 0, Math.floor(base / TWO_32) | 0)
  }
}

/** 0F 00 /3 ltr: load the 64-bit TSS base from the GDT descriptor. /1 str, /2 lldt, /0 sldt. */
export function compileGroup6(insn: Instruction): Op {
  const which = insn.reg & 7
  const rd = readRm(insn, 2)
  if (which === 3) {
    return (c) => {
      requireCpl0(c, 'ltr')
      const sel = rd(c)
      const d = c.gdtBase + (sel & ~7)
      const w0 = c.read32(d)
      const w1 = c.read32(d + 4)
      const w2 = c.read32(d + 8)
      c.trBase = w2 * TWO_32 + (((w1 & 0xff000000) | ((w1 & 0xff) << 16) | (w0 >>> 16)) >>> 0)
      c.trSel = sel
    }
  }
  if (which === 2) {
    return (c) => {
      requireCpl0(c, 'lldt')
      c.ldtSel = rd(c)
    }
  }
  if (which === 0 || which === 1) {
    return (c) => {
      const v = which === 1 ? c.trSel : c.ldtSel
      if (insn.mod === 3) setRegLinear(c, insn.rm, v)
      else c.write16(compileEa(insn)(c), v)
    }
  }
  return () => {
    throw new Unimplemented(`0f 00 /${which}`)
  }
}

/** Privileged no-ops for an emulator without caches: clts, invd, wbinvd. */
export function compilePrivilegedNop(name: string): Op {
  return (c) => requireCpl0(c, name)
}

/** 0F 0B ud2, 0F B9 ud1, 0F FF ud0. */
export const ud: Op = () => {
  throw new CpuFault(Vector.UD, 0, 0, 'ud')
}

/** in/out/ins/outs: #GP(0) unless CPL <= IOPL; the machine has no I/O ports behind them. */
export const ioPort: Op = (c) => {
  if (c.cpl > (c.eflags & IOPL) >>> 12) throw new CpuFault(Vector.GP, 0, 0, 'I/O instruction with CPL > IOPL')
  throw new Unimplemented('I/O port access (the machine has no port devices)')
}
