// Basic blocks: straight-line runs of compiled instructions from one page,
// ending at the first branch, block-ending instruction or page end.

import { Access, type Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { tryDecode } from '../decoder/decode.js'
import { DecodeError, type Instruction } from '../decoder/instruction.js'
import type { CompiledBlock } from '../jit/block-compiler.js'
import { compileInstruction } from './compile.js'
import { type Op, OpTraits } from './op.js'

export const MAX_BLOCK_INSTRUCTIONS = 64

export interface Block {
  /** Linear address of the first instruction. */
  virt: number
  /** Physical address of the first instruction (the cache key). */
  phys: number
  ops: Op[]
  /** ips[k] is the address of instruction k; ips[length] is the fall-through address. */
  ips: number[]
  length: number
  /** The last op sets RIP itself. */
  lastBranch: boolean
  /** The last op changes state later instructions depend on (popf, sti, mov cr, rep strings): the runner must look at the CPU after it. */
  endsEarly: boolean
  /** Frames whose bytes the block was decoded from. */
  frames: number[]
  /** False once a write to one of its frames invalidated it. */
  valid: boolean
  /** Times entered (for profiling and a future block compiler). */
  hits: number
  /** Chained successors (the last two blocks that followed this one) and the CPU map epoch they were linked under. */
  succ: Block | null
  succ2: Block | null
  succEpoch: number
  /** The decoded instructions (kept for the block compiler and for tools). */
  insns: Instruction[]
  /** The compiled form once the block is hot, else null. */
  jit: CompiledBlock | null
}

function faultOp(fault: CpuFault): Op {
  return () => {
    throw fault
  }
}

/** Decode and compile the block starting at the CPU's RIP. Fetch faults of the first instruction are thrown. */
export function buildBlock(c: Cpu, rip: number): Block {
  const user = c.cpl === 3
  const phys = c.translate(rip, Access.Exec, user)
  const mem = c.mem
  const pageStart = phys - (phys & 0xfff)
  const ops: Op[] = []
  const insns: Instruction[] = []
  const ips: number[] = []
  const frames = [pageStart / 4096]
  let addr = rip
  let offset = phys & 0xfff
  let lastBranch = false
  let endsEarly = false
  const page = mem.subarray(pageStart, pageStart + 4096)
  while (ops.length < MAX_BLOCK_INSTRUCTIONS && offset < 4096) {
    let insn = tryDecode(page, addr, offset)
    if (insn instanceof DecodeError && insn.reason === 'truncated') {
      // The instruction continues on the next page: it gets a block of its own.
      if (ops.length > 0) break
      const nextPhys = c.translate(addr + (4096 - offset), Access.Exec, user)
      const buf = new Uint8Array(15)
      const first = Math.min(15, 4096 - offset)
      buf.set(page.subarray(offset, offset + first), 0)
      buf.set(mem.subarray(nextPhys, nextPhys + 15 - first), first)
      frames.push(nextPhys / 4096)
      insn = tryDecode(buf, addr, 0)
    }
    if (insn instanceof DecodeError) {
      // Invalid encodings raise #UD when reached.
      if (ops.length > 0) break
      ops.push(faultOp(new CpuFault(Vector.UD, 0, 0, insn.message)))
      ips.push(addr)
      addr += 1
      break
    }
    const compiled = compileInstruction(insn)
    ops.push(compiled.op)
    insns.push(insn)
    ips.push(addr)
    addr += insn.length
    offset += insn.length
    if ((compiled.traits & OpTraits.Branch) !== 0) {
      lastBranch = true
      break
    }
    if ((compiled.traits & OpTraits.EndsBlock) !== 0) {
      endsEarly = true
      break
    }
    if (frames.length > 1) break
  }
  ips.push(addr)
  return {
    virt: rip,
    phys,
    ops,
    ips,
    length: ops.length,
    lastBranch,
    endsEarly,
    frames,
    valid: true,
    hits: 0,
    succ: null,
    succ2: null,
    succEpoch: -1,
    insns,
    jit: null,
  }
}
