// x87 dispatch (one-byte opcodes D8-DF, and 9B fwait) plus loads, stores,
// constants and stack/control instructions. Arithmetic and compares are in
// x87-arith.ts, the soft-float in x87-float.ts, the register stack in
// x87-stack.ts, memory formats in x87-mem.ts.
//
// The transcendentals are in x87-transcendental.ts (see its precision note).
// Unmasked exceptions: fpu-exceptions.ts (#MF at the next waiting
// instruction). The unmasked response of a pre-computation exception (IE,
// DE, ZE: register stack unchanged) is modelled for register results; a
// store to memory is still written, and unmasked OE/UE do not produce the
// scaled results (the masked ones are written). Not implemented (#UD): the 16-bit (66-prefixed) environment
// forms. FOP/FIP/FDP are not tracked (they read as zero after fninit).

import type { Cpu } from '../cpu/cpu.js'
import { arithFlags } from '../cpu/flags.js'
import { type X87State, x87State } from '../cpu/fpu-state.js'
import { CF, PF, ZF } from '../cpu/registers.js'
import type { Instruction } from '../decoder/instruction.js'
import { checkX87Pending, updateX87Summary } from './fpu-exceptions.js'
import { nop } from './move.js'
import type { Op } from './op.js'
import { compileEa, writeReg } from './operands.js'
import {
  arithMem,
  arithReg,
  fabs,
  fchs,
  fcom,
  fcomi,
  fprem,
  frndint,
  fscale,
  fsqrt,
  fxam,
  fxtract,
  unary,
} from './x87-arith.js'
import {
  classify,
  exc,
  type F80,
  fBegin,
  IE,
  INDEFINITE,
  isNaN80,
  loadQuiet,
  ONE,
  PE,
  raise,
  roundedUp,
  SF,
  toF32,
  toF64,
  toInt,
  withdraw,
  ZERO,
} from './x87-float.js'
import {
  loadEnv,
  loadSave,
  readBcd,
  readF32,
  readF64,
  readF80,
  readInt,
  storeEnv,
  storeSave,
  writeBcd,
  writeF80,
  writeInt,
  writeU64,
} from './x87-mem.js'
import {
  C2,
  commitExc,
  fninit,
  getSt,
  isEmpty,
  phys,
  pop,
  push,
  pushWouldOverflow,
  setC1,
  setSt,
  setTop,
  top,
  underflow,
} from './x87-stack.js'
import {
  f2xm1Op,
  fpatanOp,
  fyl2xOp,
  fyl2xp1Op,
  sinCosOp,
  tanOp,
  trigArgInRange,
} from './x87-transcendental.js'

type Load = (c: Cpu, a: number) => F80

function loadOp(insn: Instruction, load: Load, quietSnan = false): Op {
  const ea = compileEa(insn)
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    let v = load(c, ea(c))
    if (quietSnan) v = loadQuiet(v)
    setC1(s, false)
    push(s, v)
    commitExc(s, exc)
  }
}

/** fst/fstp to a real: `conv` turns ST0 into the memory value, `indef` is the empty-register result. */
function storeReal(insn: Instruction, bytes: 4 | 8 | 10, doPop: boolean): Op {
  const ea = compileEa(insn)
  return (c) => {
    const s = x87State(c)
    const a = ea(c)
    fBegin(s.fcw)
    const empty = isEmpty(s, 0)
    const v = empty ? INDEFINITE : getSt(s, 0)
    if (empty) raise(IE | SF)
    if (bytes === 4) c.write32(a, toF32(v))
    else if (bytes === 8) writeU64(c, a, toF64(v))
    else writeF80(c, a, v)
    if (empty) underflow(s)
    else {
      setC1(s, roundedUp)
      commitExc(s, exc)
    }
    if (doPop) pop(s)
  }
}

function storeIntOp(insn: Instruction, bytes: number, doPop: boolean, truncate: boolean): Op {
  const ea = compileEa(insn)
  return (c) => {
    const s = x87State(c)
    const a = ea(c)
    fBegin(s.fcw)
    const empty = isEmpty(s, 0)
    const v = empty ? -(1n << BigInt(8 * bytes - 1)) : toInt(getSt(s, 0), 8 * bytes, truncate)
    writeInt(c, a, bytes, v)
    if (empty) underflow(s)
    else {
      setC1(s, roundedUp)
      commitExc(s, exc)
    }
    if (doPop) pop(s)
  }
}

/** fbstp m80: ST0 rounded by RC to 18 BCD digits; out of range or not a number: IE and the BCD indefinite. */
function fbstp(insn: Instruction): Op {
  const ea = compileEa(insn)
  return (c) => {
    const s = x87State(c)
    const a = ea(c)
    fBegin(s.fcw)
    const empty = isEmpty(s, 0)
    let v: bigint | null = null
    let neg = false
    if (empty) raise(IE | SF)
    else {
      const x = getSt(s, 0)
      neg = (x.se & 0x8000) !== 0
      // 2^64 > 10^18: a 64-bit conversion either fits or already says invalid.
      const q = toInt(x, 65, false)
      if ((exc & IE) !== 0 || q >= BCD_LIMIT || q <= -BCD_LIMIT) {
        withdraw(PE)
        raise(IE)
      } else v = q < 0n ? -q : q
    }
    writeBcd(c, a, v, neg)
    if (empty) underflow(s)
    else {
      setC1(s, v !== null && roundedUp)
      commitExc(s, exc)
    }
    pop(s)
  }
}
const BCD_LIMIT = 10n ** 18n

// Constants with the internal 66-bit values' rounding: [nearest, down/chop, up].
function constant(se: number, near: bigint, down: bigint, up: bigint): Op {
  return (c) => {
    const s = x87State(c)
    const rc = (s.fcw >> 10) & 3
    setC1(s, false)
    push(s, { se, sig: rc === 0 ? near : rc === 2 ? up : down })
  }
}
const fldl2t = constant(0x4000, 0xd49a784bcd1b8afen, 0xd49a784bcd1b8afen, 0xd49a784bcd1b8affn)
const fldl2e = constant(0x3fff, 0xb8aa3b295c17f0bcn, 0xb8aa3b295c17f0bbn, 0xb8aa3b295c17f0bcn)
const fldpi = constant(0x4000, 0xc90fdaa22168c235n, 0xc90fdaa22168c234n, 0xc90fdaa22168c235n)
const fldlg2 = constant(0x3ffd, 0x9a209a84fbcff799n, 0x9a209a84fbcff798n, 0x9a209a84fbcff799n)
const fldln2 = constant(0x3ffe, 0xb17217f7d1cf79acn, 0xb17217f7d1cf79abn, 0xb17217f7d1cf79acn)
const fld1 = constant(ONE.se, ONE.sig, ONE.sig, ONE.sig)
const fldz = constant(ZERO.se, ZERO.sig, ZERO.sig, ZERO.sig)

function fldSti(i: number): Op {
  return (c) => {
    const s = x87State(c)
    if (isEmpty(s, i)) {
      underflow(s)
      push(s, INDEFINITE)
      return
    }
    const v = getSt(s, i)
    setC1(s, false)
    push(s, v)
  }
}

function fstSti(i: number, doPop: boolean): Op {
  return (c) => {
    const s = x87State(c)
    if (isEmpty(s, 0)) {
      underflow(s)
      setSt(s, i, INDEFINITE)
    } else {
      setC1(s, false)
      setSt(s, i, getSt(s, 0))
    }
    if (doPop) pop(s)
  }
}

function fxch(i: number): Op {
  return (c) => {
    const s = x87State(c)
    if (isEmpty(s, 0) || isEmpty(s, i)) {
      underflow(s)
      if (isEmpty(s, 0)) setSt(s, 0, INDEFINITE)
      if (isEmpty(s, i)) setSt(s, i, INDEFINITE)
    } else setC1(s, false)
    const a = getSt(s, 0)
    setSt(s, 0, getSt(s, i))
    setSt(s, i, a)
  }
}

function ffree(i: number, doPop: boolean): Op {
  return (c) => {
    const s = x87State(c)
    s.ftwAbridged &= ~(1 << phys(s, i))
    // ffreep (undocumented DF C0+i) clears C1 like a pop on this host; ffree leaves it.
    if (doPop) {
      setC1(s, false)
      pop(s)
    }
  }
}

/** fcmovcc (DA/DB C0-DF): cond index 0 b, 1 e, 2 be, 3 u; negated for DB. */
function fcmov(cond: number, negate: boolean, i: number): Op {
  const mask = [CF, ZF, CF | ZF, PF][cond]
  return (c) => {
    const s = x87State(c)
    if (isEmpty(s, 0) || isEmpty(s, i)) {
      underflow(s)
      setSt(s, 0, INDEFINITE)
      return
    }
    // C1 is left alone unless the stack underflows.
    const t = (arithFlags(c) & mask) !== 0
    if (t !== negate) setSt(s, 0, getSt(s, i))
  }
}

const fwait: Op = () => {}

// ---------------------------------------------------------------- transcendentals

const f2xm1 = unary((v) => f2xm1Op(v))

/** ST1 = fn(ST0, ST1), pop (fyl2x, fyl2xp1, fpatan). */
function binaryPop(fn: (x: F80, y: F80) => F80): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0) || isEmpty(s, 1)) {
      setSt(s, 1, INDEFINITE)
      underflow(s)
    } else {
      setSt(s, 1, fn(getSt(s, 0), getSt(s, 1)))
      setC1(s, roundedUp)
      commitExc(s, exc)
    }
    pop(s)
  }
}

/** fsin (which 0) / fcos (1): |ST0| >= 2^63 sets C2 and leaves it. */
function trig(which: number): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0)) {
      setSt(s, 0, INDEFINITE)
      underflow(s)
      s.fsw &= ~C2
      return
    }
    const x = getSt(s, 0)
    if (!trigArgInRange(x)) {
      s.fsw |= C2
      return
    }
    s.fsw &= ~C2
    setSt(s, 0, sinCosOp(x, which)[which])
    setC1(s, roundedUp)
    commitExc(s, exc)
  }
}

/** fptan: ST0 = tan, push 1.0; fsincos: ST0 = sin, push cos. */
function pushing(fn: (x: F80) => [F80, F80]): Op {
  return (c) => {
    const s = x87State(c)
    fBegin(s.fcw)
    if (isEmpty(s, 0)) {
      setSt(s, 0, INDEFINITE)
      underflow(s)
      s.fsw &= ~C2
      push(s, INDEFINITE)
      return
    }
    if (pushWouldOverflow(s)) {
      // Stack overflow is checked first: ST0 and the pushed register both become the indefinite (IE, SF, C1 = 1).
      s.fsw &= ~C2
      setSt(s, 0, INDEFINITE)
      push(s, INDEFINITE)
      return
    }
    const x = getSt(s, 0)
    if (!trigArgInRange(x)) {
      s.fsw |= C2
      return
    }
    s.fsw &= ~C2
    const [a, b] = fn(x)
    setSt(s, 0, a)
    setC1(s, roundedUp)
    push(s, b)
    commitExc(s, exc)
  }
}
const fptan = pushing((x) => {
  const t = tanOp(x)
  return [t, isNaN80(classify(t)) ? t : ONE]
})
const fsincos = pushing((x) => sinCosOp(x))

function stepTop(d: number): Op {
  return (c) => {
    const s = x87State(c)
    setTop(s, top(s) + d)
    setC1(s, false)
  }
}

function memForm(insn: Instruction): Op | null {
  const o = insn.opcode
  const r = insn.reg & 7
  // 16-bit (66) environment forms are not implemented.
  const ea = compileEa(insn)
  const int2: Load = (c, a) => readInt(c, a, 2)
  const int4: Load = (c, a) => readInt(c, a, 4)
  const int8: Load = (c, a) => readInt(c, a, 8)
  const withEa =
    (l: Load) =>
    (c: Cpu): F80 =>
      l(c, ea(c))
  const stGet = (l: Load) => (c: Cpu) => l(c, ea(c)) as F80 | null
  switch (o) {
    case 0xd8:
    case 0xdc:
    case 0xda:
    case 0xde: {
      const l: Load = o === 0xd8 ? readF32 : o === 0xdc ? readF64 : o === 0xda ? int4 : int2
      if (r === 2 || r === 3) return fcom(stGet(l), true, r - 2)
      return arithMem(r, withEa(l))
    }
    case 0xd9:
      switch (r) {
        case 0:
          return loadOp(insn, readF32, true)
        case 2:
        case 3:
          return storeReal(insn, 4, r === 3)
        case 4:
          if (insn.operandSizePrefix) return null
          return (c) => loadEnv(c, ea(c))(x87State(c))
        case 5:
          return (c) => {
            const v = c.read16(ea(c))
            const s = x87State(c)
            s.fcw = v & 0x1f7f
            updateX87Summary(s) // unmasking a raised flag makes it pending
          }
        case 6:
          if (insn.operandSizePrefix) return null
          return (c) => {
            const s = x87State(c)
            storeEnv(c, ea(c), s)
            s.fcw |= 0x3f
          }
        case 7:
          return (c) => c.write16(ea(c), x87State(c).fcw)
      }
      return null
    case 0xdb:
      switch (r) {
        case 0:
          return loadOp(insn, int4)
        case 1:
          return storeIntOp(insn, 4, true, true)
        case 2:
        case 3:
          return storeIntOp(insn, 4, r === 3, false)
        case 5:
          return loadOp(insn, readF80)
        case 7:
          return storeReal(insn, 10, true)
      }
      return null
    case 0xdd:
      switch (r) {
        case 0:
          return loadOp(insn, readF64, true)
        case 1:
          return storeIntOp(insn, 8, true, true)
        case 2:
        case 3:
          return storeReal(insn, 8, r === 3)
        case 4:
          if (insn.operandSizePrefix) return null
          return (c) => loadSave(c, ea(c))(x87State(c))
        case 6:
          if (insn.operandSizePrefix) return null
          return (c) => {
            const s = x87State(c)
            storeSave(c, ea(c), s)
            fninit(s)
          }
        case 7:
          return (c) => c.write16(ea(c), x87State(c).fsw)
      }
      return null
    case 0xdf:
      switch (r) {
        case 0:
          return loadOp(insn, int2)
        case 1:
          return storeIntOp(insn, 2, true, true)
        case 2:
        case 3:
          return storeIntOp(insn, 2, r === 3, false)
        case 4:
          return loadOp(insn, readBcd)
        case 5:
          return loadOp(insn, int8)
        case 6:
          return fbstp(insn)
        case 7:
          return storeIntOp(insn, 8, true, false)
      }
      return null
  }
  return null
}

function regForm(insn: Instruction): Op | null {
  const o = insn.opcode
  const r = insn.reg & 7
  const i = insn.rm & 7
  const sti = (c: Cpu): F80 | null => {
    const s = x87State(c)
    return isEmpty(s, i) ? null : getSt(s, i)
  }
  switch (o) {
    case 0xd8:
      if (r === 2 || r === 3) return fcom(sti, true, r - 2)
      return arithReg(r, i, false, false)
    case 0xdc:
      if (r === 2 || r === 3) return fcom(sti, true, r - 2)
      return arithReg(r, i, true, false)
    case 0xde:
      if (r === 3) return i === 1 ? fcom(sti, true, 2) : null
      if (r === 2) return fcom(sti, true, 1)
      return arithReg(r, i, true, true)
    case 0xd9:
      switch (r) {
        case 0:
          return fldSti(i)
        case 1:
          return fxch(i)
        case 2:
          return i === 0 ? nop : null
        case 3:
          return fstSti(i, true)
        case 4:
          return i === 0 ? fchs : i === 1 ? fabs : i === 4 ? fcom(() => ZERO, true, 0) : i === 5 ? fxam : null
        case 5:
          return [fld1, fldl2t, fldl2e, fldpi, fldlg2, fldln2, fldz, null][i]
        case 6:
          return [
            f2xm1,
            binaryPop(fyl2xOp),
            fptan,
            binaryPop(fpatanOp),
            fxtract,
            fprem(true),
            stepTop(-1),
            stepTop(1),
          ][i]
        case 7:
          return [fprem(false), binaryPop(fyl2xp1Op), fsqrt, fsincos, frndint, fscale, trig(0), trig(1)][i]
      }
      return null
    case 0xda:
      if (r < 4) return fcmov(r, false, i)
      if (r === 5 && i === 1) return fcom(sti, false, 2)
      return null
    case 0xdb:
      if (r < 4) return fcmov(r, true, i)
      if (r === 4) {
        if (i === 2)
          return (c) => {
            x87State(c).fsw &= 0x7f00
          }
        if (i === 3) return (c) => fninit(x87State(c))
        if (i === 0 || i === 1 || i === 4) return nop
        return null
      }
      if (r === 5) return fcomi(i, false, false)
      if (r === 6) return fcomi(i, true, false)
      return null
    case 0xdd:
      switch (r) {
        case 0:
          return ffree(i, false)
        case 1:
          return fxch(i)
        case 2:
        case 3:
          return fstSti(i, r === 3)
        case 4:
        case 5:
          return fcom(sti, false, r - 4)
      }
      return null
    case 0xdf:
      switch (r) {
        case 0:
          return ffree(i, true)
        case 1:
          return fxch(i)
        case 2:
        case 3:
          return fstSti(i, true)
        case 4: {
          if (i !== 0) return null
          const w = writeReg(0, 2)
          return (c) => w(c, x87State(c).fsw, 0)
        }
        case 5:
          return fcomi(i, false, true)
        case 6:
          return fcomi(i, true, true)
      }
      return null
  }
  return null
}

/** The non-waiting forms: fninit, fnclex, fnstsw, fnstcw, fnstenv, fnsave (and the DB E0/E1/E4 no-ops). */
function nonWaiting(insn: Instruction): boolean {
  const o = insn.opcode
  const r = insn.reg & 7
  if (insn.mod === 3) return (o === 0xdb && r === 4) || (o === 0xdf && r === 4)
  return (o === 0xd9 && (r === 6 || r === 7)) || (o === 0xdd && (r === 6 || r === 7))
}

/** D8-DF x87 instructions and 9B fwait; null for what is not implemented (#UD). */
export function compileX87(insn: Instruction): Op | null {
  if (insn.opcode !== 0x9b && (insn.opcode < 0xd8 || insn.opcode > 0xdf)) return null
  const op = insn.opcode === 0x9b ? fwait : insn.mod === 3 ? regForm(insn) : memForm(insn)
  if (op === null || nonWaiting(insn)) return op
  const control = insn.mod !== 3 && (insn.opcode === 0xd9 || insn.opcode === 0xdd) && (insn.reg & 7) >= 4
  // A waiting instruction first delivers a pending unmasked exception (#MF).
  return (c) => {
    const s = x87State(c)
    checkX87Pending(c, s)
    if ((~s.fcw & PRE_COMPUTATION) === 0 || control) op(c)
    else withUnmaskedResponse(s, op, c)
  }
}

const PRE_COMPUTATION = 0x07 // IE, DE, ZE
const C1_BIT = 0x200
const SF_BIT = 0x40

/**
 * Run `op` when some pre-computation exception is unmasked: if it raises one,
 * the unmasked response leaves the register stack (values, tags, TOP) as it
 * was and only the exception flags, ES/B (and C1 for a stack fault) change.
 * Memory a store already wrote is not taken back (see the note at the top).
 */
function withUnmaskedResponse(s: X87State, op: Op, c: Cpu): void {
  const fsw = s.fsw
  const ftw = s.ftwAbridged
  const se = s.se.slice()
  const sig = s.sig.slice()
  op(c)
  const raised = s.fsw & ~fsw
  if ((raised & ~s.fcw & PRE_COMPUTATION) === 0) return
  const flags = raised & (PRE_COMPUTATION | SF_BIT)
  const c1 = (s.fsw & SF_BIT) !== 0 ? s.fsw & C1_BIT : fsw & C1_BIT
  s.fsw = (fsw & ~C1_BIT) | flags | c1 | 0x8080
  s.ftwAbridged = ftw
  s.se.set(se)
  for (let i = 0; i < 8; i++) s.sig[i] = sig[i]
}
