// The machine-wide cache of compiled blocks, keyed by physical address.
//
// Every vCPU shares it. A frame that holds cached code is marked in
// PhysicalMemory.codeFrames and loses write permission in every TLB, so any
// write to it — from a vCPU or from the host — comes here first and drops
// the frame's blocks before anyone executes from it again.
//
// It is bounded: each block is charged an estimate of the host memory it
// holds (its decoded instructions' closures, and once hot its compiled
// function), and a block that would take the total past the budget first
// empties the cache, as QEMU's tb_flush does when its code buffer is full.
// Dropping everything is simple and deterministic: how the code splits into
// blocks never changes what the guest sees (instruction and cycle counts
// included), so a tiny budget and a huge one run a program identically,
// only slower, on any number of vCPUs (a quantum ends where the interpreter
// would end it, compiled or not: Machine.quantumEnd).

import type { Cpu } from '../cpu/cpu.js'
import type { Block } from '../exec/block.js'
import type { CompiledBlock } from '../jit/block-compiler.js'
import { dropCompiledBlocks } from '../jit/block-compiler.js'
import type { PhysicalMemory } from '../memory/physical-memory.js'

/**
 * Host bytes a block costs, estimated (V8 heap growth of runs executing
 * 10^4 to 10^6 distinct instructions, Node 20): the Block with
 * its arrays, each decoded instruction's op closure and context, and a
 * compiled block's function (bytecode, optimised code, deoptimisation data,
 * feedback: most of it per instruction).
 */
export const BLOCK_BYTES = 512
export const DECODED_INSN_BYTES = 320
export const COMPILED_BLOCK_BYTES = 2048
export const COMPILED_INSN_BYTES = 800

/**
 * The default budget. Issue 16's memory goal (RSS growth at most 16 MiB
 * plus 1.5 times the guest's pages) leaves bash-static, whose code runs to
 * about 30 MiB by this estimate, no more than this (packages/kernel
 * README, Memory); compute's whole code is 4.5 MiB.
 */
export const DEFAULT_CODE_CACHE_SIZE = 8 * 1024 * 1024

const decodedBytes = (b: Block) => BLOCK_BYTES + b.length * DECODED_INSN_BYTES

/** Estimated host bytes of block b as it stands (compiled or not). */
export function blockBytes(b: Block): number {
  return b.jit === null
    ? decodedBytes(b)
    : decodedBytes(b) + COMPILED_BLOCK_BYTES + b.length * COMPILED_INSN_BYTES
}

export class CodeCache {
  private readonly blocks = new Map<number, Block>()
  private readonly byFrame = new Map<number, Block[]>()
  /** Blocks dropped because their code was written (self-modifying code, probes). */
  invalidations = 0
  /** Times the cache was emptied because it was full (tb_flush). */
  flushes = 0
  /**
   * Estimated host bytes held since the last flush. A block invalidated by
   * a write gives back its decoded part only: its compiled function may live
   * on in the realm-wide function cache (block-compiler.ts) until the flush.
   */
  bytes = 0

  /**
   * @param budget estimated host bytes past which the cache is emptied
   *   (default DEFAULT_CODE_CACHE_SIZE); may be changed at any time, it is
   *   looked at when the next block comes in.
   */
  constructor(
    private readonly memory: PhysicalMemory,
    private readonly cpus: readonly Cpu[],
    public budget = DEFAULT_CODE_CACHE_SIZE,
  ) {
    if (!(budget > 0)) throw new Error(`code cache budget must be a positive number of bytes, not ${budget}`)
    memory.setCodeWriteListener((frame) => this.invalidateFrame(frame))
  }

  get size(): number {
    return this.blocks.size
  }

  /** The blocks cached now. */
  values(): IterableIterator<Block> {
    return this.blocks.values()
  }

  lookup(phys: number, virt: number): Block | undefined {
    const b = this.blocks.get(phys)
    return b !== undefined && b.virt === virt ? b : undefined
  }

  insert(block: Block): void {
    const cost = blockBytes(block)
    // Full: start again. Blocks are only inserted between blocks (the run loop's lookup), so no
    // vCPU is inside one of the blocks dropped here.
    if (this.bytes + cost > this.budget && this.blocks.size > 0) this.flush()
    const old = this.blocks.get(block.phys)
    if (old) this.unlink(old)
    this.blocks.set(block.phys, block)
    this.bytes += cost
    for (const f of block.frames) {
      let list = this.byFrame.get(f)
      if (!list) {
        list = []
        this.byFrame.set(f, list)
        if (this.memory.codeFrames[f] === 0) {
          this.memory.codeFrames[f] = 1
          for (const c of this.cpus) c.tlb.revokeWrite(f)
        }
      }
      list.push(block)
    }
  }

  /** Block b (in the cache) got its compiled form: charged to the budget, looked at when the next block comes in. */
  setCompiled(b: Block, fn: CompiledBlock | null): void {
    if (fn === null) return
    const before = blockBytes(b)
    b.jit = fn
    if (b.valid) this.bytes += blockBytes(b) - before
  }

  private unlink(block: Block): void {
    if (block.valid) this.bytes -= decodedBytes(block)
    block.valid = false
    for (const f of block.frames) {
      const list = this.byFrame.get(f)
      if (!list) continue
      const i = list.indexOf(block)
      if (i >= 0) list.splice(i, 1)
    }
  }

  invalidateFrame(frame: number): void {
    const list = this.byFrame.get(frame)
    this.memory.codeFrames[frame] = 0
    if (!list) return
    this.byFrame.delete(frame)
    for (const b of list) {
      if (b.valid) this.bytes -= decodedBytes(b)
      b.valid = false
      if (this.blocks.get(b.phys) === b) this.blocks.delete(b.phys)
      this.invalidations++
    }
    // A CPU may be executing one of these blocks: make it leave after the current instruction.
    for (const c of this.cpus) c.blockExit = true
  }

  /**
   * tb_flush: drop every block, the chain links between them and the
   * realm's shared block functions, so that nothing keeps them from the
   * garbage collector (a vCPU's chain starts from the block it ran last:
   * that one is invalid now, so it is never followed).
   */
  flush(): void {
    for (const [f, list] of this.byFrame) {
      this.memory.codeFrames[f] = 0
      for (const b of list) {
        b.valid = false
        b.succ = null
        b.succ2 = null
      }
    }
    this.byFrame.clear()
    this.blocks.clear()
    this.bytes = 0
    this.flushes++
    dropCompiledBlocks()
  }

  /** Drop every block (as if all code was written). */
  clear(): void {
    for (const f of [...this.byFrame.keys()]) this.invalidateFrame(f)
  }
}
