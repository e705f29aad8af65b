// biome-ignore-all lint/complexity/useSimpleNumberKeys: opcode tables are keyed by hex opcode, as in the SDM
// One-byte opcode map (SDM Vol. 2 Table A-2), 64-bit mode.
//
// Missing entries are #UD in 64-bit mode: 06/07/0E/16/17/1E/1F (push/pop
// segment), 27/2F/37/3F (BCD), 60/61 (pusha/popa), 82 (alias of 80),
// 9A/EA (far absolute), CE (into), D4/D5 (aam/aad), D6 (salc). Prefix bytes
// (26 2E 36 3E 40-4F 64-67 F0 F2 F3) and escapes (0F C4 C5 62 8F-XOP) never
// reach this table.

import { grp, leaf, mod, type OpcodeTable, rm, type Src, table } from './spec.js'
import { X87 } from './x87.js'

const ALU = ['add', 'or', 'adc', 'sbb', 'and', 'sub', 'xor', 'cmp']
const SHIFT = ['rol', 'ror', 'rcl', 'rcr', 'shl', 'shr', 'sal', 'sar']
const CC = ['o', 'no', 'b', 'ae', 'e', 'ne', 'be', 'a', 's', 'ns', 'p', 'np', 'l', 'ge', 'le', 'g']

const src: Record<number, Src> = {}

for (let i = 0; i < 8; i++) {
  const m = ALU[i]
  const dst = m === 'cmp' ? 'ro' : 'lock'
  src[i * 8 + 0] = `${m} Eb,Gb | ${dst}`
  src[i * 8 + 1] = `${m} Ev,Gv | ${dst}`
  src[i * 8 + 2] = `${m} Gb,Eb${m === 'cmp' ? ' | ro' : ''}`
  src[i * 8 + 3] = `${m} Gv,Ev${m === 'cmp' ? ' | ro' : ''}`
  src[i * 8 + 4] = `${m} AL,Ib${m === 'cmp' ? ' | ro' : ''}`
  src[i * 8 + 5] = `${m} rAX,Iz${m === 'cmp' ? ' | ro' : ''}`
}
const aluGroup = (ops: string) => grp(...ALU.map((m) => `${m} ${ops} | ${m === 'cmp' ? 'ro' : 'lock'}`))
const shiftGroup = (ops: string) => grp(...SHIFT.map((m) => `${m} ${ops}`))

for (let r = 0; r < 8; r++) {
  src[0x50 + r] = 'push Zv | d64 push ro'
  src[0x58 + r] = 'pop Zv | d64 pop wo'
  src[0x90 + r] = 'xchg Zv,rAX' // 0x90 itself is special-cased (nop / pause / xchg r8)
  src[0xb0 + r] = 'mov Zb,Ib | wo'
  src[0xb8 + r] = 'mov/mov/movabs Zv,Iv | wo'
}
for (let c = 0; c < 16; c++) src[0x70 + c] = `j${CC[c]} Jb | cond rel f64`

Object.assign(src, {
  0x63: 'movsxd Gv,Ez | wo',
  0x68: 'push Iz | d64 push',
  0x69: 'imul Gv,Ev,Iz | wo',
  0x6a: 'push Ib | d64 push',
  0x6b: 'imul Gv,Ev,Ib | wo',
  0x6c: 'insb Yb,DX | str priv wo',
  0x6d: 'insw/insd/insd Yz,DX | str priv wo',
  0x6e: 'outsb DX,Xb | str priv',
  0x6f: 'outsw/outsd/outsd DX,Xz | str priv',
  0x80: aluGroup('Eb,Ib'),
  0x81: aluGroup('Ev,Iz'),
  0x83: aluGroup('Ev,Ib'),
  0x84: 'test Eb,Gb | ro',
  0x85: 'test Ev,Gv | ro',
  0x86: 'xchg Eb,Gb | lock',
  0x87: 'xchg Ev,Gv | lock',
  0x88: 'mov Eb,Gb | wo',
  0x89: 'mov Ev,Gv | wo',
  0x8a: 'mov Gb,Eb | wo',
  0x8b: 'mov Gv,Ev | wo',
  // Segment registers 6 and 7 do not exist; CS cannot be loaded with mov.
  0x8c: grp(...[0, 1, 2, 3, 4, 5].map(() => 'mov Rv/Mw,Sw | wo')),
  0x8d: 'lea Gv,M0 | wo nomem nofault',
  0x8e: grp(
    'mov Sw,Rv/Mw | wo',
    null,
    'mov Sw,Rv/Mw | wo',
    'mov Sw,Rv/Mw | wo',
    'mov Sw,Rv/Mw | wo',
    'mov Sw,Rv/Mw | wo',
  ),
  0x8f: grp('pop Ev | d64 pop wo'),
  0x98: 'cbw/cwde/cdqe',
  0x99: 'cwd/cdq/cqo',
  0x9b: 'wait',
  0x9c: 'pushf/pushfq/pushfq | d64 push',
  0x9d: 'popf/popfq/popfq | d64 pop',
  0x9e: 'sahf',
  0x9f: 'lahf',
  0xa0: 'mov/movabs AL,Ob | wo asz',
  0xa1: 'mov/movabs rAX,Ov | wo asz',
  0xa2: 'mov/movabs Ob,AL | wo asz',
  0xa3: 'mov/movabs Ov,rAX | wo asz',
  0xa4: 'movsb Yb,Xb | str wo',
  0xa5: 'movsw/movsd/movsq Yv,Xv | str wo',
  0xa6: 'cmpsb Xb,Yb | str ro strread',
  0xa7: 'cmpsw/cmpsd/cmpsq Xv,Yv | str ro strread',
  0xa8: 'test AL,Ib | ro',
  0xa9: 'test rAX,Iz | ro',
  0xaa: 'stosb Yb,AL | str wo',
  0xab: 'stosw/stosd/stosq Yv,rAX | str wo',
  0xac: 'lodsb AL,Xb | str wo',
  0xad: 'lodsw/lodsd/lodsq rAX,Xv | str wo',
  0xae: 'scasb AL,Yb | str ro strread',
  0xaf: 'scasw/scasd/scasq rAX,Yv | str ro strread',
  0xc0: shiftGroup('Eb,Ib'),
  0xc1: shiftGroup('Ev,Ib'),
  0xc2: 'ret Iw | ret f64 pop',
  0xc3: 'ret | ret f64 pop',
  0xc6: grp('mov Eb,Ib | wo', null, null, null, null, null, null, mod(null, rm('xabort Ib'))),
  0xc7: grp('mov Ev,Iz | wo', null, null, null, null, null, null, mod(null, rm('xbegin Jz | cond rel'))),
  0xc8: 'enter Iw,I2b | d64 push',
  0xc9: 'leave | d64 pop',
  0xca: 'retf/retf/retfq Iw | ret far pop',
  0xcb: 'retf/retf/retfq | ret far pop',
  0xcc: 'int3 | int3 fault',
  0xcd: 'int Ib | int fault',
  0xcf: 'iret/iretd/iretq | iret pop fault',
  0xd0: shiftGroup('Eb,1'),
  0xd1: shiftGroup('Ev,1'),
  0xd2: shiftGroup('Eb,CL'),
  0xd3: shiftGroup('Ev,CL'),
  0xd7: 'xlatb | fault',
  0xe0: 'loopne Jb | cond rel f64',
  0xe1: 'loope Jb | cond rel f64',
  0xe2: 'loop Jb | cond rel f64',
  0xe3: 'jecxz/jrcxz Jb | cond rel f64 asz',
  0xe4: 'in AL,Ib | priv wo',
  0xe5: 'in eAX,Ib | priv wo',
  0xe6: 'out Ib,AL | priv ro',
  0xe7: 'out Ib,eAX | priv ro',
  0xe8: 'call Jz | call rel f64 push',
  0xe9: 'jmp Jz | jmp rel f64',
  0xeb: 'jmp Jb | jmp rel f64',
  0xec: 'in AL,DX | priv wo',
  0xed: 'in eAX,DX | priv wo',
  0xee: 'out DX,AL | priv ro',
  0xef: 'out DX,eAX | priv ro',
  0xf1: 'int1 | int fault',
  0xf4: 'hlt | halt priv',
  0xf5: 'cmc',
  // /1 is an undocumented alias of /0 that CPUs (and capstone) accept.
  0xf6: grp(
    'test Eb,Ib | ro',
    'test Eb,Ib | ro',
    'not Eb | lock',
    'neg Eb | lock',
    'mul Eb | ro',
    'imul Eb | ro',
    'div Eb | ro fault',
    'idiv Eb | ro fault',
  ),
  0xf7: grp(
    'test Ev,Iz | ro',
    'test Ev,Iz | ro',
    'not Ev | lock',
    'neg Ev | lock',
    'mul Ev | ro',
    'imul Ev | ro',
    'div Ev | ro fault',
    'idiv Ev | ro fault',
  ),
  0xf8: 'clc',
  0xf9: 'stc',
  0xfa: 'cli | priv',
  0xfb: 'sti | priv',
  0xfc: 'cld',
  0xfd: 'std',
  0xfe: grp('inc Eb | lock', 'dec Eb | lock'),
  0xff: grp(
    'inc Ev | lock',
    'dec Ev | lock',
    'call Ev | call ind f64 ro push',
    mod('lcall Mp | call ind far ro push', null),
    'jmp Ev | jmp ind f64 ro',
    mod('ljmp Mp | jmp ind far ro', null),
    'push Ev | d64 push ro',
    null,
  ),
})
for (let i = 0; i < 8; i++) src[0xd8 + i] = X87[i]

export const MAP_1BYTE: OpcodeTable = table(src)

/** 90 without REX.B is nop (pause with F3), not xchg eax, eax. */
export const NOP = leaf('nop')
export const PAUSE = leaf('pause')
