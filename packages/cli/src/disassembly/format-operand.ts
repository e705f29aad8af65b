// One operand in Intel syntax as capstone spells it:
// 'rbp', 'qword ptr [rbp - 8]', 'qword ptr gs:[0x1d4c0]', '0x10', '0xffffffff81000010'.

import type { Operand } from '@probekit/x86-emu'
import { formatAddress, formatSigned } from './hex.js'

const GPR64 = ['rax', 'rcx', 'rdx', 'rbx', 'rsp', 'rbp', 'rsi', 'rdi']
const GPR32 = ['eax', 'ecx', 'edx', 'ebx', 'esp', 'ebp', 'esi', 'edi']

const SIZE_NAMES: Record<number, string> = {
  1: 'byte',
  2: 'word',
  4: 'dword',
  6: 'fword',
  8: 'qword',
  10: 'xword',
  16: 'xmmword',
  32: 'ymmword',
  64: 'zmmword',
}

function gprName(n: number, addressSize: 4 | 8): string {
  if (n < 8) return (addressSize === 8 ? GPR64 : GPR32)[n]
  return addressSize === 8 ? `r${n}` : `r${n}d`
}

function formatMemory(op: Extract<Operand, { kind: 'mem' }>, addressSize: 4 | 8): string {
  const terms: string[] = []
  if (op.ripRelative) terms.push(addressSize === 8 ? 'rip' : 'eip')
  else if (op.base >= 0) terms.push(gprName(op.base, addressSize))
  if (op.index >= 0)
    terms.push(
      op.scale === 1 ? gprName(op.index, addressSize) : `${gprName(op.index, addressSize)}*${op.scale}`,
    )
  let inside: string
  if (terms.length === 0) {
    // No registers: the displacement is an absolute address.
    inside = formatAddress(op.displacement)
  } else {
    inside = terms.join(' + ')
    if (op.displacement !== 0) {
      inside +=
        op.displacement < 0 ? ` - ${formatSigned(-op.displacement)}` : ` + ${formatSigned(op.displacement)}`
    }
  }
  const segment = op.segment ? `${op.segment}:` : ''
  // lea and friends compute an address without accessing memory: no size.
  const size = SIZE_NAMES[op.size]
  return `${size ? `${size} ptr ` : ''}${segment}[${inside}]`
}

export function formatOperand(op: Operand, addressSize: 4 | 8): string {
  switch (op.kind) {
    case 'reg':
      return op.name
    case 'mem':
      return formatMemory(op, addressSize)
    case 'imm':
      return formatSigned(op.bigValue)
    case 'rel':
      return formatAddress(op.target)
    case 'far':
      return `${formatSigned(op.selector)}:${formatSigned(op.offset)}`
  }
}
