// Prints the block compiler's source for the block at an address of a
// workload's text (a debugging aid): dump-block.ts <elf> <hex address> [count].
import { readFileSync } from 'node:fs'
import { type Instruction, InstructionFlag } from '../src/decoder/instruction.js'
import { tryDecode } from '../src/index.js'
import { blockSource } from '../src/jit/block-compiler.js'
import { readElf } from '../test/support/elf.js'

const [path, at, count] = process.argv.slice(2)
const text = readElf(new Uint8Array(readFileSync(path))).segments.find((s) => s.flags.x)!
let addr = Number.parseInt(at, 16)
const insns: Instruction[] = []
for (let k = 0; k < Number(count ?? 64); k++) {
  const insn = tryDecode(text.data, addr, addr - text.vaddr)
  if (insn instanceof Error) break
  insns.push(insn)
  addr += insn.length
  if ((insn.flags & (InstructionFlag.Jump | InstructionFlag.Ret)) !== 0 && count === undefined) break
  if (
    (insn.flags & InstructionFlag.Conditional) !== 0 &&
    insn.branchTarget !== null &&
    insn.branchTarget < insn.address &&
    count === undefined
  )
    break
}
console.log(blockSource(insns))
