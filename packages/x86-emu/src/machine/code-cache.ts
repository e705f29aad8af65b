// The machine-wide cache of compiled blocks, keyed by physical address.
//
// Every vCPU shares it. A frame that holds cached code is marked in
// PhysicalMemory.codeFrames and loses write permission in every TLB, so any
// write to it — from a vCPU or from the host — comes here first and drops
// the frame's blocks before anyone executes from it again.

import type { Cpu } from '../cpu/cpu.js'
import type { Block } from '../exec/block.js'
import type { PhysicalMemory } from '../memory/physical-memory.js'

export class CodeCache {
  private readonly blocks = new Map<number, Block>()
  private readonly byFrame = new Map<number, Block[]>()
  /** Blocks dropped because their code was written (self-modifying code, probes). */
  invalidations = 0

  constructor(
    private readonly memory: PhysicalMemory,
    private readonly cpus: readonly Cpu[],
  ) {
    memory.setCodeWriteListener((frame) => this.invalidateFrame(frame))
  }

  get size(): number {
    return this.blocks.size
  }

  lookup(phys: number, virt: number): Block | undefined {
    const b = this.blocks.get(phys)
    return b !== undefined && b.virt === virt ? b : undefined
  }

  insert(block: Block): void {
    const old = this.blocks.get(block.phys)
    if (old) this.unlink(old)
    this.blocks.set(block.phys, block)
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

  private unlink(block: Block): void {
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
      b.valid = false
      if (this.blocks.get(b.phys) === b) this.blocks.delete(b.phys)
      this.invalidations++
    }
    // A CPU may be executing one of these blocks: make it leave after the current instruction.
    for (const c of this.cpus) c.blockExit = true
  }

  clear(): void {
    for (const f of [...this.byFrame.keys()]) this.invalidateFrame(f)
  }
}
