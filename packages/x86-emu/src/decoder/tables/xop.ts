// biome-ignore-all lint/complexity/useSimpleNumberKeys: opcode tables are keyed by hex opcode, as in the SDM
// AMD XOP maps 8, 9 and 0A (8F escape with map_select >= 8; AMD APM Vol. 4),
// plus TBM and LWP which share them. Map 8 always has an imm8, map 0A an
// imm32. XOP.pp must be 0.

import { grp, mod, type OpcodeTable, pfx, type Src, table } from './spec.js'

const np = (s: Src) => pfx(s)

const src8: Record<number, Src> = {
  0xa2: np('vpcmov Vx,Hx,Wx,Lx'),
  0xa3: np('vpperm Vdq,Hdq,Wdq,Ldq | l0'),
}
const MAC: Record<number, string> = {
  0x85: 'vpmacssww',
  0x86: 'vpmacsswd',
  0x87: 'vpmacssdql',
  0x8e: 'vpmacssdd',
  0x8f: 'vpmacssdqh',
  0x95: 'vpmacsww',
  0x96: 'vpmacswd',
  0x97: 'vpmacsdql',
  0x9e: 'vpmacsdd',
  0x9f: 'vpmacsdqh',
  0xa6: 'vpmadcsswd',
  0xb6: 'vpmadcswd',
}
for (const [op, m] of Object.entries(MAC)) src8[Number(op)] = np(`${m} Vdq,Hdq,Wdq,Ldq | l0 w0`)
const SIZES = ['b', 'w', 'd', 'q']
for (let i = 0; i < 4; i++) {
  src8[0xc0 + i] = np(`vprot${SIZES[i]} Vdq,Wdq,Ib | l0 w0`)
  src8[0xcc + i] = np(`vpcom${SIZES[i]} Vdq,Hdq,Wdq,Ib | l0 w0`)
  src8[0xec + i] = np(`vpcomu${SIZES[i]} Vdq,Hdq,Wdq,Ib | l0 w0`)
}

const tbm = (m: string) => `${m} By,Ey | l0 wo`
const src9: Record<number, Src> = {
  0x01: np(
    grp(
      null,
      tbm('blcfill'),
      tbm('blsfill'),
      tbm('blcs'),
      tbm('tzmsk'),
      tbm('blcic'),
      tbm('blsic'),
      tbm('t1mskc'),
    ),
  ),
  0x02: np(grp(null, tbm('blcmsk'), null, null, null, null, tbm('blci'))),
  0x12: np(mod(null, grp('llwpcb Ry | l0', 'slwpcb Ry | l0 wo'))),
  0x80: np('vfrczps Vx,Wx | w0 wo'),
  0x81: np('vfrczpd Vx,Wx | w0 wo'),
  0x82: np('vfrczss Vdq,Wss | l0 w0 wo'),
  0x83: np('vfrczsd Vdq,Wsd | l0 w0 wo'),
}
// XOP.W selects which of vvvv and r/m is the shift count.
for (let i = 0; i < 4; i++) {
  src9[0x90 + i] = np(`vprot${SIZES[i]} Vdq,Wdq,Hdq | l0`)
  src9[0x94 + i] = np(`vpshl${SIZES[i]} Vdq,Wdq,Hdq | l0`)
  src9[0x98 + i] = np(`vpsha${SIZES[i]} Vdq,Wdq,Hdq | l0`)
}
const HADD: Record<number, string> = {
  0xc1: 'vphaddbw',
  0xc2: 'vphaddbd',
  0xc3: 'vphaddbq',
  0xc6: 'vphaddwd',
  0xc7: 'vphaddwq',
  0xcb: 'vphadddq',
  0xd1: 'vphaddubw',
  0xd2: 'vphaddubd',
  0xd3: 'vphaddubq',
  0xd6: 'vphadduwd',
  0xd7: 'vphadduwq',
  0xdb: 'vphaddudq',
  0xe1: 'vphsubbw',
  0xe2: 'vphsubwd',
  0xe3: 'vphsubdq',
}
for (const [op, m] of Object.entries(HADD)) src9[Number(op)] = np(`${m} Vdq,Wdq | l0 w0 wo`)

const srcA: Record<number, Src> = {
  0x10: np('bextr Gy,Ey,Id | l0 wo'),
  0x12: np(grp('lwpins By,Ed,Id | l0', 'lwpval By,Ed,Id | l0')),
}

export const XOP_8: OpcodeTable = table(src8)
export const XOP_9: OpcodeTable = table(src9)
export const XOP_A: OpcodeTable = table(srcA)
