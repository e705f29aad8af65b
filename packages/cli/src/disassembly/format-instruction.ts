// An instruction's text ('mov rbp, rsp', 'lock cmpxchg ...', 'rep stosq ...')
// and the short labels that matter to a prober (call, ret, int3, ...).

import { InstructionFlag as Flag } from '@probekit/x86-emu'
import { formatOperand } from './format-operand.js'
import { formatAddress } from './hex.js'
import type { ListedInstruction } from './listed-instruction.js'

function repPrefix(insn: ListedInstruction): string {
  if (insn.rep === 0 || (insn.flags & Flag.StringOp) === 0) return ''
  if (insn.rep === 0xf2) return 'repne '
  return /^(cmps|scas)/.test(insn.mnemonic) ? 'repe ' : 'rep '
}

export function formatInstruction(insn: ListedInstruction): string {
  const prefix = `${insn.lock ? 'lock ' : ''}${repPrefix(insn)}`
  const operands = insn.operands.map((op) => formatOperand(op, insn.addressSize)).join(', ')
  return `${prefix}${insn.mnemonic}${operands ? ` ${operands}` : ''}`
}

const LABELS: ReadonlyArray<readonly [number, string]> = [
  [Flag.Call, 'call'],
  [Flag.Jump, 'jump'],
  [Flag.Conditional, 'conditional'],
  [Flag.Indirect, 'indirect'],
  [Flag.Ret, 'ret'],
  [Flag.Iret, 'iret'],
  [Flag.Int3, 'breakpoint'],
  [Flag.Int, 'interrupt'],
  [Flag.Syscall, 'syscall'],
  [Flag.Sysret, 'sysret'],
  [Flag.Hypercall, 'hypercall'],
  [Flag.Privileged, 'privileged'],
  [Flag.Halt, 'halt'],
  [Flag.Undefined, '#UD'],
]

export function instructionLabels(insn: ListedInstruction): string[] {
  const labels = LABELS.filter(([bit]) => (insn.flags & bit) !== 0).map(([, label]) => label)
  // What a RIP-relative operand points at: the address a copied instruction must keep reaching.
  for (const op of insn.operands) {
    if (op.kind === 'mem' && op.ripRelative) {
      labels.push(`rip -> ${formatAddress(insn.address + insn.length + op.displacement)}`)
    }
  }
  return labels
}
