// The block compiler: turns a hot block into one JavaScript function.
//
// Hot instruction forms become inline code (templates.ts) with register
// indices and immediates as constants; every other instruction calls the
// interpreter's closure for it. The function returns how many instructions
// completed; before any instruction that can fault it records the index in
// Cpu.ci, so faults stay precise. Writes may hit code (the block's own
// page included), so after each one the function returns if the code cache
// asked the CPU to leave the block.

import type { Cpu } from '../cpu/cpu.js'
import { type Instruction, InstructionFlag } from '../decoder/instruction.js'
import type { Op } from '../exec/op.js'
import { type JitRuntime, runtime } from './runtime.js'
import { template } from './templates.js'

export type CompiledBlock = (c: Cpu, ops: Op[], budget: number) => number

let available = true

const BRANCHES = InstructionFlag.Call | InstructionFlag.Jump | InstructionFlag.Conditional

/** A block whose last instruction is a relative branch back to its first: it can loop inside its function. */
function isSelfLoop(insns: readonly Instruction[]): boolean {
  const last = insns[insns.length - 1]
  return (
    last.branchTarget === insns[0].address &&
    (last.flags & (InstructionFlag.Conditional | InstructionFlag.Jump)) !== 0 &&
    (last.flags & InstructionFlag.Relative) !== 0 &&
    template(last) !== null
  )
}

/**
 * Source of the block function for these instructions (exposed for tests and
 * debugging). It returns how many instructions completed. A self-loop runs
 * its iterations inside the function while RIP comes back to its start and
 * the budget allows, so hot inner loops never return to the runner; Cpu.ld
 * counts the instructions of completed iterations for a fault mid-way.
 */
export function blockSource(insns: readonly Instruction[]): string {
  const loop = isSelfLoop(insns)
  const n = insns.length
  const done = loop ? 'done+' : ''
  const lines = [loop ? 'const r=c.r;let t=0;let done=0;for(;;){' : 'const r=c.r;let t=0;']
  insns.forEach((insn, k) => {
    const tpl = template(insn)
    if (tpl === null) lines.push(`c.ci=${k};ops[${k}](c);if(c.blockExit)return ${done}${k + 1};`)
    else {
      lines.push(
        `${tpl.mayFault ? `c.ci=${k};` : ''}${tpl.code}${tpl.mayWrite ? `if(c.blockExit)return ${done}${k + 1};` : ''}`,
      )
    }
    // A branch the block continues after (see block.ts): anywhere else it goes leaves the block.
    if (k < n - 1 && (insn.flags & BRANCHES) !== 0)
      lines.push(`if(c.rip!==${insns[k + 1].address})return ${done}${k + 1};`)
  })
  if (loop) {
    lines.push(`done+=${n};c.ld=done;if(c.rip!==${insns[0].address}||done+${n}>budget)return done;}`)
  } else lines.push(`return ${n};`)
  return lines.join('\n')
}

/** Compile a block, or null where code generation is unavailable (e.g. a CSP without unsafe-eval). */
export function compileBlock(insns: readonly Instruction[]): CompiledBlock | null {
  if (!available) return null
  try {
    const make = new Function('rt', `return function block(c, ops, budget) {\n${blockSource(insns)}\n}`) as (
      rt: JitRuntime,
    ) => CompiledBlock
    return make(runtime)
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new Error(`block compiler produced invalid code: ${e.message}\n${blockSource(insns)}`)
    available = false
    return null
  }
}
