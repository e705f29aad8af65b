// What the executor runs: one compiled instruction is a closure over the CPU.

import type { Cpu } from '../cpu/cpu.js'
import type { Instruction } from '../decoder/instruction.js'

export type Op = (c: Cpu) => void

/** Compiles one decoded instruction into an Op. */
export type Compiler = (insn: Instruction) => Op

/** Per-instruction facts the block builder needs besides the op. */
export enum OpTraits {
  /** Sets RIP itself: must be the last op of a block. */
  Branch = 1,
  /** Must end its block although it falls through (mode, flag or code changes). */
  EndsBlock = 2,
}
