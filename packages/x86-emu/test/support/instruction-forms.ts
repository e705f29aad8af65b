// Instruction forms for differential testing: every general-purpose integer
// instruction form that gcc and libc use on x86-64 (and a few they do not, where
// they pin down an edge of the architecture), each with a generator of random,
// deterministic test cases for the flat CPL 3 harness (test/support/flat.ts and
// native/regs-oracle): a short code sequence at 0x10000000, 16 GPRs, RFLAGS and
// a 4096-byte data page at 0x20000000 that every memory operand and the stack
// live in.
//
// Encoding is done here by a small encoder (no assembler dependency). Operand
// values are biased to edges (0, 1, -1, signed min/max, powers of two). Each
// case carries the RFLAGS bits the SDM leaves undefined for it (the comparison
// ignores exactly those), and, rarely, GPR or memory bits whose value is
// undefined or host-policy (e.g. a 16-bit SHLD by more than 16, or the IF bit in
// a PUSHF image).

export const CODE_BASE = 0x10000000n
export const DATA_BASE = 0x20000000n
export const DATA_SIZE = 4096

export const CF = 0x001
export const PF = 0x004
export const AF = 0x010
export const ZF = 0x040
export const SF = 0x080
export const TF = 0x100
export const DF = 0x400
export const OF = 0x800
/** The six arithmetic status flags. */
export const STATUS = CF | PF | AF | ZF | SF | OF

export { GPR_NAMES } from '../../src/index.js'

const RAX = 0
const RCX = 1
const RDX = 2
const RBX = 3
const RSP = 4
const RBP = 5
const RSI = 6
const RDI = 7

export function flagNames(mask: number): string {
  const names: Array<[number, string]> = [
    [CF, 'CF'],
    [PF, 'PF'],
    [AF, 'AF'],
    [ZF, 'ZF'],
    [SF, 'SF'],
    [TF, 'TF'],
    [0x200, 'IF'],
    [DF, 'DF'],
    [OF, 'OF'],
  ]
  const out = names.filter(([bit]) => mask & bit).map(([, n]) => n)
  return out.length ? out.join(' ') : '-'
}

// ---- deterministic random numbers --------------------------------------------

/** sfc32: small, fast, good enough, and identical on every platform. */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    this.a = 0x9e3779b9
    this.b = 0x243f6a88
    this.c = 0xb7e15162
    this.d = seed >>> 0
    for (let i = 0; i < 15; i++) this.u32()
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.u32() / 4294967296) * n)
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1)
  }

  bool(p = 0.5): boolean {
    return this.u32() / 4294967296 < p
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[this.int(items.length)]
  }

  /** Uniform value of `bits` bits (unsigned). */
  bits(bits: number): bigint {
    let v = 0n
    for (let i = 0; i < bits; i += 32) v = (v << 32n) | BigInt(this.u32())
    return BigInt.asUintN(bits, v)
  }

  /** A value of `bits` bits, biased to the edges arithmetic gets wrong. */
  edge(bits: number): bigint {
    const w = BigInt(bits)
    const mask = (1n << w) - 1n
    const r = this.int(100)
    if (r < 35) {
      const k = BigInt(this.int(bits))
      const choices = [
        0n,
        1n,
        2n,
        mask,
        mask - 1n,
        1n << (w - 1n),
        (1n << (w - 1n)) - 1n,
        (1n << (w - 1n)) + 1n,
        1n << k,
        (1n << k) - 1n,
        mask ^ (1n << k),
        mask << k,
      ]
      return this.pick(choices) & mask
    }
    if (r < 45) return BigInt(this.int(17))
    if (r < 50) return mask - BigInt(this.int(16))
    return this.bits(bits)
  }

  /** A 32-bit seed derived from a string and an integer. */
  static seed(text: string, n: number): number {
    let h = 0x811c9dc5
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
    h = Math.imul(h ^ n, 0x9e3779b1)
    return (h ^ (h >>> 15)) >>> 0
  }
}

// ---- encoder ---------------------------------------------------------------

export type Size = 1 | 2 | 4 | 8

/** A GPR operand. n is 0..15; high8 (n 4..7 only) selects AH CH DH BH. */
export interface Reg {
  kind: 'reg'
  n: number
  high8?: boolean
}

/** A memory operand: [base + index*scale + disp], or [rip + disp] when ripTarget is set. */
export interface Mem {
  kind: 'mem'
  base: number | null
  index: number | null
  scale: 1 | 2 | 4 | 8
  disp: number
  /** Force the displacement size (0 only when it can be omitted). */
  dispSize?: 0 | 1 | 4
  /** Rip-relative: the absolute address the operand refers to. */
  ripTarget?: bigint
}

export type Operand = Reg | Mem

export interface Insn {
  lock?: boolean
  /** F2 or F3 (rep/repne, or a mandatory prefix). */
  rep?: 0xf2 | 0xf3
  /** Other legacy prefixes, emitted before 66/67 (segment overrides). */
  prefixes?: number[]
  opsize16?: boolean
  addr32?: boolean
  w?: boolean
  opcode: number[]
  /** ModRM.reg as a register... */
  reg?: Reg
  /** ...or as an opcode extension. */
  digit?: number
  rm?: Operand
  /** Register encoded in the low three bits of the last opcode byte (50+r, B8+r, C8+r). */
  opReg?: Reg
  /** Which of reg / rm / opReg are byte registers (4..7 need REX unless high8). */
  byteReg?: boolean
  byteRm?: boolean
  byteOpReg?: boolean
  imm?: Array<{ size: 1 | 2 | 4 | 8; value: bigint }>
}

export function reg(n: number, high8 = false): Reg {
  return high8 ? { kind: 'reg', n, high8 } : { kind: 'reg', n }
}

function fitsInt8(v: number): boolean {
  return v >= -128 && v <= 127
}

function le(value: bigint, size: number): number[] {
  const out: number[] = []
  let v = BigInt.asUintN(size * 8, value)
  for (let i = 0; i < size; i++) {
    out.push(Number(v & 0xffn))
    v >>= 8n
  }
  return out
}

/** Encode one instruction placed at `address` (only rip-relative operands depend on it). */
export function encode(insn: Insn, address: bigint): number[] {
  const pre: number[] = []
  if (insn.lock) pre.push(0xf0)
  if (insn.rep) pre.push(insn.rep)
  if (insn.prefixes) pre.push(...insn.prefixes)
  if (insn.opsize16) pre.push(0x66)
  if (insn.addr32) pre.push(0x67)
  let rex = insn.w ? 8 : 0
  let needRex = false
  let high = false
  const noteByte = (r: Reg, isByte: boolean | undefined) => {
    if (r.high8) {
      if (!isByte || r.n < 4 || r.n > 7) throw new Error(`bad high-byte register ${r.n}`)
      high = true
    } else if (isByte && r.n >= 4 && r.n <= 7) needRex = true
  }
  const op = [...insn.opcode]
  let modrm: number[] = []
  let sib: number[] = []
  let disp: number[] = []
  let ripTarget: bigint | undefined
  if (insn.opReg) {
    const r = insn.opReg
    noteByte(r, insn.byteOpReg)
    const n = r.high8 ? r.n : r.n & 7
    if (!r.high8 && r.n >= 8) rex |= 1
    op[op.length - 1] += n
  }
  if (insn.rm) {
    let regField: number
    if (insn.reg) {
      noteByte(insn.reg, insn.byteReg)
      regField = insn.reg.n & 7
      if (!insn.reg.high8 && insn.reg.n >= 8) rex |= 4
    } else if (insn.digit !== undefined) regField = insn.digit
    else throw new Error('ModRM needs reg or digit')
    const rm = insn.rm
    if (rm.kind === 'reg') {
      noteByte(rm, insn.byteRm)
      if (!rm.high8 && rm.n >= 8) rex |= 1
      modrm = [0xc0 | (regField << 3) | (rm.n & 7)]
    } else if (rm.ripTarget !== undefined) {
      modrm = [(regField << 3) | 5]
      disp = [0, 0, 0, 0]
      ripTarget = rm.ripTarget
    } else {
      if (rm.index === RSP) throw new Error('rsp cannot be an index')
      const scaleBits = { 1: 0, 2: 1, 4: 2, 8: 3 }[rm.scale]
      const idx = rm.index === null ? 4 : rm.index & 7
      if (rm.index !== null && rm.index >= 8) rex |= 2
      if (rm.base === null) {
        modrm = [(regField << 3) | 4]
        sib = [(scaleBits << 6) | (idx << 3) | 5]
        disp = le(BigInt(rm.disp), 4)
      } else {
        const b = rm.base & 7
        if (rm.base >= 8) rex |= 1
        let size = rm.dispSize ?? (rm.disp === 0 && b !== 5 ? 0 : fitsInt8(rm.disp) ? 1 : 4)
        if (size === 0 && (rm.disp !== 0 || b === 5)) size = fitsInt8(rm.disp) ? 1 : 4
        if (size === 1 && !fitsInt8(rm.disp)) throw new Error(`disp ${rm.disp} does not fit 8 bits`)
        const mod = size === 0 ? 0 : size === 1 ? 1 : 2
        if (rm.index !== null || b === 4) {
          modrm = [(mod << 6) | (regField << 3) | 4]
          sib = [(scaleBits << 6) | (idx << 3) | b]
        } else modrm = [(mod << 6) | (regField << 3) | b]
        disp = size === 0 ? [] : le(BigInt(rm.disp), size)
      }
    }
  } else if (insn.reg || insn.digit !== undefined) throw new Error('reg without rm')
  if (high && (rex || needRex)) throw new Error('AH..BH cannot be encoded with a REX prefix')
  const rexBytes = rex || needRex ? [0x40 | rex] : []
  const imm: number[] = []
  for (const i of insn.imm ?? []) imm.push(...le(i.value, i.size))
  const bytes = [...pre, ...rexBytes, ...op, ...modrm, ...sib, ...disp, ...imm]
  if (ripTarget !== undefined) {
    const next = address + BigInt(bytes.length)
    const d = ripTarget - next
    if (d < -(1n << 31n) || d >= 1n << 31n) throw new Error('rip-relative target out of range')
    const at = pre.length + rexBytes.length + op.length + 1
    bytes.splice(at, 4, ...le(d, 4))
  }
  return bytes
}

// ---- cases -----------------------------------------------------------------

export interface GeneratedCase {
  form: string
  group: string
  index: number
  code: Uint8Array
  /** rax rcx rdx rbx rsp rbp rsi rdi r8..r15 */
  gpr: bigint[]
  rflags: bigint
  data: Uint8Array
  /** RFLAGS bits left undefined by the SDM for this case: not compared. */
  undefinedFlags: number
  /** GPR bits whose final value is undefined: [register, bit mask]. */
  undefinedGpr: Array<[number, bigint]>
  /** Data-page bits whose final value is undefined: [byte offset, 64-bit little-endian mask]. */
  undefinedData: Array<[number, bigint]>
  /** The exception vector the generator expects (null: none; undefined: unknown). */
  expectVector: number | null | undefined
}

export interface InstructionForm {
  name: string
  group: string
  /** The flags the SDM calls undefined for this form (cases may narrow it, e.g. shifts by 1). */
  undefinedFlags: number
  build(c: CaseBuilder): void
}

const MASKS: Record<Size, bigint> = { 1: 0xffn, 2: 0xffffn, 4: 0xffffffffn, 8: 0xffffffffffffffffn }

function sx(value: bigint, size: Size): bigint {
  return BigInt.asIntN(size * 8, value)
}

/** Byte-register pool without REX (AL CL DL BL AH CH DH BH). */
const LEGACY_BYTE_REGS: Reg[] = [
  reg(0),
  reg(1),
  reg(2),
  reg(3),
  reg(4, true),
  reg(5, true),
  reg(6, true),
  reg(7, true),
]

export class CaseBuilder {
  readonly bytes: number[] = []
  readonly gpr: bigint[] = []
  rflags: bigint
  readonly data: Uint8Array
  undefinedFlags: number
  readonly undefinedGpr: Array<[number, bigint]> = []
  readonly undefinedData: Array<[number, bigint]> = []
  expectVector: number | null | undefined = null
  /** Register slots in use: 0..15 the registers (and their low bytes), 16..19 AH..BH. */
  private readonly used = new Set<number>([RSP])
  /** Data-page offset of each memory operand made by memOperand. */
  private readonly memOffsets = new WeakMap<Mem, number>()

  constructor(
    readonly rng: Rng,
    undefinedFlags: number,
  ) {
    this.undefinedFlags = undefinedFlags
    for (let i = 0; i < 16; i++) this.gpr.push(rng.bool(0.3) ? rng.edge(64) : rng.bits(64))
    this.gpr[RSP] = DATA_BASE + 0x800n + 8n * BigInt(rng.int(128))
    this.rflags = this.randomFlags()
    this.data = new Uint8Array(DATA_SIZE)
    for (let i = 0; i < DATA_SIZE; i += 4) {
      const v = rng.u32()
      this.data[i] = v & 0xff
      this.data[i + 1] = (v >>> 8) & 0xff
      this.data[i + 2] = (v >>> 16) & 0xff
      this.data[i + 3] = v >>> 24
    }
  }

  /** Random CF PF AF ZF SF OF and DF, bit 1 set. */
  randomFlags(): bigint {
    return BigInt((this.rng.u32() & (STATUS | DF)) | 2)
  }

  setFlag(bit: number, on: boolean): void {
    this.rflags = on ? this.rflags | BigInt(bit) : this.rflags & ~BigInt(bit)
  }

  get pc(): bigint {
    return CODE_BASE + BigInt(this.bytes.length)
  }

  emit(insn: Insn): this {
    this.bytes.push(...encode(insn, this.pc))
    return this
  }

  raw(...bytes: number[]): this {
    this.bytes.push(...bytes)
    return this
  }

  // -- registers --

  isFree(n: number): boolean {
    return !this.used.has(n) && !(n < 4 && this.used.has(16 + n))
  }

  /** Mark a register (all of it) as taken by the instruction (implicit operands). */
  claim(...regs: number[]): void {
    for (const n of regs) {
      this.used.add(n)
      if (n < 4) this.used.add(16 + n)
    }
  }

  /** A free GPR other than rsp; `legacy` limits the choice to 0..7. */
  pickGpr(legacy = false): number {
    const pool: number[] = []
    for (let n = 0; n < (legacy ? 8 : 16); n++) if (this.isFree(n)) pool.push(n)
    const n = this.rng.pick(pool)
    this.claim(n)
    return n
  }

  /** A free byte register: AL..BL/AH..BH when legacy, else AL..R15B without SPL. */
  pickByte(legacy: boolean): Reg {
    const pool = legacy
      ? LEGACY_BYTE_REGS.filter((r) => !this.used.has(r.high8 ? 16 + r.n - 4 : r.n))
      : Array.from({ length: 16 }, (_, n) => reg(n)).filter((r) => r.n !== RSP && !this.used.has(r.n))
    const r = this.rng.pick(pool)
    this.used.add(r.high8 ? 16 + r.n - 4 : r.n)
    return r
  }

  pickReg(size: Size, legacy = false): Reg {
    return size === 1 ? this.pickByte(legacy) : reg(this.pickGpr(legacy))
  }

  setReg(r: Reg | number, size: Size, value: bigint): void {
    const rr = typeof r === 'number' ? reg(r) : r
    if (rr.high8) {
      const n = rr.n - 4
      this.gpr[n] = (this.gpr[n] & ~0xff00n) | ((value & 0xffn) << 8n)
    } else {
      const m = MASKS[size]
      this.gpr[rr.n] = (this.gpr[rr.n] & ~m) | (value & m)
    }
  }

  getReg(r: Reg | number, size: Size): bigint {
    const rr = typeof r === 'number' ? reg(r) : r
    if (rr.high8) return (this.gpr[rr.n - 4] >> 8n) & 0xffn
    return this.gpr[rr.n] & MASKS[size]
  }

  /** Pick a register operand and give it an edge-biased value. */
  regOperand(size: Size, legacy = false): Reg {
    const r = this.pickReg(size, legacy)
    this.setReg(r, size, this.rng.edge(size * 8))
    return r
  }

  // -- memory --

  writeData(off: number, size: number, value: bigint): void {
    let v = BigInt.asUintN(size * 8, value)
    for (let i = 0; i < size; i++) {
      this.data[off + i] = Number(v & 0xffn)
      v >>= 8n
    }
  }

  readData(off: number, size: number): bigint {
    let v = 0n
    for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(this.data[off + i])
    return v
  }

  /**
   * A memory operand that addresses data-page offset `off` (random unless given),
   * through a random addressing form; sets the base/index registers it uses.
   */
  memOperand(
    size: number,
    opts: {
      legacy?: boolean
      off?: number
      min?: number
      max?: number
      align?: number
      rip?: boolean
      addr32?: boolean
      base?: number | null
      index?: number | null
      /** Base and index values anywhere in the 64-bit space, wrapping to the target. */
      wild?: boolean
    } = {},
  ): { op: Mem; off: number; address: bigint } {
    const rng = this.rng
    let off = opts.off ?? -1
    if (off < 0) {
      const min = opts.min ?? 0
      const max = opts.max ?? DATA_SIZE - size
      off = rng.range(min, max)
      const align = opts.align ?? (rng.bool(0.6) ? Math.min(size, 8) : 1)
      off -= off % align
      if (off < min) off += align
    }
    const address = DATA_BASE + BigInt(off)
    const kind = rng.int(100)
    if (opts.base === undefined && opts.index === undefined && opts.rip !== false && (opts.rip || kind < 8)) {
      const op: Mem = { kind: 'mem', base: null, index: null, scale: 1, disp: 0, ripTarget: address }
      this.memOffsets.set(op, off)
      return { op, off, address }
    }
    const bits = opts.addr32 ? 32 : 64
    const wrap = (v: bigint) => BigInt.asUintN(bits, v)
    const pickFree = () => {
      const pool: number[] = []
      for (let n = 0; n < (opts.legacy ? 8 : 16); n++) if (n !== RSP && this.isFree(n)) pool.push(n)
      const n = rng.pick(pool)
      this.claim(n)
      return n
    }
    const base = opts.base !== undefined ? opts.base : kind < 16 ? null : pickFree()
    if (base !== null) this.claim(base)
    const index = opts.index !== undefined ? opts.index : rng.bool(0.45) ? pickFree() : null
    if (index !== null) this.claim(index)
    const scale = index === null ? 1 : rng.pick([1, 2, 4, 8] as const)
    let disp: number
    let dispSize: 0 | 1 | 4 | undefined
    let indexValue = 0n
    if (base === null) {
      // disp32 carries the address; a small index (possibly negative) moves it.
      if (index !== null) indexValue = BigInt(rng.range(-0x8000, 0x8000))
      disp = Number(BigInt.asIntN(32, address - indexValue * BigInt(scale)))
    } else {
      const dk = rng.int(3)
      disp = dk === 0 ? 0 : dk === 1 ? rng.range(-128, 127) : rng.range(-0x40000000, 0x3fffffff)
      if (dk === 2 && rng.bool(0.2)) {
        disp = rng.range(-128, 127)
        dispSize = 4
      }
      // Wild values wrap the 64-bit (or 32-bit) sum; ordinary ones look like real code.
      if (index !== null)
        indexValue = opts.wild && rng.bool(0.7) ? rng.edge(64) : BigInt(rng.range(-4096, 4096))
    }
    const setFull = (n: number, v: bigint) => {
      this.gpr[n] = opts.addr32 ? (rng.bits(32) << 32n) | wrap(v) : wrap(v)
    }
    if (index !== null) setFull(index, indexValue)
    if (base !== null) {
      const baseValue = address - indexValue * BigInt(scale) - BigInt(disp)
      setFull(base, baseValue)
      if (index === base) throw new Error('base and index must differ')
    }
    const op: Mem = { kind: 'mem', base, index, scale, disp }
    if (dispSize !== undefined) op.dispSize = dispSize
    this.memOffsets.set(op, off)
    return { op, off, address }
  }

  /** The data-page offset a memory operand from memOperand/rmOperand addresses. */
  lastMemOff(op: Operand): number {
    const off = op.kind === 'mem' ? this.memOffsets.get(op) : undefined
    if (off === undefined) throw new Error('not a memory operand made by memOperand')
    return off
  }

  /** A register or memory operand holding an edge-biased value. */
  rmOperand(size: Size, kind: 'reg' | 'mem', legacy = false): Operand {
    if (kind === 'reg') return this.regOperand(size, legacy)
    const m = this.memOperand(size, { legacy })
    this.writeData(m.off, size, this.rng.edge(size * 8))
    return m.op
  }

  /** `mov r32, imm32` on a free register: the marker a jump skips over. */
  marker(): number[] {
    const r = this.pickGpr()
    return encode(
      { opcode: [0xb8], opReg: reg(r), imm: [{ size: 4, value: BigInt(this.rng.u32() | 1) }] },
      0n,
    )
  }

  finish(form: InstructionForm, index: number): GeneratedCase {
    return {
      form: form.name,
      group: form.group,
      index,
      code: Uint8Array.from(this.bytes),
      gpr: this.gpr.map((v) => BigInt.asUintN(64, v)),
      rflags: this.rflags,
      data: this.data,
      undefinedFlags: this.undefinedFlags,
      undefinedGpr: this.undefinedGpr,
      undefinedData: this.undefinedData,
      expectVector: this.expectVector,
    }
  }
}

export function generateCase(form: InstructionForm, index: number, seed = 1): GeneratedCase {
  const rng = new Rng(Rng.seed(form.name, index * 7919 + seed))
  const c = new CaseBuilder(rng, form.undefinedFlags)
  form.build(c)
  return c.finish(form, index)
}

export function generateCases(form: InstructionForm, count: number, seed = 1): GeneratedCase[] {
  return Array.from({ length: count }, (_, i) => generateCase(form, i, seed))
}

// ---- the forms -------------------------------------------------------------

const SIZES: Size[] = [1, 2, 4, 8]
const WIDE: Size[] = [2, 4, 8]
const KINDS = ['reg', 'mem'] as const
const CONDS = ['o', 'no', 'b', 'ae', 'e', 'ne', 'be', 'a', 's', 'ns', 'p', 'np', 'l', 'ge', 'le', 'g']

function bitsName(size: Size): string {
  return String(size * 8)
}

/** Operand-size fields of an instruction for `size` (opcode choice for byte forms is the caller's). */
function sz(size: Size): { opsize16?: boolean; w?: boolean } {
  return size === 2 ? { opsize16: true } : size === 8 ? { w: true } : {}
}

/** Legacy (no REX) byte registers for about 40% of byte-sized cases. */
function legacyFor(c: CaseBuilder, size: Size): boolean {
  return size === 1 && c.rng.bool(0.4)
}

function imm(size: 1 | 2 | 4 | 8, value: bigint): { size: 1 | 2 | 4 | 8; value: bigint } {
  return { size, value }
}

function immSizeFor(size: Size): 1 | 2 | 4 {
  return size === 1 ? 1 : size === 2 ? 2 : 4
}

const forms: InstructionForm[] = []

function add(group: string, name: string, undefinedFlags: number, build: (c: CaseBuilder) => void): void {
  forms.push({ name, group, undefinedFlags, build })
}

// -- ALU: add or adc sbb and sub xor cmp ---------------------------------------

const ALU = ['add', 'or', 'adc', 'sbb', 'and', 'sub', 'xor', 'cmp']

ALU.forEach((op, k) => {
  const uf = op === 'or' || op === 'and' || op === 'xor' ? AF : 0
  for (const size of SIZES) {
    const b = bitsName(size)
    for (const kind of KINDS) {
      add(
        'alu',
        `${op} r/m${b}, r${b} (${(k * 8 + (size === 1 ? 0 : 1)).toString(16).padStart(2, '0')}) ${kind}`,
        uf,
        (c) => {
          const legacy = legacyFor(c, size)
          const r = c.regOperand(size, legacy)
          const rm = kind === 'reg' && c.rng.bool(0.1) ? r : c.rmOperand(size, kind, legacy)
          c.emit({
            ...sz(size),
            opcode: [k * 8 + (size === 1 ? 0 : 1)],
            reg: r,
            rm,
            byteReg: true,
            byteRm: true,
          })
        },
      )
      add(
        'alu',
        `${op} r${b}, r/m${b} (${(k * 8 + (size === 1 ? 2 : 3)).toString(16).padStart(2, '0')}) ${kind}`,
        uf,
        (c) => {
          const legacy = legacyFor(c, size)
          const r = c.regOperand(size, legacy)
          const rm = c.rmOperand(size, kind, legacy)
          c.emit({
            ...sz(size),
            opcode: [k * 8 + (size === 1 ? 2 : 3)],
            reg: r,
            rm,
            byteReg: true,
            byteRm: true,
          })
        },
      )
      const imms: Array<[number, 1 | 2 | 4]> =
        size === 1
          ? [[0x80, 1]]
          : [
              [0x81, immSizeFor(size) as 2 | 4],
              [0x83, 1],
            ]
      for (const [opc, isz] of imms) {
        add('alu', `${op} r/m${b}, imm${isz * 8} (${opc.toString(16)} /${k}) ${kind}`, uf, (c) => {
          const rm = c.rmOperand(size, kind, legacyFor(c, size))
          c.emit({
            ...sz(size),
            opcode: [opc],
            digit: k,
            rm,
            byteRm: true,
            imm: [imm(isz, c.rng.edge(isz * 8))],
          })
        })
      }
    }
    const isz = immSizeFor(size)
    add(
      'alu',
      `${op} ${['al', 'ax', 'eax', 'rax'][Math.log2(size)]}, imm${isz * 8} (${(k * 8 + (size === 1 ? 4 : 5)).toString(16).padStart(2, '0')})`,
      uf,
      (c) => {
        c.claim(RAX)
        c.setReg(RAX, size, c.rng.edge(size * 8))
        c.emit({ ...sz(size), opcode: [k * 8 + (size === 1 ? 4 : 5)], imm: [imm(isz, c.rng.edge(isz * 8))] })
      },
    )
  }
  if (op !== 'cmp') {
    for (const size of [4, 8] as Size[]) {
      add('alu', `lock ${op} m${bitsName(size)}, r${bitsName(size)}`, uf, (c) => {
        const r = c.regOperand(size)
        const rm = c.rmOperand(size, 'mem')
        c.emit({ lock: true, ...sz(size), opcode: [k * 8 + 1], reg: r, rm })
      })
    }
  }
})

// -- test, not, neg, inc, dec ----------------------------------------------------

for (const size of SIZES) {
  const b = bitsName(size)
  const one = size === 1
  for (const kind of KINDS) {
    add('unary', `test r/m${b}, r${b} (${one ? '84' : '85'}) ${kind}`, AF, (c) => {
      const legacy = legacyFor(c, size)
      const r = c.regOperand(size, legacy)
      const rm = kind === 'reg' && c.rng.bool(0.15) ? r : c.rmOperand(size, kind, legacy)
      c.emit({ ...sz(size), opcode: [one ? 0x84 : 0x85], reg: r, rm, byteReg: true, byteRm: true })
    })
    add('unary', `test r/m${b}, imm (${one ? 'f6' : 'f7'} /0) ${kind}`, AF, (c) => {
      const rm = c.rmOperand(size, kind, legacyFor(c, size))
      const isz = immSizeFor(size)
      c.emit({
        ...sz(size),
        opcode: [one ? 0xf6 : 0xf7],
        digit: 0,
        rm,
        byteRm: true,
        imm: [imm(isz, c.rng.edge(isz * 8))],
      })
    })
    for (const [name, opc, digit] of [
      ['not', one ? 0xf6 : 0xf7, 2],
      ['neg', one ? 0xf6 : 0xf7, 3],
      ['inc', one ? 0xfe : 0xff, 0],
      ['dec', one ? 0xfe : 0xff, 1],
    ] as const) {
      add('unary', `${name} r/m${b} (${opc.toString(16)} /${digit}) ${kind}`, 0, (c) => {
        const rm = c.rmOperand(size, kind, legacyFor(c, size))
        c.emit({ ...sz(size), opcode: [opc], digit, rm, byteRm: true })
      })
      if (kind === 'mem' && size >= 4)
        add('unary', `lock ${name} m${b}`, 0, (c) => {
          const rm = c.rmOperand(size, 'mem')
          c.emit({ lock: true, ...sz(size), opcode: [opc], digit, rm })
        })
    }
  }
  const isz = immSizeFor(size)
  add('unary', `test ${['al', 'ax', 'eax', 'rax'][Math.log2(size)]}, imm (${one ? 'a8' : 'a9'})`, AF, (c) => {
    c.claim(RAX)
    c.setReg(RAX, size, c.rng.edge(size * 8))
    c.emit({ ...sz(size), opcode: [one ? 0xa8 : 0xa9], imm: [imm(isz, c.rng.edge(isz * 8))] })
  })
}

// -- mul, imul, div, idiv ----------------------------------------------------------

for (const size of SIZES) {
  const b = bitsName(size)
  const one = size === 1
  for (const kind of KINDS) {
    for (const [name, digit] of [
      ['mul', 4],
      ['imul', 5],
    ] as const) {
      add('muldiv', `${name} r/m${b} (${one ? 'f6' : 'f7'} /${digit}) ${kind}`, SF | ZF | AF | PF, (c) => {
        c.claim(RAX, RDX)
        c.setReg(RAX, size, c.rng.edge(size * 8))
        const rm = c.rmOperand(size, kind, legacyFor(c, size))
        c.emit({ ...sz(size), opcode: [one ? 0xf6 : 0xf7], digit, rm, byteRm: true })
      })
    }
    for (const [name, digit, signed] of [
      ['div', 6, false],
      ['idiv', 7, true],
    ] as const) {
      add('muldiv', `${name} r/m${b} (${one ? 'f6' : 'f7'} /${digit}) ${kind}`, STATUS, (c) => {
        const rng = c.rng
        const w = BigInt(size * 8)
        const m = MASKS[size]
        c.claim(RAX, RDX)
        const mode = rng.int(100)
        let d = rng.edge(size * 8)
        let hi: bigint
        let lo = rng.edge(size * 8)
        if (mode < 12) d = 0n
        if (d === 0n && mode >= 12) d = 1n
        if (mode >= 12 && mode < 20 && signed) {
          // the one signed overflow with a small divisor: MIN / -1
          hi = m
          lo = 1n << (w - 1n)
          d = m
        } else if (signed && mode >= 70 && mode < 85) {
          // a full-width signed dividend whose quotient still fits: |n| < |d| * 2^(w-1)
          const sd = sx(d, size)
          const mag = rng.bits(size * 16) % ((sd < 0n ? -sd : sd) << (w - 1n))
          const n = rng.int(2) === 1 ? -mag : mag
          hi = (n >> w) & m
          lo = n & m
        } else if (mode < 70) {
          if (signed) hi = sx(lo, size) < 0n ? m : 0n
          else hi = d === 0n ? rng.edge(size * 8) : rng.bits(size * 8 + 8) % d
        } else hi = rng.edge(size * 8)
        if (one) c.setReg(RAX, 2, (hi << 8n) | lo)
        else {
          c.setReg(RAX, size, lo)
          c.setReg(RDX, size, hi)
        }
        // the divisor: a register other than rax/rdx (and not AH), or memory
        let rm: Operand
        if (kind === 'reg') {
          rm = c.pickReg(size, legacyFor(c, size))
          c.setReg(rm, size, d)
        } else {
          const mo = c.memOperand(size)
          c.writeData(mo.off, size, d)
          rm = mo.op
        }
        // does it fault (#DE)?
        let fault: boolean
        if (d === 0n) fault = true
        else if (signed) {
          const n = BigInt.asIntN(size * 16, (hi << w) | lo)
          const q = n / sx(d, size)
          fault = q < -(1n << (w - 1n)) || q >= 1n << (w - 1n)
        } else fault = ((hi << w) | lo) / d > m
        c.expectVector = fault ? 0 : null
        c.emit({ ...sz(size), opcode: [one ? 0xf6 : 0xf7], digit, rm, byteRm: true })
      })
    }
  }
}

for (const size of WIDE) {
  const b = bitsName(size)
  for (const kind of KINDS) {
    add('muldiv', `imul r${b}, r/m${b} (0f af) ${kind}`, SF | ZF | AF | PF, (c) => {
      const r = c.regOperand(size)
      const rm = kind === 'reg' && c.rng.bool(0.1) ? r : c.rmOperand(size, kind)
      c.emit({ ...sz(size), opcode: [0x0f, 0xaf], reg: r, rm })
    })
    add('muldiv', `imul r${b}, r/m${b}, imm8 (6b) ${kind}`, SF | ZF | AF | PF, (c) => {
      const r = c.regOperand(size)
      const rm = kind === 'reg' && c.rng.bool(0.2) ? r : c.rmOperand(size, kind)
      c.emit({ ...sz(size), opcode: [0x6b], reg: r, rm, imm: [imm(1, c.rng.edge(8))] })
    })
    add('muldiv', `imul r${b}, r/m${b}, imm${size === 2 ? 16 : 32} (69) ${kind}`, SF | ZF | AF | PF, (c) => {
      const r = c.regOperand(size)
      const rm = kind === 'reg' && c.rng.bool(0.2) ? r : c.rmOperand(size, kind)
      const isz = immSizeFor(size)
      c.emit({ ...sz(size), opcode: [0x69], reg: r, rm, imm: [imm(isz, c.rng.edge(isz * 8))] })
    })
  }
}

// -- shifts and rotates ------------------------------------------------------------

const SHIFTS: Array<[string, number]> = [
  ['rol', 0],
  ['ror', 1],
  ['rcl', 2],
  ['rcr', 3],
  ['shl', 4],
  ['shr', 5],
  ['sar', 7],
]

function shiftCount(c: CaseBuilder, size: Size): number {
  const w = size * 8
  return c.rng.pick([
    0,
    1,
    1,
    w - 1,
    w,
    w + 1,
    c.rng.range(2, w - 2),
    c.rng.range(w + 2, 255),
    31,
    32,
    33,
    63,
    64,
    65,
  ])
}

/** The flags the SDM leaves undefined for a shift/rotate by `count` (before masking). */
export function shiftUndefinedFlags(op: string, size: Size, count: number): number {
  const mc = count & (size === 8 ? 63 : 31)
  if (mc === 0) return 0
  let u = mc === 1 ? 0 : OF
  if (op === 'shl' || op === 'shr' || op === 'sar') {
    u |= AF
    if ((op === 'shl' || op === 'shr') && mc >= size * 8) u |= CF
  }
  return u
}

for (const [op, digit] of SHIFTS) {
  for (const size of SIZES) {
    const b = bitsName(size)
    const one = size === 1
    for (const kind of KINDS) {
      const base = op === 'shl' || op === 'shr' || op === 'sar' ? AF | OF | CF : OF
      add('shift', `${op} r/m${b}, 1 (${one ? 'd0' : 'd1'} /${digit}) ${kind}`, base, (c) => {
        c.undefinedFlags = shiftUndefinedFlags(op, size, 1)
        const rm = c.rmOperand(size, kind, legacyFor(c, size))
        c.emit({ ...sz(size), opcode: [one ? 0xd0 : 0xd1], digit, rm, byteRm: true })
      })
      add('shift', `${op} r/m${b}, cl (${one ? 'd2' : 'd3'} /${digit}) ${kind}`, base, (c) => {
        c.claim(RCX)
        const count = shiftCount(c, size)
        c.setReg(RCX, 1, BigInt(count))
        c.undefinedFlags = shiftUndefinedFlags(op, size, count)
        const rm = c.rmOperand(size, kind, legacyFor(c, size))
        c.emit({ ...sz(size), opcode: [one ? 0xd2 : 0xd3], digit, rm, byteRm: true })
      })
      add('shift', `${op} r/m${b}, imm8 (${one ? 'c0' : 'c1'} /${digit}) ${kind}`, base, (c) => {
        const count = shiftCount(c, size)
        c.undefinedFlags = shiftUndefinedFlags(op, size, count)
        const rm = c.rmOperand(size, kind, legacyFor(c, size))
        c.emit({
          ...sz(size),
          opcode: [one ? 0xc0 : 0xc1],
          digit,
          rm,
          byteRm: true,
          imm: [imm(1, BigInt(count))],
        })
      })
    }
  }
}

// shld / shrd
for (const [op, opImm, opCl] of [
  ['shld', 0xa4, 0xa5],
  ['shrd', 0xac, 0xad],
] as const) {
  for (const size of WIDE) {
    const b = bitsName(size)
    for (const kind of KINDS) {
      for (const byCl of [false, true]) {
        add(
          'shift',
          `${op} r/m${b}, r${b}, ${byCl ? 'cl' : 'imm8'} (0f ${(byCl ? opCl : opImm).toString(16)}) ${kind}`,
          CF | OF | SF | ZF | AF | PF,
          (c) => {
            if (byCl) c.claim(RCX)
            let count = shiftCount(c, size)
            const mc = count & (size === 8 ? 63 : 31)
            // A 16-bit shift by more than 16 leaves the destination undefined; in memory
            // that is not worth masking, so memory forms stay at 16 or below.
            if (size === 2 && mc > 16 && kind === 'mem') count = c.rng.range(0, 16)
            const m2 = count & (size === 8 ? 63 : 31)
            c.undefinedFlags = m2 === 0 ? 0 : (m2 === 1 ? 0 : OF) | AF
            if (byCl) c.setReg(RCX, 1, BigInt(count))
            const src = c.regOperand(size)
            const rm = c.rmOperand(size, kind)
            if (size === 2 && m2 > 16) {
              c.undefinedFlags = STATUS
              c.undefinedGpr.push([(rm as Reg).n, 0xffffn])
            }
            c.emit({
              ...sz(size),
              opcode: [0x0f, byCl ? opCl : opImm],
              reg: src,
              rm,
              ...(byCl ? {} : { imm: [imm(1, BigInt(count))] }),
            })
          },
        )
      }
    }
  }
}

// -- bit test and scan ---------------------------------------------------------------

for (const [op, opReg, digit] of [
  ['bt', 0xa3, 4],
  ['bts', 0xab, 5],
  ['btr', 0xb3, 6],
  ['btc', 0xbb, 7],
] as const) {
  for (const size of WIDE) {
    const b = bitsName(size)
    for (const kind of KINDS) {
      add('bit', `${op} r/m${b}, r${b} (0f ${opReg.toString(16)}) ${kind}`, OF | SF | AF | PF, (c) => {
        const src = c.pickReg(size)
        if (kind === 'reg') {
          const rm = c.regOperand(size)
          c.setReg(src, 8, c.rng.edge(64))
          c.emit({ ...sz(size), opcode: [0x0f, opReg], reg: src, rm })
          return
        }
        // Memory: the bit offset is a signed register value and may reach far
        // outside the operand. Keep the addressed unit inside the data page.
        const w = size * 8
        const center = c.rng.range(1600, 2400) & ~(size - 1)
        const unitLimit = Math.floor(1500 / size)
        const unit = c.rng.bool(0.3) ? c.rng.range(-1, 1) : c.rng.range(-unitLimit, unitLimit)
        const offset = unit * w + c.rng.int(w)
        c.setReg(src, 8, c.rng.bits(64))
        c.setReg(src, size, BigInt.asUintN(size * 8, BigInt(offset)))
        const mo = c.memOperand(size, { off: center })
        c.emit({ ...sz(size), opcode: [0x0f, opReg], reg: src, rm: mo.op })
      })
      add('bit', `${op} r/m${b}, imm8 (0f ba /${digit}) ${kind}`, OF | SF | AF | PF, (c) => {
        const rm = c.rmOperand(size, kind)
        const bit = c.rng.bool(0.7) ? c.rng.int(size * 8) : c.rng.int(256)
        c.emit({ ...sz(size), opcode: [0x0f, 0xba], digit, rm, imm: [imm(1, BigInt(bit))] })
      })
    }
    if (op !== 'bt')
      add('bit', `lock ${op} m${b}, r${b}`, OF | SF | AF | PF, (c) => {
        const src = c.pickReg(size)
        const offset = c.rng.range(-200, 200)
        c.setReg(src, 8, c.rng.bits(64))
        c.setReg(src, size, BigInt.asUintN(size * 8, BigInt(offset)))
        const mo = c.memOperand(size, { off: 2048 })
        c.emit({ lock: true, ...sz(size), opcode: [0x0f, opReg], reg: src, rm: mo.op })
      })
  }
}

for (const [op, opc] of [
  ['bsf', 0xbc],
  ['bsr', 0xbd],
] as const) {
  for (const size of WIDE) {
    const b = bitsName(size)
    for (const kind of KINDS) {
      add('bit', `${op} r${b}, r/m${b} (0f ${opc.toString(16)}) ${kind}`, CF | OF | SF | AF | PF, (c) => {
        const dst = c.regOperand(size)
        const rm = c.rmOperand(size, kind)
        const zero = c.rng.bool(0.25)
        if (zero) {
          if (rm.kind === 'reg') c.setReg(rm, size, 0n)
          else c.writeData(c.lastMemOff(rm), size, 0n)
          // Source 0: AMD leaves the destination unchanged; Intel writes the old
          // value back, which for a 32-bit operand clears bits 63:32.
          if (size === 4) c.undefinedGpr.push([dst.n, 0xffffffff00000000n])
        }
        c.emit({ ...sz(size), opcode: [0x0f, opc], reg: dst, rm })
      })
    }
  }
}

for (const size of WIDE) {
  const b = bitsName(size)
  add('bit', `rep bsf (tzcnt encoding) r${b}, r/m${b}, nonzero source (f3 0f bc)`, STATUS, (c) => {
    // gcc emits `rep bsf` for __builtin_ctz: TZCNT on BMI1 CPUs, BSF on older ones.
    // Same result for a nonzero source; the flags differ, so none are compared.
    const dst = c.regOperand(size)
    const kind = c.rng.pick(KINDS)
    const rm = c.rmOperand(size, kind)
    const v = c.rng.edge(size * 8) || 1n
    if (rm.kind === 'reg') c.setReg(rm, size, v)
    else c.writeData(c.lastMemOff(rm), size, v)
    c.emit({ rep: 0xf3, ...sz(size), opcode: [0x0f, 0xbc], reg: dst, rm })
  })
}

// -- setcc, cmovcc, jcc -------------------------------------------------------------

CONDS.forEach((cc, i) => {
  add('cond', `set${cc} r/m8 (0f ${(0x90 + i).toString(16)})`, 0, (c) => {
    const kind = c.rng.pick(KINDS)
    const rm = c.rmOperand(1, kind, c.rng.bool(0.4))
    c.emit({ opcode: [0x0f, 0x90 + i], digit: 0, rm, byteRm: true })
  })
  for (const size of WIDE) {
    add(
      'cond',
      `cmov${cc} r${bitsName(size)}, r/m${bitsName(size)} (0f ${(0x40 + i).toString(16)})`,
      0,
      (c) => {
        const dst = c.regOperand(size)
        const rm = c.rmOperand(size, c.rng.pick(KINDS))
        c.emit({ ...sz(size), opcode: [0x0f, 0x40 + i], reg: dst, rm })
      },
    )
  }
  add('branch', `j${cc} rel8 (${(0x70 + i).toString(16)})`, 0, (c) => {
    const skip = c.marker()
    c.raw(0x70 + i, skip.length, ...skip)
  })
  add('branch', `j${cc} rel32 (0f ${(0x80 + i).toString(16)})`, 0, (c) => {
    const skip = c.marker()
    c.raw(0x0f, 0x80 + i, ...le(BigInt(skip.length), 4), ...skip)
  })
})

// -- loop, loope, loopne, jrcxz ----------------------------------------------------------

for (const [name, opc] of [
  ['loopne', 0xe0],
  ['loope', 0xe1],
  ['loop', 0xe2],
  ['jrcxz', 0xe3],
] as const) {
  add('branch', `${name} rel8 forward (${opc.toString(16)})`, 0, (c) => {
    c.claim(RCX)
    c.gpr[RCX] = c.rng.pick([0n, 1n, 2n, c.rng.edge(64), 0x100000000n, 0xffffffff00000000n, c.rng.bits(64)])
    const skip = c.marker()
    c.raw(opc, skip.length, ...skip)
  })
  if (name !== 'jrcxz')
    add('branch', `${name} rel8 backward (${opc.toString(16)})`, 0, (c) => {
      // L: body; loop L  -- the body decrements a counter (setting ZF when it hits 0) for
      // loope/loopne, and only counts (lea, no flags) for loop.
      c.claim(RCX)
      c.gpr[RCX] = BigInt(c.rng.range(1, 40))
      const r = c.pickGpr()
      c.gpr[r] = name === 'loop' ? c.rng.bits(64) : BigInt(c.rng.range(0, 12))
      const body =
        name === 'loop'
          ? encode(
              {
                w: true,
                opcode: [0x8d],
                reg: reg(r),
                rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 3 },
              },
              0n,
            )
          : encode({ w: true, opcode: [0xff], digit: 1, rm: reg(r) }, 0n)
      c.raw(...body, opc, (256 - body.length - 2) & 0xff)
    })
}

// -- jmp, call, ret -----------------------------------------------------------------------

add('branch', 'jmp rel8 (eb)', 0, (c) => {
  const skip = c.marker()
  c.raw(0xeb, skip.length, ...skip)
})
add('branch', 'jmp rel32 (e9)', 0, (c) => {
  const skip = c.marker()
  c.raw(0xe9, ...le(BigInt(skip.length), 4), ...skip)
})
add('branch', 'jmp r64 (ff /4)', 0, (c) => {
  const r = c.pickGpr()
  const skip = c.marker()
  const movLen = r >= 8 ? 6 : 5
  const jmpLen = r >= 8 ? 3 : 2
  const target = c.pc + BigInt(movLen + jmpLen + skip.length)
  c.emit({ opcode: [0xb8], opReg: reg(r), imm: [imm(4, target)] })
  c.emit({ opcode: [0xff], digit: 4, rm: reg(r) })
  c.raw(...skip)
})
add('branch', 'jmp m64 (ff /4)', 0, (c) => {
  const mo = c.memOperand(8)
  const skip = c.marker()
  const len = encode({ opcode: [0xff], digit: 4, rm: mo.op }, c.pc).length
  c.writeData(mo.off, 8, c.pc + BigInt(len + skip.length))
  c.emit({ opcode: [0xff], digit: 4, rm: mo.op })
  c.raw(...skip)
})
add('stack', 'call rel32 (e8) + ret (c3)', 0, (c) => {
  // call L; jmp +1; L: ret
  c.raw(0xe8, 2, 0, 0, 0, 0xeb, 0x01, 0xc3)
})
add('stack', 'call rel32 (e8) + ret imm16 (c2)', 0, (c) => {
  const n = c.rng.pick([0, 8, 16, 24, c.rng.range(1, 64)])
  c.raw(0xe8, 2, 0, 0, 0, 0xeb, 0x03, 0xc2, n & 0xff, 0)
})
add('stack', 'call r64 (ff /2) + ret', 0, (c) => {
  const r = c.pickGpr()
  const movLen = r >= 8 ? 6 : 5
  const callLen = r >= 8 ? 3 : 2
  const target = c.pc + BigInt(movLen + callLen + 2)
  c.emit({ opcode: [0xb8], opReg: reg(r), imm: [imm(4, target)] })
  c.emit({ opcode: [0xff], digit: 2, rm: reg(r) })
  c.raw(0xeb, 0x01, 0xc3)
})
add('stack', 'call m64 (ff /2) + ret', 0, (c) => {
  const mo = c.memOperand(8, { max: 0x700 })
  const len = encode({ opcode: [0xff], digit: 2, rm: mo.op }, c.pc).length
  c.writeData(mo.off, 8, c.pc + BigInt(len + 2))
  c.emit({ opcode: [0xff], digit: 2, rm: mo.op })
  c.raw(0xeb, 0x01, 0xc3)
})

// -- push, pop, pushf, popf, enter, leave -------------------------------------------------

add('stack', 'push r64 (50+r)', 0, (c) => {
  c.emit({ opcode: [0x50], opReg: reg(c.pickGpr()) })
})
add('stack', 'pop r64 (58+r)', 0, (c) => {
  c.emit({ opcode: [0x58], opReg: reg(c.pickGpr()) })
})
add('stack', 'push r16 (66 50+r)', 0, (c) => {
  c.emit({ opsize16: true, opcode: [0x50], opReg: reg(c.pickGpr()) })
})
add('stack', 'pop r16 (66 58+r)', 0, (c) => {
  c.emit({ opsize16: true, opcode: [0x58], opReg: reg(c.pickGpr()) })
})
add('stack', 'push imm8 (6a)', 0, (c) => {
  c.raw(0x6a, Number(c.rng.edge(8)))
})
add('stack', 'push imm32 (68)', 0, (c) => {
  c.raw(0x68, ...le(c.rng.edge(32), 4))
})
add('stack', 'push m64 (ff /6)', 0, (c) => {
  c.emit({ opcode: [0xff], digit: 6, rm: c.memOperand(8).op })
})
add('stack', 'pop m64 (8f /0)', 0, (c) => {
  c.emit({ opcode: [0x8f], digit: 0, rm: c.memOperand(8).op })
})
add('stack', 'push rsp (54)', 0, (c) => {
  c.raw(0x54)
})
add('stack', 'pop rsp (5c)', 0, (c) => {
  c.raw(0x5c)
})
add('stack', 'push [rsp+disp8] (ff /6)', 0, (c) => {
  // the address is computed with rsp before the decrement
  c.emit({
    opcode: [0xff],
    digit: 6,
    rm: { kind: 'mem', base: RSP, index: null, scale: 1, disp: 8 * c.rng.range(-4, 8) },
  })
})
add('stack', 'pop [rsp+disp8] (8f /0)', 0, (c) => {
  // the address is computed with rsp after the increment
  c.emit({
    opcode: [0x8f],
    digit: 0,
    rm: { kind: 'mem', base: RSP, index: null, scale: 1, disp: 8 * c.rng.range(-4, 8) },
  })
})
add('stack', 'pushfq (9c)', 0, (c) => {
  // IF, RF, AC, ID and the other system bits in the pushed image are host policy: not compared.
  const off = Number(c.gpr[RSP] - DATA_BASE) - 8
  c.undefinedData.push([off, 0xffffffffffffffffn ^ 0x7dd7n])
  c.raw(0x9c)
})
add('stack', 'pushfq; pop r64 (9c 58+r)', 0, (c) => {
  const r = c.pickGpr()
  c.undefinedGpr.push([r, 0xffffffffffffffffn ^ 0x7dd7n])
  const off = Number(c.gpr[RSP] - DATA_BASE) - 8
  c.undefinedData.push([off, 0xffffffffffffffffn ^ 0x7dd7n])
  c.raw(0x9c)
  c.emit({ opcode: [0x58], opReg: reg(r) })
})
add('stack', 'popfq (9d)', 0, (c) => {
  // Status flags and DF from the stack; IF, IOPL and reserved bits must be ignored at
  // CPL 3. TF, AC, NT and ID are left clear (TF would trap; AC enables alignment checks).
  const off = Number(c.gpr[RSP] - DATA_BASE)
  const v =
    BigInt(c.rng.u32() & (STATUS | DF | 0x200 | 0x3000 | 0x28 | 0x8000 | 0x2)) | (c.rng.bits(32) << 32n)
  c.writeData(off, 8, v)
  c.raw(0x9d)
})
add('stack', 'enter imm16, imm8 (c8)', 0, (c) => {
  const level = c.rng.pick([0, 0, 1, 2, 3, 4])
  const size = c.rng.pick([0, 8, 16, 32, c.rng.range(0, 128)])
  c.gpr[RBP] = DATA_BASE + BigInt(c.rng.range(0x200, 0x700) & ~7)
  c.claim(RBP)
  c.raw(0xc8, size & 0xff, size >> 8, level)
})
add('stack', 'leave (c9)', 0, (c) => {
  c.gpr[RBP] = DATA_BASE + BigInt(c.rng.range(0x100, 0xff0) & (c.rng.bool(0.8) ? ~7 : ~0))
  c.claim(RBP)
  c.raw(0xc9)
})

// -- rsp as a deliberate operand ----------------------------------------------------------

add('stack', 'sub rsp, imm8 (48 83 /5)', 0, (c) => {
  c.raw(0x48, 0x83, 0xec, c.rng.pick([8, 16, 24, 0x28, 0x78, 0x80]))
})
add('stack', 'add rsp, imm32 (48 81 /0)', 0, (c) => {
  c.raw(0x48, 0x81, 0xc4, ...le(BigInt(c.rng.pick([0x88, 0x100, 0x1008, -0x400])), 4))
})
add('stack', 'and rsp, -16 (48 83 /4)', AF, (c) => {
  c.gpr[RSP] -= BigInt(c.rng.int(16))
  c.raw(0x48, 0x83, 0xe4, 0xf0)
})
add('stack', 'mov rbp, rsp; mov rsp, rbp (48 89 e5 / 48 89 ec)', 0, (c) => {
  c.raw(
    ...c.rng.pick([
      [0x48, 0x89, 0xe5],
      [0x48, 0x89, 0xec],
    ]),
  )
})
add('stack', 'lea rsp, [rsp+disp8] (48 8d 64 24)', 0, (c) => {
  c.raw(0x48, 0x8d, 0x64, 0x24, (c.rng.range(-16, 16) * 8) & 0xff)
})
add('stack', 'mov spl, imm8; add spl, r8b (40 b4 / 44 00 c4)', 0, (c) => {
  c.raw(0x40, 0xb4, c.rng.int(256), 0x44, 0x00, 0xc4)
})

// -- mov, movzx, movsx, movsxd, conversions ----------------------------------------------

for (const size of SIZES) {
  const b = bitsName(size)
  const one = size === 1
  for (const kind of KINDS) {
    add('mov', `mov r/m${b}, r${b} (${one ? '88' : '89'}) ${kind}`, 0, (c) => {
      const legacy = legacyFor(c, size)
      const r = c.regOperand(size, legacy)
      const rm = c.rmOperand(size, kind, legacy)
      c.emit({ ...sz(size), opcode: [one ? 0x88 : 0x89], reg: r, rm, byteReg: true, byteRm: true })
    })
    add('mov', `mov r${b}, r/m${b} (${one ? '8a' : '8b'}) ${kind}`, 0, (c) => {
      const legacy = legacyFor(c, size)
      const r = c.regOperand(size, legacy)
      const rm = c.rmOperand(size, kind, legacy)
      c.emit({ ...sz(size), opcode: [one ? 0x8a : 0x8b], reg: r, rm, byteReg: true, byteRm: true })
    })
    add('mov', `mov r/m${b}, imm (${one ? 'c6' : 'c7'} /0) ${kind}`, 0, (c) => {
      const rm = c.rmOperand(size, kind, legacyFor(c, size))
      const isz = immSizeFor(size)
      c.emit({
        ...sz(size),
        opcode: [one ? 0xc6 : 0xc7],
        digit: 0,
        rm,
        byteRm: true,
        imm: [imm(isz, c.rng.edge(isz * 8))],
      })
    })
  }
  add('mov', `mov r${b}, imm${size * 8} (${one ? 'b0' : 'b8'}+r)`, 0, (c) => {
    const r = c.pickReg(size, legacyFor(c, size))
    c.emit({
      ...sz(size),
      opcode: [one ? 0xb0 : 0xb8],
      opReg: r,
      byteOpReg: true,
      imm: [imm(size, c.rng.edge(size * 8))],
    })
  })
  add('mov', `mov ${['al', 'ax', 'eax', 'rax'][Math.log2(size)]}, moffs64 (${one ? 'a0' : 'a1'})`, 0, (c) => {
    c.claim(RAX)
    const off = c.rng.range(0, DATA_SIZE - size)
    c.emit({ ...sz(size), opcode: [one ? 0xa0 : 0xa1], imm: [imm(8, DATA_BASE + BigInt(off))] })
  })
  add('mov', `mov moffs64, ${['al', 'ax', 'eax', 'rax'][Math.log2(size)]} (${one ? 'a2' : 'a3'})`, 0, (c) => {
    c.claim(RAX)
    const off = c.rng.range(0, DATA_SIZE - size)
    c.emit({ ...sz(size), opcode: [one ? 0xa2 : 0xa3], imm: [imm(8, DATA_BASE + BigInt(off))] })
  })
}

for (const [name, opc, from] of [
  ['movzx', 0xb6, 1],
  ['movzx', 0xb7, 2],
  ['movsx', 0xbe, 1],
  ['movsx', 0xbf, 2],
] as const) {
  for (const size of (from === 1 ? [2, 4, 8] : [4, 8]) as Size[]) {
    for (const kind of KINDS) {
      add('mov', `${name} r${bitsName(size)}, r/m${from * 8} (0f ${opc.toString(16)}) ${kind}`, 0, (c) => {
        const legacy = from === 1 && size !== 8 && c.rng.bool(0.4)
        const dst = c.pickReg(size, legacy)
        const rm = c.rmOperand(from, kind, legacy)
        c.emit({ ...sz(size), opcode: [0x0f, opc], reg: dst, rm, byteRm: from === 1 })
      })
    }
  }
}
for (const kind of KINDS) {
  add('mov', `movsxd r64, r/m32 (48 63) ${kind}`, 0, (c) => {
    const dst = c.pickReg(8)
    const rm = c.rmOperand(4, kind)
    c.emit({ w: true, opcode: [0x63], reg: dst, rm })
  })
}
for (const [name, bytes, regs] of [
  ['cbw', [0x66, 0x98], [RAX]],
  ['cwde', [0x98], [RAX]],
  ['cdqe', [0x48, 0x98], [RAX]],
  ['cwd', [0x66, 0x99], [RAX, RDX]],
  ['cdq', [0x99], [RAX, RDX]],
  ['cqo', [0x48, 0x99], [RAX, RDX]],
] as const) {
  add('mov', `${name} (${bytes.map((x) => x.toString(16)).join(' ')})`, 0, (c) => {
    c.claim(...regs)
    c.gpr[RAX] = c.rng.edge(64)
    c.raw(...bytes)
  })
}

add('mov', 'bswap r32 (0f c8+r)', 0, (c) => {
  c.emit({ opcode: [0x0f, 0xc8], opReg: c.regOperand(4) })
})
add('mov', 'bswap r64 (48 0f c8+r)', 0, (c) => {
  c.emit({ w: true, opcode: [0x0f, 0xc8], opReg: c.regOperand(8) })
})

// -- lea and addressing forms ---------------------------------------------------------------

type AddrKind =
  | 'base'
  | 'base+disp8'
  | 'base+disp32'
  | 'base+index*scale'
  | 'index*scale+disp32'
  | 'disp32'
  | 'rip'
const ADDR_KINDS: AddrKind[] = [
  'base',
  'base+disp8',
  'base+disp32',
  'base+index*scale',
  'index*scale+disp32',
  'disp32',
  'rip',
]

/** A random memory operand of the given addressing kind; registers get random values (lea reads no memory). */
function leaOperand(c: CaseBuilder, kind: AddrKind): Mem {
  const rng = c.rng
  // any base, including the ones with special encodings: rsp (SIB), rbp/r13 (disp8 0), r12 (SIB)
  const base = rng.pick([RSP, RBP, 12, 13, rng.int(16)])
  const pickIndex = () => rng.pick([...Array.from({ length: 16 }, (_, i) => i).filter((i) => i !== RSP)])
  const scale = rng.pick([1, 2, 4, 8] as const)
  const d8 = rng.range(-128, 127)
  const d32 = Number(BigInt.asIntN(32, rng.edge(32)))
  for (const r of [base]) if (r !== RSP) c.gpr[r] = rng.edge(64)
  switch (kind) {
    case 'base':
      return { kind: 'mem', base, index: null, scale: 1, disp: 0 }
    case 'base+disp8':
      return { kind: 'mem', base, index: null, scale: 1, disp: d8 }
    case 'base+disp32':
      return rng.bool(0.3)
        ? { kind: 'mem', base, index: null, scale: 1, disp: d8, dispSize: 4 }
        : { kind: 'mem', base, index: null, scale: 1, disp: d32 }
    case 'base+index*scale': {
      const index = pickIndex()
      c.gpr[index] = rng.edge(64)
      return { kind: 'mem', base, index, scale, disp: rng.pick([0, d8, d32]) }
    }
    case 'index*scale+disp32': {
      const index = pickIndex()
      c.gpr[index] = rng.edge(64)
      return { kind: 'mem', base: null, index, scale, disp: d32 }
    }
    case 'disp32':
      return { kind: 'mem', base: null, index: null, scale: 1, disp: d32 }
    case 'rip':
      return {
        kind: 'mem',
        base: null,
        index: null,
        scale: 1,
        disp: 0,
        ripTarget: CODE_BASE + BigInt(d32 >> 2),
      }
  }
}

for (const size of WIDE) {
  for (const kind of ADDR_KINDS) {
    add('lea', `lea r${bitsName(size)}, [${kind}] (8d)`, 0, (c) => {
      const dst = c.pickGpr()
      const m = leaOperand(c, kind)
      c.emit({ ...sz(size), opcode: [0x8d], reg: reg(dst), rm: m })
    })
  }
  add('lea', `lea r${bitsName(size)}, [e-base+e-index*scale+disp] (67 8d)`, 0, (c) => {
    const dst = c.pickGpr()
    const m = leaOperand(
      c,
      c.rng.pick(['base', 'base+disp8', 'base+disp32', 'base+index*scale', 'index*scale+disp32']),
    )
    c.emit({ addr32: true, ...sz(size), opcode: [0x8d], reg: reg(dst), rm: m })
  })
}

// Memory reads through each special base/index encoding.
for (const [label, base, index] of [
  ['[rsp+disp]', RSP, undefined],
  ['[rbp+disp]', RBP, undefined],
  ['[r12+disp]', 12, undefined],
  ['[r13+disp]', 13, undefined],
  ['[base+r12*scale]', undefined, 12],
  ['[rsp+index*scale]', RSP, undefined],
] as Array<[string, number | undefined, number | undefined]>) {
  add('lea', `mov r64, qword ${label} (8b)`, 0, (c) => {
    const dst = c.pickGpr()
    c.claim(12, 13, RBP)
    if (base === RSP) {
      // rsp is the base: point it near the target
      const off = c.rng.range(0x100, 0xf00) & ~7
      const disp = c.rng.pick([0, 8 * c.rng.range(-16, 16), -0x100, 0x80])
      c.gpr[RSP] = DATA_BASE + BigInt(off - disp)
      let idx: number | null = null
      let scale: 1 | 2 | 4 | 8 = 1
      if (label === '[rsp+index*scale]') {
        idx = c.pickGpr()
        scale = c.rng.pick([1, 2, 4, 8] as const)
        const iv = c.rng.range(-16, 16)
        c.gpr[idx] = BigInt.asUintN(64, BigInt(iv))
        c.gpr[RSP] -= BigInt(iv * scale)
      }
      c.emit({
        w: true,
        opcode: [0x8b],
        reg: reg(dst),
        rm: { kind: 'mem', base: RSP, index: idx, scale, disp },
      })
      return
    }
    const mo =
      base !== undefined
        ? c.memOperand(8, { base, index: c.rng.bool(0.3) ? c.pickGpr() : null })
        : c.memOperand(8, { base: c.pickGpr(), index: index ?? null })
    c.emit({ w: true, opcode: [0x8b], reg: reg(dst), rm: mo.op })
  })
}
add('lea', 'mov r64, [base+index*scale+disp] with wrapping 64-bit base and index (8b)', 0, (c) => {
  const dst = c.pickGpr()
  const mo = c.memOperand(8, { rip: false, wild: true, base: c.pickGpr(), index: c.pickGpr() })
  c.emit({ w: true, opcode: [0x8b], reg: reg(dst), rm: mo.op })
})
add('lea', 'add [base+index*scale+disp], r32 with wrapping 64-bit base and index (01)', 0, (c) => {
  const src = c.regOperand(4)
  const mo = c.memOperand(4, { rip: false, wild: true, base: c.pickGpr(), index: c.pickGpr() })
  c.emit({ opcode: [0x01], reg: src, rm: mo.op })
})
add('lea', 'mov r64, [e-base+e-index*scale+disp] (67 8b)', 0, (c) => {
  const dst = c.pickGpr()
  const mo = c.memOperand(8, { addr32: true, rip: false, wild: true })
  c.emit({ addr32: true, w: true, opcode: [0x8b], reg: reg(dst), rm: mo.op })
})

// -- string instructions ----------------------------------------------------------------------

const STRINGS: Array<[string, number, boolean, boolean]> = [
  // name, byte opcode, uses rsi, uses rdi
  ['movs', 0xa4, true, true],
  ['cmps', 0xa6, true, true],
  ['stos', 0xaa, false, true],
  ['lods', 0xac, true, false],
  ['scas', 0xae, false, true],
]
const SUFFIX: Record<Size, string> = { 1: 'b', 2: 'w', 4: 'd', 8: 'q' }

for (const [name, opc, useSi, useDi] of STRINGS) {
  const compares = name === 'cmps' || name === 'scas'
  const prefixes: Array<[string, 0xf2 | 0xf3 | undefined]> = compares
    ? [
        ['', undefined],
        ['repe ', 0xf3],
        ['repne ', 0xf2],
      ]
    : [
        ['', undefined],
        ['rep ', 0xf3],
      ]
  for (const size of SIZES) {
    for (const [pname, rep] of prefixes) {
      for (const df of [0, 1]) {
        add(
          'string',
          `${pname}${name}${SUFFIX[size]} (${(opc + (size === 1 ? 0 : 1)).toString(16)}) df=${df}`,
          0,
          (c) => {
            const rng = c.rng
            c.claim(RSI, RDI, RCX, RAX)
            c.setFlag(DF, df === 1)
            const count = rep ? rng.pick([0, 1, 2, 3, rng.range(4, 24), rng.range(25, 200)]) : 1
            if (rep) c.gpr[RCX] = BigInt(count)
            const n = Math.max(count, 1)
            const span = n * size
            const start = () => {
              const lo = df ? span - size : 0
              const hi = df ? DATA_SIZE - size : DATA_SIZE - span
              let s = rng.range(lo, hi)
              if (rng.bool(0.6)) s -= s % size
              if (s < lo) s += size
              return s
            }
            const si = start()
            const di = start()
            if (useSi) c.gpr[RSI] = DATA_BASE + BigInt(si)
            if (useDi) c.gpr[RDI] = DATA_BASE + BigInt(di)
            const lowOf = (s: number) => (df ? s - span + size : s)
            if (name === 'cmps') {
              // make the two strings agree (repe) or disagree (repne) up to a random point
              const a = lowOf(si)
              const b = lowOf(di)
              for (let i = 0; i < span; i++)
                c.data[b + i] = rep === 0xf2 ? c.data[a + i] ^ 0x5a : c.data[a + i]
              if (rng.bool(0.6)) {
                const at = rng.int(span)
                c.data[b + at] = rep === 0xf2 ? c.data[a + at] : c.data[a + at] ^ (1 << rng.int(8))
              }
            }
            if (name === 'scas') {
              const v = rng.edge(size * 8)
              c.setReg(RAX, size, v)
              const b = lowOf(di)
              for (let i = 0; i < n; i++) c.writeData(b + i * size, size, rep === 0xf2 ? v ^ 0x21n : v)
              if (rng.bool(0.6)) {
                const at = rng.int(n)
                c.writeData(b + at * size, size, rep === 0xf2 ? v : v ^ (1n << BigInt(rng.int(size * 8))))
              }
            }
            c.emit({ ...(rep ? { rep } : {}), ...sz(size), opcode: [opc + (size === 1 ? 0 : 1)] })
          },
        )
      }
    }
  }
}

// -- xchg, cmpxchg, xadd, cmpxchg8b/16b -----------------------------------------------------------

for (const size of SIZES) {
  const b = bitsName(size)
  const one = size === 1
  for (const kind of KINDS) {
    add('atomic', `xchg r/m${b}, r${b} (${one ? '86' : '87'}) ${kind}`, 0, (c) => {
      const legacy = legacyFor(c, size)
      const r = c.regOperand(size, legacy)
      const rm = kind === 'reg' && c.rng.bool(0.1) ? r : c.rmOperand(size, kind, legacy)
      c.emit({ ...sz(size), opcode: [one ? 0x86 : 0x87], reg: r, rm, byteReg: true, byteRm: true })
    })
    add('atomic', `cmpxchg r/m${b}, r${b} (0f ${one ? 'b0' : 'b1'}) ${kind}`, 0, (c) => {
      const legacy = legacyFor(c, size)
      c.claim(RAX)
      const r = c.regOperand(size, legacy)
      const rm = c.rmOperand(size, kind, legacy)
      const cur = rm.kind === 'reg' ? c.getReg(rm, size) : c.readData(c.lastMemOff(rm), size)
      c.setReg(RAX, size, c.rng.bool(0.5) ? cur : c.rng.edge(size * 8))
      // A failed 32-bit compare with a register destination: Intel writes the old value
      // back (clearing bits 63:32), AMD leaves the register alone.
      if (rm.kind === 'reg' && size === 4 && c.getReg(RAX, 4) !== cur)
        c.undefinedGpr.push([rm.n, 0xffffffff00000000n])
      c.emit({ ...sz(size), opcode: [0x0f, one ? 0xb0 : 0xb1], reg: r, rm, byteReg: true, byteRm: true })
    })
    add('atomic', `xadd r/m${b}, r${b} (0f ${one ? 'c0' : 'c1'}) ${kind}`, 0, (c) => {
      const legacy = legacyFor(c, size)
      const r = c.regOperand(size, legacy)
      const rm = kind === 'reg' && c.rng.bool(0.1) ? r : c.rmOperand(size, kind, legacy)
      c.emit({ ...sz(size), opcode: [0x0f, one ? 0xc0 : 0xc1], reg: r, rm, byteReg: true, byteRm: true })
    })
  }
  add('atomic', `lock cmpxchg m${b}, r${b}`, 0, (c) => {
    c.claim(RAX)
    const r = c.regOperand(size)
    const rm = c.rmOperand(size, 'mem')
    const cur = c.readData(c.lastMemOff(rm), size)
    c.setReg(RAX, size, c.rng.bool(0.5) ? cur : c.rng.edge(size * 8))
    c.emit({ lock: true, ...sz(size), opcode: [0x0f, one ? 0xb0 : 0xb1], reg: r, rm, byteReg: true })
  })
  add('atomic', `lock xadd m${b}, r${b}`, 0, (c) => {
    const r = c.regOperand(size)
    const rm = c.rmOperand(size, 'mem')
    c.emit({ lock: true, ...sz(size), opcode: [0x0f, one ? 0xc0 : 0xc1], reg: r, rm, byteReg: true })
  })
}
for (const size of WIDE) {
  add(
    'atomic',
    `xchg ${['', '', 'ax', '', 'eax', '', '', '', 'rax'][size]}, r${bitsName(size)} (90+r)`,
    0,
    (c) => {
      c.claim(RAX)
      const r = reg(c.pickGpr())
      c.emit({ ...sz(size), opcode: [0x90], opReg: r })
    },
  )
}
add('atomic', 'xchg r8, rax (49 90) and xchg eax, eax (87 c0)', 0, (c) => {
  c.raw(
    ...c.rng.pick([
      [0x49, 0x90],
      [0x87, 0xc0],
      [0x41, 0x90],
      [0x48, 0x90],
    ]),
  )
})
for (const lock of [false, true]) {
  add('atomic', `${lock ? 'lock ' : ''}cmpxchg8b m64 (0f c7 /1)`, 0, (c) => {
    c.claim(RAX, RCX, RDX, RBX)
    const mo = c.memOperand(8)
    const cur = c.readData(mo.off, 8)
    if (c.rng.bool(0.5)) {
      c.setReg(RAX, 4, cur)
      c.setReg(RDX, 4, cur >> 32n)
    }
    c.emit({ lock, opcode: [0x0f, 0xc7], digit: 1, rm: mo.op })
  })
  add('atomic', `${lock ? 'lock ' : ''}cmpxchg16b m128 (48 0f c7 /1)`, 0, (c) => {
    c.claim(RAX, RCX, RDX, RBX)
    const mo = c.memOperand(16, { align: 16 })
    if (c.rng.bool(0.5)) {
      c.gpr[RAX] = c.readData(mo.off, 8)
      c.gpr[RDX] = c.readData(mo.off + 8, 8)
    }
    c.emit({ lock, w: true, opcode: [0x0f, 0xc7], digit: 1, rm: mo.op })
  })
}

// -- flags, nops, misc ------------------------------------------------------------------------

for (const [name, byte] of [
  ['clc', 0xf8],
  ['stc', 0xf9],
  ['cmc', 0xf5],
  ['cld', 0xfc],
  ['std', 0xfd],
  ['lahf', 0x9f],
  ['sahf', 0x9e],
] as const) {
  add('flags', `${name} (${byte.toString(16)})`, 0, (c) => {
    c.raw(byte)
  })
}
add('flags', 'nop forms (90, 66 90, 0f 1f /0, cs nopw, pause, endbr64)', 0, (c) => {
  const nops = [
    [0x90],
    [0x66, 0x90],
    [0x0f, 0x1f, 0x00],
    [0x0f, 0x1f, 0x40, 0x00],
    [0x0f, 0x1f, 0x44, 0x00, 0x00],
    [0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
    [0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00],
    [0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    [0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    [0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    [0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
    [0x0f, 0x1f, 0x04, 0x25, 0x00, 0x00, 0x00, 0x80],
    [0xf3, 0x90],
    [0xf3, 0x0f, 0x1e, 0xfa],
    [0x48, 0x0f, 0x1f, 0xc0],
  ]
  for (let i = 0; i < 4; i++) c.raw(...c.rng.pick(nops))
})

// -- exceptions ----------------------------------------------------------------------------------

/**
 * Sequences that raise an exception at CPL 3. The expected vector is what the
 * architecture says; the comparison also checks the error code and the rip
 * (faults: the faulting instruction; traps -- int3, a TF single-step: the next).
 */
function faultForm(name: string, vector: number, build: (c: CaseBuilder) => void): void {
  add('fault', name, 0, (c) => {
    c.expectVector = vector
    build(c)
  })
}

faultForm('ud2 (0f 0b)', 6, (c) => c.raw(0x0f, 0x0b))
faultForm('ud0 (0f ff /r)', 6, (c) => c.raw(0x0f, 0xff, 0xc0))
faultForm('invalid in 64-bit mode (06 07 0e 16 17 1e 1f 27 2f 37 3f 60 61 ce d4 d5)', 6, (c) => {
  c.raw(
    c.rng.pick([
      0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0xce, 0xd4, 0xd5,
    ]),
  )
  if (c.bytes[0] === 0xd4 || c.bytes[0] === 0xd5) c.raw(0x0a)
})
faultForm('lock on a register or non-lockable instruction (f0 01 c0 / f0 90 / f0 8b 03)', 6, (c) => {
  c.raw(
    ...c.rng.pick([
      [0xf0, 0x01, 0xc0],
      [0xf0, 0x90],
      [0xf0, 0x8b, 0x03],
    ]),
  )
})
faultForm('lea with a register operand (8d c0)', 6, (c) => c.raw(0x8d, 0xc0))
faultForm('privileged: hlt cli sti in out clts mov cr wrmsr rdmsr invd wbinvd', 13, (c) => {
  c.raw(
    ...c.rng.pick([
      [0xf4],
      [0xfa],
      [0xfb],
      [0xec],
      [0xee],
      [0xe4, 0x80],
      [0x0f, 0x06],
      [0x0f, 0x20, 0xc0],
      [0x0f, 0x22, 0xd8],
      [0x0f, 0x30],
      [0x0f, 0x32],
      [0x0f, 0x08],
      [0x0f, 0x09],
      [0x0f, 0x01, 0x18],
    ]),
  )
})
faultForm('int3 (cc): trap, rip after', 3, (c) => {
  c.raw(0x90, 0xcc, 0x90)
})
faultForm('popf sets TF: single-step trap after the next instruction', 1, (c) => {
  // pushfq; or qword [rsp], 0x100; popfq; nop; nop
  c.raw(0x9c, 0x48, 0x81, 0x0c, 0x24, 0x00, 0x01, 0x00, 0x00, 0x9d, 0x90, 0x90)
})
faultForm('divide by zero (f7 f1)', 0, (c) => {
  c.claim(RCX)
  c.gpr[RCX] = c.rng.bits(64) & ~0xffffffffn
  c.raw(0xf7, 0xf1)
})
faultForm('read of an unmapped page', 14, (c) => {
  const r = c.pickGpr()
  c.gpr[r] = c.rng.pick([0x30000000n, DATA_BASE + 0x1000n, DATA_BASE - 8n, 0x1000n])
  c.emit({
    w: true,
    opcode: [0x8b],
    reg: reg(c.pickGpr()),
    rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 0 },
  })
})
faultForm('write to an unmapped page', 14, (c) => {
  const r = c.pickGpr()
  c.gpr[r] = c.rng.pick([0x30000000n, DATA_BASE + 0x1000n, DATA_BASE - 8n])
  c.emit({
    w: true,
    opcode: [0x89],
    reg: reg(c.pickGpr()),
    rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 0 },
  })
})
faultForm('access crossing the end of the data page', 14, (c) => {
  const r = c.pickGpr()
  c.gpr[r] = DATA_BASE + BigInt(c.rng.range(4089, 4095))
  const store = c.rng.bool()
  c.emit({
    w: true,
    opcode: [store ? 0x89 : 0x8b],
    reg: reg(c.pickGpr()),
    rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 0 },
  })
})
faultForm('write to the (read+exec) code page', 14, (c) => {
  const r = c.pickGpr()
  c.gpr[r] = CODE_BASE + BigInt(c.rng.range(0x100, 0x200))
  c.emit({
    opcode: [0x88],
    reg: reg(0),
    rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 0 },
    byteReg: true,
  })
})
faultForm('execute from the (no-exec) data page', 14, (c) => {
  const r = c.pickGpr()
  c.gpr[r] = DATA_BASE + BigInt(c.rng.range(0, 0xfff))
  c.emit({ opcode: [0xff], digit: 4, rm: reg(r) })
})
faultForm('non-canonical data address: #GP(0), or #SS(0) through rbp', 13, (c) => {
  const r = c.pickGpr()
  // rbp- and rsp-based addresses use SS: a non-canonical one raises #SS(0) instead
  if (r === RBP) c.expectVector = 12
  c.gpr[r] = c.rng.pick([0x8000000000000000n, 0x0000800000000000n, 0xfffe000000000000n, 0x1234567812345678n])
  c.emit({
    w: true,
    opcode: [0x8b],
    reg: reg(c.pickGpr()),
    rm: { kind: 'mem', base: r, index: null, scale: 1, disp: 0 },
  })
})
faultForm('non-canonical stack address: #SS(0)', 12, (c) => {
  c.gpr[RSP] = 0x0000800000000010n
  c.raw(c.rng.pick([0x50, 0x58]))
})
faultForm('cmpxchg16b on a misaligned operand: #GP(0)', 13, (c) => {
  c.claim(RAX, RCX, RDX, RBX)
  const mo = c.memOperand(16, { off: c.rng.range(1, 200) * 16 + c.rng.pick([1, 4, 8]) })
  c.emit({ w: true, opcode: [0x0f, 0xc7], digit: 1, rm: mo.op })
})

// ------------------------------------------------------------------------------------------------

export const INSTRUCTION_FORMS: readonly InstructionForm[] = forms

/** Forms whose names are unique (a check for this table itself). */
export function duplicateFormNames(): string[] {
  const seen = new Set<string>()
  const dups: string[] = []
  for (const f of forms) {
    if (seen.has(f.name)) dups.push(f.name)
    seen.add(f.name)
  }
  return dups
}
