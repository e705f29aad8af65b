// Blocks: runs of compiled instructions from one page, ending at the first
// branch, block-ending instruction or page end. They are superblocks: a
// direct jmp or call whose target is on the same page continues the block
// at the target, and a forward conditional branch continues it on the
// fall-through path and leaves the block when taken (a side exit). So a
// loop whose body spans several basic blocks is one block whose last
// branch goes back to its start, which the block compiler runs as a loop.

import { Access, type Cpu } from '../cpu/cpu.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { tryDecode } from '../decoder/decode.js'
import { DecodeError, type Instruction, InstructionFlag } from '../decoder/instruction.js'
import type { CompiledBlock } from '../jit/block-compiler.js'
import { BRANCH_FLAGS, compileInstruction } from './compile.js'
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
  /** exits[k] = 1 where op k (not the last) is a branch the block continues after: RIP it sets other than ips[k+1] leaves the block. Null when there is none. */
  exits: Uint8Array | null
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
  /** The compiled form once the block is hot, else null. */
  jit: CompiledBlock | null
}

/** Branches that never continue a block: through a trap, the host, another privilege level or the stack. */
const LEAVES = BRANCH_FLAGS & ~(InstructionFlag.Call | InstructionFlag.Jump | InstructionFlag.Conditional)

/**
 * Where a block continues after branch `insn`, given the block's start and
 * the addresses it already holds; null ends the block there. Only relative
 * branches with a full-width target, staying on the start's page.
 */
function continuation(insn: Instruction, start: number, ips: readonly number[]): number | null {
  const f = insn.flags
  const t = insn.branchTarget
  if ((f & LEAVES) !== 0 || (f & InstructionFlag.Relative) === 0 || t === null || insn.operandSize === 2)
    return null
  const next = insn.address + insn.length
  const page = start - (start & 0xfff)
  if ((f & InstructionFlag.Conditional) !== 0) {
    // A forward conditional branch: continue on the fall-through path, unless that is on the next
    // page: then the branch ends the block, so RIP is what it set.
    if (t > insn.address) return next < page + 4096 ? next : null
    // A backward one is a loop edge. Back to an instruction the block holds, it ends the block (the
    // block compiler runs a branch back to the block's start as a loop). Back to code before the
    // block (a block that starts mid-loop, e.g. at the return address of a call in the loop body),
    // continue on the taken path, the loop's, so the whole body is one block.
    return t >= page && t < start && !ips.includes(t) ? t : null
  }
  if ((f & (InstructionFlag.Jump | InstructionFlag.Call)) === 0) return null
  if (t < page || t >= page + 4096 || ips.includes(t)) return null
  return t
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
  const ips: number[] = []
  const frames = [pageStart / 4096]
  let addr = rip
  let offset = phys & 0xfff
  let lastBranch = false
  let endsEarly = false
  let exits: Uint8Array | null = null
  const pageVirt = rip - (rip & 0xfff)
  const page = mem.subarray(pageStart, pageStart + 4096)
  // A backward conditional branch the block went on past (see continuation), and its fall-through.
  let backAt = -1
  let backNext = 0
  // A call in the block returns to the block's start.
  let callsBack = false
  let last: Instruction | null = null
  while (ops.length < MAX_BLOCK_INSTRUCTIONS && offset < 4096) {
    let insn = tryDecode(page, addr, offset)
    if (insn instanceof DecodeError && insn.reason === 'truncated') {
      // The instruction continues on the next page: it ends the block. When fetching that page
      // faults, the fault belongs to this instruction, so it starts a block of its own.
      let nextPhys: number
      try {
        nextPhys = c.translate(addr + (4096 - offset), Access.Exec, user)
      } catch (e) {
        if (ops.length > 0 && e instanceof CpuFault) break
        throw e
      }
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
    ips.push(addr)
    addr += insn.length
    offset += insn.length
    last = insn
    if ((compiled.traits & OpTraits.Branch) !== 0) {
      const to = ops.length < MAX_BLOCK_INSTRUCTIONS ? continuation(insn, rip, ips) : null
      if (to === null || frames.length > 1) {
        lastBranch = true
        break
      }
      if ((insn.flags & InstructionFlag.Call) !== 0 && addr === rip) callsBack = true
      if (to < insn.address && backAt < 0) {
        backAt = ops.length - 1
        backNext = addr
      }
      exits ??= new Uint8Array(MAX_BLOCK_INSTRUCTIONS)
      exits[ops.length - 1] = 1
      addr = to
      offset = to - pageVirt
      continue
    }
    if ((compiled.traits & OpTraits.EndsBlock) !== 0) {
      endsEarly = true
      break
    }
    if (frames.length > 1) break
  }
  // Going on past a backward branch pays only when the block comes back to its start (the
  // block compiler then runs it as a loop): it ends with a ret and holds the call that returns
  // there, or with a branch to its start. Otherwise the backward branch ends the block, as it
  // would have without going on (duplicating loop bodies into every block that reaches them).
  if (backAt >= 0) {
    const loops =
      lastBranch &&
      last !== null &&
      (((last.flags & InstructionFlag.Ret) !== 0 && callsBack) || last.branchTarget === rip)
    if (!loops) {
      ops.length = backAt + 1
      ips.length = backAt + 1
      exits?.fill(0, backAt)
      frames.length = 1
      addr = backNext
      lastBranch = true
      endsEarly = false
    }
  }
  // Cut short right after a branch it went on past (the fall-through's fetch faulted, or does not
  // decode): that branch ends the block, so where it goes is what it set, not the fall-through.
  if (!lastBranch && exits !== null && exits[ops.length - 1] === 1) {
    exits[ops.length - 1] = 0
    lastBranch = true
  }
  ips.push(addr)
  return {
    virt: rip,
    phys,
    ops,
    ips,
    length: ops.length,
    lastBranch,
    exits,
    endsEarly,
    frames,
    valid: true,
    hits: 0,
    succ: null,
    succ2: null,
    succEpoch: -1,
    jit: null,
  }
}

/** True when op k of the block sets RIP itself (a branch), so RIP after it is not simply ips[k+1]. */
export function setsRip(b: Block, k: number): boolean {
  return k === b.length - 1 ? b.lastBranch : b.exits !== null && b.exits[k] !== 0
}

/**
 * The instructions of block b decoded again from its frames in physical
 * memory, for the block compiler; null when one does not decode (a block
 * ending in #UD). Blocks do not keep their decoded instructions (about 1 KiB
 * each, and most blocks never get hot): while b is valid its bytes are the
 * ones it was built from, since a write to its frames invalidates it.
 */
export function decodeBlock(mem: Uint8Array, b: Block): Instruction[] | null {
  const pageVirt = b.virt - (b.virt & 0xfff)
  let page = mem.subarray(b.frames[0] * 4096, b.frames[0] * 4096 + 4096)
  if (b.frames.length > 1) {
    // The last instruction continues on the next frame.
    const joined = new Uint8Array(4096 + 15)
    joined.set(page)
    joined.set(mem.subarray(b.frames[1] * 4096, b.frames[1] * 4096 + 15), 4096)
    page = joined
  }
  const insns: Instruction[] = []
  for (let k = 0; k < b.length; k++) {
    const ip = b.ips[k]
    const insn = tryDecode(page, ip, ip - pageVirt)
    if (insn instanceof DecodeError) return null
    insns.push(insn)
  }
  return insns
}
