// The opcode-table language.
//
// Tables are written as strings in the SDM's own notation so they can be
// checked against the opcode maps by eye: 'add Eb,Gb | lock' is ADD with a
// byte r/m destination and a byte register source, lockable. Selectors
// (grp, mod, rm, pfx, w, l) pick among entries by ModRM fields, mandatory
// prefix, REX.W/VEX.W or VEX.L. The selectors are built at module load; a
// leaf's text is parsed the first time the decoder reaches it (parsedLeaf):
// a run meets a few hundred of the tables' 1,900 leaves, and parsing them all
// was a fifth of probekit run's start-up. checkLeaves parses every one.

import { InstructionFlag as F } from '../instruction.js'

/** Operand kinds. */
export enum K {
  E = 1, // ModRM r/m: GPR or memory
  G, // ModRM reg: GPR
  M, // ModRM r/m: memory only
  R, // ModRM r/m: GPR only
  Rf, // ModRM r/m as a GPR whatever mod says (mov to/from cr/dr)
  I, // immediate
  I2, // second immediate (enter's imm8, extrq/insertq's index)
  J, // relative branch target
  O, // moffs: absolute address of the immediate's size
  Z, // GPR in the opcode's low 3 bits (+REX.B)
  Fix, // a fixed GPR (AL, rAX, DX...): n = register number
  S, // segment register in ModRM reg
  Seg, // fixed segment register: n = sreg number
  C, // control register in ModRM reg
  D, // debug register in ModRM reg
  X, // string source [rsi]
  Y, // string destination [rdi]
  V, // vector register in ModRM reg
  W, // vector register or memory in r/m
  U, // vector register in r/m (register only)
  H, // vector register in VEX.vvvv
  L, // vector register in imm8[7:4] (is4)
  P, // MMX register in ModRM reg
  Q, // MMX register or memory in r/m
  N, // MMX register in r/m (register only)
  KG, // mask register in ModRM reg
  KE, // mask register or memory in r/m
  KR, // mask register in r/m (register only)
  KH, // mask register in VEX.vvvv
  B, // GPR in VEX.vvvv
  ST0, // st(0)
  STi, // st(i) in r/m
  One, // the constant 1 (shift by one)
  BG, // bound register in ModRM reg
  BE, // bound register or memory in r/m
  GE, // 'Rd/Mb': a GPR of size n in the register form, memory of size s otherwise
}

/** Operand size codes: how many bytes, decided per instruction. */
export enum Sz {
  None = 0,
  b = 1,
  w = 2,
  d = 4,
  q = 8,
  t = 10,
  dq = 16,
  qq = 32,
  zmm = 64,
  // Context dependent sizes use codes above 64 (fixed sizes are plain byte counts, up to 4096).
  v = 0x10000, // 16/32/64-bit operand size
  z, // 16 or 32 (imm32 for 64-bit operand size)
  y, // 32 or 64 by REX.W / VEX.W
  x, // vector length: 16, 32 or 64
  h, // half the vector length
  qx, // a quarter of the vector length
  ox, // an eighth of the vector length
  p, // far pointer: operand size + 2
  s, // pseudo-descriptor: 10 bytes in 64-bit mode
  e, // x87 environment: 28, or 14 with a 16-bit operand size
  fs, // x87 state (fsave): 108, or 94 with a 16-bit operand size
  xs, // element-size scalar by W: 4 or 8
  zero, // memory operand not accessed (lea, hint nops)
}

export interface OpSpec {
  k: K
  s: number
  /** Register size for GE (register form), or fixed register number for Fix/Seg. */
  n: number
}

/** Decoder attributes of a leaf. */
export enum A {
  ModRM = 1 << 0, // has a ModRM byte (set automatically from the operands)
  D64 = 1 << 1, // default 64-bit operand size (66 makes it 16)
  F64 = 1 << 2, // 64-bit operand size whatever the prefixes
  Lock = 1 << 3, // lock prefix allowed with a memory destination
  ReadOnly = 1 << 4, // first operand is only read (cmp, test, push...)
  WriteOnly = 1 << 5, // first operand is only written (mov, setcc, pop...)
  NoMem = 1 << 6, // memory operands are addresses only (lea, nop hints, prefetch)
  Push = 1 << 7, // writes the stack
  Pop = 1 << 8, // reads the stack
  Byte = 1 << 9, // byte operation: operandSize 1
  NoFault = 1 << 10, // memory operand never faults (prefetch, nop)
  Vsib = 1 << 11, // VSIB addressing (gathers/scatters)
  Bcst = 1 << 12, // EVEX: broadcast allowed (EVEX.b with memory)
  Er = 1 << 13, // EVEX: embedded rounding (EVEX.b with registers)
  Sae = 1 << 14, // EVEX: suppress-all-exceptions (EVEX.b with registers)
  NoMask = 1 << 15, // EVEX: opmask must be k0
  NoZero = 1 << 16, // EVEX: zeroing-masking not allowed
  Lig = 1 << 17, // VEX/EVEX: L ignored (scalar)
  L0 = 1 << 18, // VEX/EVEX: L must be 0 (128-bit only)
  L1 = 1 << 19, // VEX: L must be 1 / EVEX: 256 or 512 only
  W0 = 1 << 20, // VEX/EVEX/XOP: W must be 0
  W1 = 1 << 21, // VEX/EVEX/XOP: W must be 1
  NoVvvv = 1 << 22, // vvvv must be 1111 (set automatically when no H/B/KH operand)
  L512 = 1 << 23, // EVEX: 512-bit only
  StrRead = 1 << 24, // string op whose Y operand is read (cmps, scas)
  MaskReq = 1 << 25, // EVEX: opmask must not be k0 (gathers/scatters)
}

export interface Leaf {
  readonly t: 0
  /** The table's text ('add Eb,Gb | lock'); the fields below are parsed from it by parsedLeaf. */
  readonly text: string
  readonly parsed: boolean
  readonly mn: string
  /** Mnemonic variants: by operand size (16/32/64), by W (0/1), or by address size (32/64). */
  readonly mns: readonly string[] | null
  readonly mnSel: MnSel
  readonly ops: readonly OpSpec[]
  readonly attr: number
  readonly flags: number
}

export enum MnSel {
  None = 0,
  OpSize = 1,
  W = 2,
  AddrSize = 3,
}

export enum T {
  Leaf = 0,
  Reg = 1, // by ModRM.reg (8)
  Mod = 2, // [memory form, register form]
  Rm = 3, // by ModRM.rm when mod = 3 (8)
  Pfx = 4, // by mandatory prefix [none, 66, F3, F2]
  W = 5, // by REX.W / VEX.W [0, 1]
  L = 6, // by VEX.L / EVEX.L'L [0, 1, 2, 3]
}

export interface Sel {
  readonly t: T.Reg | T.Mod | T.Rm | T.Pfx | T.W | T.L
  readonly e: readonly Entry[]
}

export type Entry = Leaf | Sel | null

/** Source form of an entry: a leaf string, a parsed entry, or undefined/null/'' for #UD. */
export type Src = string | Entry | undefined

const FLAG_WORDS: Record<string, number> = {
  call: F.Call,
  jmp: F.Jump,
  cond: F.Conditional,
  rel: F.Relative,
  ind: F.Indirect,
  ret: F.Ret,
  iret: F.Iret,
  int3: F.Int3,
  int: F.Int,
  syscall: F.Syscall,
  sysret: F.Sysret,
  priv: F.Privileged,
  fault: F.MayFault,
  far: F.FarBranch,
  ud: F.Undefined,
  halt: F.Halt,
  str: F.StringOp,
  hyper: F.Hypercall,
}

const ATTR_WORDS: Record<string, number> = {
  d64: A.D64,
  f64: A.F64,
  lock: A.Lock,
  ro: A.ReadOnly,
  wo: A.WriteOnly,
  nomem: A.NoMem,
  push: A.Push,
  pop: A.Pop,
  nofault: A.NoFault,
  vsib: A.Vsib,
  bcst: A.Bcst,
  er: A.Er,
  sae: A.Sae,
  nomask: A.NoMask,
  nozero: A.NoZero,
  lig: A.Lig,
  l0: A.L0,
  l1: A.L1,
  w0: A.W0,
  w1: A.W1,
  l512: A.L512,
  strread: A.StrRead,
  maskreq: A.MaskReq,
}

const GPR_FIXED: Record<string, [number, number]> = {
  AL: [0, Sz.b],
  CL: [1, Sz.b],
  DL: [2, Sz.b],
  BL: [3, Sz.b],
  AX: [0, Sz.w],
  DX: [2, Sz.w],
  EAX: [0, Sz.d],
  ECX: [1, Sz.d],
  RAX: [0, Sz.q],
  RCX: [1, Sz.q],
  rAX: [0, Sz.v],
  eAX: [0, Sz.z],
}

const SEG_FIXED: Record<string, number> = { ES: 0, CS: 1, SS: 2, DS: 3, FS: 4, GS: 5 }

const SIZE_WORDS: Record<string, number> = {
  '': Sz.None,
  b: Sz.b,
  w: Sz.w,
  d: Sz.d,
  q: Sz.q,
  t: Sz.t,
  dq: Sz.dq,
  qq: Sz.qq,
  zmm: Sz.zmm,
  v: Sz.v,
  z: Sz.z,
  y: Sz.y,
  x: Sz.x,
  h: Sz.h,
  qx: Sz.qx,
  ox: Sz.ox,
  p: Sz.p,
  s: Sz.s,
  e: Sz.e,
  fs: Sz.fs,
  ss: Sz.d,
  sd: Sz.q,
  ps: Sz.x,
  pd: Sz.x,
  xs: Sz.xs,
  '0': Sz.zero,
}

const LETTER_KINDS: Record<string, K> = {
  E: K.E,
  G: K.G,
  M: K.M,
  R: K.R,
  I: K.I,
  J: K.J,
  O: K.O,
  Z: K.Z,
  S: K.S,
  C: K.C,
  D: K.D,
  X: K.X,
  Y: K.Y,
  V: K.V,
  W: K.W,
  U: K.U,
  H: K.H,
  L: K.L,
  P: K.P,
  Q: K.Q,
  N: K.N,
  B: K.B,
}

function size(word: string, where: string): number {
  if (/^[0-9]+$/.test(word) && word !== '0') return Number(word)
  const s = SIZE_WORDS[word]
  if (s === undefined) throw new Error(`opcode table: bad size '${word}' in '${where}'`)
  return s
}

function parseOperand(text: string, where: string): OpSpec {
  const fixed = GPR_FIXED[text]
  if (fixed) return { k: K.Fix, s: fixed[1], n: fixed[0] }
  const seg = SEG_FIXED[text]
  if (seg !== undefined) return { k: K.Seg, s: Sz.w, n: seg }
  if (text === '1') return { k: K.One, s: Sz.b, n: 0 }
  if (text === 'ST') return { k: K.ST0, s: Sz.t, n: 0 }
  if (text === 'STi') return { k: K.STi, s: Sz.t, n: 0 }
  if (text === 'Cd') return { k: K.C, s: Sz.q, n: 0 }
  if (text === 'Dd') return { k: K.D, s: Sz.q, n: 0 }
  if (text === 'Rf') return { k: K.Rf, s: Sz.q, n: 0 }
  if (text === 'Sw') return { k: K.S, s: Sz.w, n: 0 }
  if (text.startsWith('KG')) return { k: K.KG, s: size(text.slice(2) || 'q', where), n: 0 }
  if (text.startsWith('KE')) return { k: K.KE, s: size(text.slice(2) || 'q', where), n: 0 }
  if (text.startsWith('KR')) return { k: K.KR, s: size(text.slice(2) || 'q', where), n: 0 }
  if (text.startsWith('KH')) return { k: K.KH, s: size(text.slice(2) || 'q', where), n: 0 }
  if (text.startsWith('BG')) return { k: K.BG, s: Sz.dq, n: 0 }
  if (text.startsWith('BE')) return { k: K.BE, s: size(text.slice(2) || 'dq', where), n: 0 }
  if (text.startsWith('I2')) return { k: K.I2, s: size(text.slice(2), where), n: 0 }
  // 'Rd/Mb': register form of one size, memory form of another.
  const ge = /^R([a-z]+)\/M([a-z0-9]+)$/.exec(text)
  if (ge) return { k: K.GE, s: size(ge[2], where), n: size(ge[1], where) }
  const k = LETTER_KINDS[text[0]]
  if (k === undefined) throw new Error(`opcode table: bad operand '${text}' in '${where}'`)
  return { k, s: size(text.slice(1), where), n: 0 }
}

const MODRM_KINDS = new Set<K>([
  K.E,
  K.G,
  K.M,
  K.R,
  K.Rf,
  K.S,
  K.C,
  K.D,
  K.V,
  K.W,
  K.U,
  K.P,
  K.Q,
  K.N,
  K.KG,
  K.KE,
  K.KR,
  K.STi,
  K.BG,
  K.BE,
  K.GE,
])
const VVVV_KINDS = new Set<K>([K.H, K.B, K.KH])
const GPR_SIZED_KINDS = new Set<K>([K.E, K.G, K.Z, K.Fix, K.O, K.X, K.Y, K.R])

const cache = new Map<string, Leaf>()

/** A leaf for 'mnemonic[/alt...] [operands] [| words]', parsed on first use (identical strings share one leaf). */
export function leaf(text: string): Leaf {
  const hit = cache.get(text)
  if (hit) return hit
  // Every field there from the start: one object shape, parsed or not.
  const out: Leaf = {
    t: 0,
    text,
    parsed: false,
    mn: '',
    mns: null,
    mnSel: MnSel.None,
    ops: [],
    attr: 0,
    flags: 0,
  }
  cache.set(text, out)
  return out
}

/** The leaf with its text parsed (the first call parses it, in place). */
export function parsedLeaf(l: Leaf): Leaf {
  if (!l.parsed) Object.assign(l, parseLeaf(l.text), { parsed: true })
  return l
}

/** Parse every leaf of the tables (they are all built once the decoder is loaded): a bad one throws. */
export function checkLeaves(): number {
  for (const l of cache.values()) parsedLeaf(l)
  return cache.size
}

function parseLeaf(text: string): Omit<Leaf, 't' | 'text' | 'parsed'> {
  const bar = text.indexOf('|')
  const main = (bar < 0 ? text : text.slice(0, bar)).trim()
  const words =
    bar < 0
      ? []
      : text
          .slice(bar + 1)
          .trim()
          .split(/\s+/)
          .filter(Boolean)
  const sp = main.indexOf(' ')
  const mnText = sp < 0 ? main : main.slice(0, sp)
  const opText = sp < 0 ? '' : main.slice(sp + 1).trim()
  const ops = opText ? opText.split(',').map((o) => parseOperand(o.trim(), text)) : []
  let attr = 0
  let flags = 0
  let mnSel = MnSel.None
  for (const w of words) {
    if (w in ATTR_WORDS) attr |= ATTR_WORDS[w]
    else if (w in FLAG_WORDS) flags |= FLAG_WORDS[w]
    else if (w === 'asz') mnSel = MnSel.AddrSize
    else throw new Error(`opcode table: bad word '${w}' in '${text}'`)
  }
  const alts = mnText.split('/')
  let mns: string[] | null = null
  if (alts.length > 1) {
    mns = alts
    if (mnSel === MnSel.None) mnSel = alts.length === 3 ? MnSel.OpSize : MnSel.W
  }
  for (const o of ops) if (MODRM_KINDS.has(o.k)) attr |= A.ModRM
  if (!ops.some((o) => VVVV_KINDS.has(o.k))) attr |= A.NoVvvv
  // Byte operation: some GPR operand is a byte and none is wider (DX as a port number does not count).
  const gpr = ops.filter((o) => GPR_SIZED_KINDS.has(o.k) && !(o.k === K.Fix && o.n === 2 && o.s === Sz.w))
  if (gpr.some((o) => o.s === Sz.b) && gpr.every((o) => o.s === Sz.b)) attr |= A.Byte
  return {
    mn: alts[alts.length === 2 ? 0 : alts.length === 3 ? 1 : 0],
    mns,
    mnSel,
    ops,
    attr,
    flags,
  }
}

function entry(src: Src): Entry {
  if (src === undefined || src === null || src === '') return null
  return typeof src === 'string' ? leaf(src) : src
}

function sel(t: Sel['t'], n: number, src: readonly Src[]): Sel {
  const e: Entry[] = []
  for (let i = 0; i < n; i++) e.push(entry(src[i]))
  return { t, e }
}

/** By ModRM.reg (/0 .. /7). */
export const grp = (...src: Src[]): Sel => sel(T.Reg, 8, src)
/** Memory form vs register form (mod = 3). */
export const mod = (mem: Src, reg: Src): Sel => sel(T.Mod, 2, [mem, reg])
/** Register form by ModRM.rm (mod = 3 only; a memory form is #UD). */
export const rm = (...src: Src[]): Sel => sel(T.Rm, 8, src)
/** Mandatory prefix: none, 66, F3, F2. An entry equal to `none` means the prefix is not mandatory. */
export const pfx = (none: Src, p66?: Src, pf3?: Src, pf2?: Src): Sel => sel(T.Pfx, 4, [none, p66, pf3, pf2])
/** REX.W / VEX.W = 0 or 1. */
export const w = (w0: Src, w1: Src): Sel => sel(T.W, 2, [w0, w1])
/** VEX.L / EVEX.L'L. */
export const l = (...src: Src[]): Sel => sel(T.L, 4, src)

/** An opcode map: 256 entries. */
export type OpcodeTable = Entry[]

export function table(src: Record<number, Src>): OpcodeTable {
  const out: OpcodeTable = new Array(256).fill(null)
  for (const [k, v] of Object.entries(src)) out[Number(k)] = entry(v)
  return out
}
