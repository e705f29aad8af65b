// x87 escape opcodes D8-DF (SDM Vol. 2 Tables A-7 .. A-22).
//
// Memory forms are selected by ModRM.reg; register forms (mod = 3) by the
// whole low six bits. A few undocumented aliases that CPUs execute are kept
// where capstone also decodes them (fstpnce D9 D8+i, ffreep DF C0+i,
// feni/fdisi DB E0/E1); the other reserved register forms are #UD.

import { grp, mod, rm, type Sel, type Src } from './spec.js'

type Row = Src | Src[]

/** mod selector: memory forms by reg, register forms as 8 rows of 8 (a string row means all eight st(i)). */
function esc(mem: Src[], rows: Row[]): Sel {
  return mod(
    grp(...mem),
    grp(...rows.map((r) => (Array.isArray(r) ? rm(...r) : r ? rm(r, r, r, r, r, r, r, r) : null))),
  )
}

const only = (i: number, s: string): Src[] => Array.from({ length: 8 }, (_, k) => (k === i ? s : null))

export const X87: Sel[] = [
  // D8
  esc(
    [
      'fadd Md | ro',
      'fmul Md | ro',
      'fcom Md | ro',
      'fcomp Md | ro',
      'fsub Md | ro',
      'fsubr Md | ro',
      'fdiv Md | ro',
      'fdivr Md | ro',
    ],
    [
      'fadd ST,STi',
      'fmul ST,STi',
      'fcom STi',
      'fcomp STi',
      'fsub ST,STi',
      'fsubr ST,STi',
      'fdiv ST,STi',
      'fdivr ST,STi',
    ],
  ),
  // D9
  esc(
    [
      'fld Md | ro',
      null,
      'fst Md | wo',
      'fstp Md | wo',
      'fldenv Me | ro',
      'fldcw Mw | ro',
      'fnstenv Me | wo',
      'fnstcw Mw | wo',
    ],
    [
      'fld STi',
      'fxch STi',
      only(0, 'fnop'),
      'fstpnce STi',
      ['fchs', 'fabs', null, null, 'ftst', 'fxam', null, null],
      ['fld1', 'fldl2t', 'fldl2e', 'fldpi', 'fldlg2', 'fldln2', 'fldz', null],
      ['f2xm1', 'fyl2x', 'fptan', 'fpatan', 'fxtract', 'fprem1', 'fdecstp', 'fincstp'],
      ['fprem', 'fyl2xp1', 'fsqrt', 'fsincos', 'frndint', 'fscale', 'fsin', 'fcos'],
    ],
  ),
  // DA
  esc(
    [
      'fiadd Md | ro',
      'fimul Md | ro',
      'ficom Md | ro',
      'ficomp Md | ro',
      'fisub Md | ro',
      'fisubr Md | ro',
      'fidiv Md | ro',
      'fidivr Md | ro',
    ],
    [
      'fcmovb ST,STi',
      'fcmove ST,STi',
      'fcmovbe ST,STi',
      'fcmovu ST,STi',
      null,
      only(1, 'fucompp'),
      null,
      null,
    ],
  ),
  // DB
  esc(
    [
      'fild Md | ro',
      'fisttp Md | wo',
      'fist Md | wo',
      'fistp Md | wo',
      null,
      'fld Mt | ro',
      null,
      'fstp Mt | wo',
    ],
    [
      'fcmovnb ST,STi',
      'fcmovne ST,STi',
      'fcmovnbe ST,STi',
      'fcmovnu ST,STi',
      ['feni8087_nop', 'fdisi8087_nop', 'fnclex', 'fninit', 'fsetpm', null, null, null],
      'fucomi ST,STi',
      'fcomi ST,STi',
      null,
    ],
  ),
  // DC
  esc(
    [
      'fadd Mq | ro',
      'fmul Mq | ro',
      'fcom Mq | ro',
      'fcomp Mq | ro',
      'fsub Mq | ro',
      'fsubr Mq | ro',
      'fdiv Mq | ro',
      'fdivr Mq | ro',
    ],
    ['fadd STi,ST', 'fmul STi,ST', null, null, 'fsubr STi,ST', 'fsub STi,ST', 'fdivr STi,ST', 'fdiv STi,ST'],
  ),
  // DD
  esc(
    [
      'fld Mq | ro',
      'fisttp Mq | wo',
      'fst Mq | wo',
      'fstp Mq | wo',
      'frstor Mfs | ro',
      null,
      'fnsave Mfs | wo',
      'fnstsw Mw | wo',
    ],
    ['ffree STi', null, 'fst STi', 'fstp STi', 'fucom STi', 'fucomp STi', null, null],
  ),
  // DE
  esc(
    [
      'fiadd Mw | ro',
      'fimul Mw | ro',
      'ficom Mw | ro',
      'ficomp Mw | ro',
      'fisub Mw | ro',
      'fisubr Mw | ro',
      'fidiv Mw | ro',
      'fidivr Mw | ro',
    ],
    [
      'faddp STi,ST',
      'fmulp STi,ST',
      null,
      only(1, 'fcompp'),
      'fsubrp STi,ST',
      'fsubp STi,ST',
      'fdivrp STi,ST',
      'fdivp STi,ST',
    ],
  ),
  // DF
  esc(
    [
      'fild Mw | ro',
      'fisttp Mw | wo',
      'fist Mw | wo',
      'fistp Mw | wo',
      'fbld Mt | ro',
      'fild Mq | ro',
      'fbstp Mt | wo',
      'fistp Mq | wo',
    ],
    ['ffreep STi', null, null, null, only(0, 'fnstsw AX'), 'fucompi ST,STi', 'fcompi ST,STi', null],
  ),
]
