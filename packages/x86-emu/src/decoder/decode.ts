// x86-64 instruction decoder (64-bit mode only).
//
// decode() walks prefixes, the opcode escape (legacy 0F / 0F38 / 0F3A /
// 3DNow!, VEX, EVEX, XOP), then the opcode tables in ./tables, reading ModRM,
// SIB, displacement and immediates as the selected table entry asks. All
// opcode knowledge lives in the tables; this file knows only the encoding
// rules of the SDM (Vol. 2 ch. 2) and the 64-bit mode operand-size rules.

import {
  DecodeError,
  type DecodeFailure,
  type Encoding,
  InstructionFlag as F_,
  type Instruction,
  type OpcodeMap,
  type Operand,
  type SegmentRegister,
} from './instruction.js'
import * as R from './registers.js'
import * as E from './tables/evex.js'
import { MAP_0F as MAP_0F_ } from './tables/map-0f.js'
import * as M3 from './tables/map-0f38.js'
import * as M1 from './tables/map-1byte.js'
import {
  A as A_,
  type Entry,
  K as K_,
  type Leaf,
  MnSel as MnSel_,
  type OpcodeTable,
  type OpSpec,
  parsedLeaf as parsedLeaf_,
  Sz as Sz_,
  T as T_,
} from './tables/spec.js'
import * as V from './tables/vex.js'
import * as X from './tables/xop.js'

// Module-local copies of everything imported that decode() reads. An imported
// binding costs a property load on every use (a getter call under vitest's
// module runner); a local const does not, and the properties of a frozen
// local enum copy fold to constants in optimized code.
const F_READS = F_.ReadsMemory
const F_WRITES = F_.WritesMemory
const F_MAY_FAULT = F_.MayFault
const F_LOCKABLE = F_.Lockable
const F_PRIVILEGED = F_.Privileged
const A: typeof A_ = Object.freeze({ ...A_ })
const K: typeof K_ = Object.freeze({ ...K_ })
const Sz: typeof Sz_ = Object.freeze({ ...Sz_ })
const T: typeof T_ = Object.freeze({ ...T_ })
const MnSel: typeof MnSel_ = Object.freeze({ ...MnSel_ })
const parsedLeaf = parsedLeaf_
const { BND, CR, DR, GPR8, GPR8_HIGH, GPR16, GPR32, GPR64, MASK, MMX, SEGMENTS, ST, XMM, YMM, ZMM } = R
const MAP_1BYTE = M1.MAP_1BYTE
const NOP = M1.NOP
const PAUSE = M1.PAUSE
const MAP_0F = MAP_0F_
const MAP_0F38 = M3.MAP_0F38
const MAP_0F3A = M3.MAP_0F3A
const AMD3DNOW = M3.AMD3DNOW

/** Thrown internally (preallocated: failures are common when scanning data). */
class Fail {
  constructor(readonly reason: DecodeFailure) {}
}
const TRUNCATED = new Fail('truncated')
const TOO_LONG = new Fail('too-long')
const INVALID = new Fail('invalid')

const ENC_LEGACY = 0
const ENC_VEX = 1
const ENC_EVEX = 2
const ENC_XOP = 3
const ENC_3DNOW = 4
const ENCODINGS: Encoding[] = ['legacy', 'vex', 'evex', 'xop', '3dnow']
const MANDATORY = [0, 0x66, 0xf3, 0xf2] as const

const VEX_TABLES: (OpcodeTable | null)[] = [null, V.VEX_0F, V.VEX_0F38, V.VEX_0F3A]
const EVEX_TABLES: (OpcodeTable | null)[] = [null, E.EVEX_0F, E.EVEX_0F38, E.EVEX_0F3A]
const XOP_TABLES: (OpcodeTable | null)[] = [X.XOP_8, X.XOP_9, X.XOP_A]

const ZERO_BIG = 0n
/** BigInt(-128 .. 255): most immediates are small, and BigInt() is slow on hot paths. */
const SMALL_BIG: bigint[] = Array.from({ length: 384 }, (_, i) => BigInt(i - 128))
const big = (v: number): bigint => (v >= -128 && v < 256 ? SMALL_BIG[v + 128] : BigInt(v))

/** A copy of src[start, end): a new array filled by hand is faster than slice() for a few bytes. */
function copyBytes(src: Uint8Array, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start)
  for (let i = start; i < end; i++) out[i - start] = src[i]
  return out
}
const TWO_32 = 0x1_0000_0000

const ACC_R = 1
const ACC_W = 2

class Decoder {
  buf: Uint8Array = new Uint8Array(0)
  start = 0
  pos = 0

  lock = false
  rep = 0
  seg = -1
  opsz = false
  adsz = false
  rex = 0

  enc = ENC_LEGACY
  map = 0
  opcode = 0
  W = 0
  R = 0
  X = 0
  B = 0
  Rp = 0 // EVEX.R'
  Vp = 0 // EVEX.V'
  vvvv = 0
  L = 0
  pp = 0
  z = 0
  bc = 0
  aaa = 0

  hasModrm = false
  forceReg = false
  modrm = -1
  mod = 0
  regRaw = 0
  rmRaw = 0
  sib = -1
  sibIndex = 0
  base = -1
  index = -1
  scale: 1 | 2 | 4 | 8 = 1
  rip = false
  disp = 0
  dispOff = -1
  dispSize: 0 | 1 | 2 | 4 | 8 = 0

  immOff = -1
  immSize: 0 | 1 | 2 | 4 | 8 = 0
  imm = 0
  immLo = 0
  immHi = 0
  imm2 = 0
  imm2Size: 0 | 1 = 0

  need(n: number): void {
    if (this.pos + n - this.start > 15) throw TOO_LONG
    if (this.pos + n > this.buf.length) throw TRUNCATED
  }

  byte(): number {
    this.need(1)
    return this.buf[this.pos++]
  }

  /** Little-endian signed value of n (1, 2 or 4) bytes. */
  signed(n: number): number {
    this.need(n)
    const b = this.buf
    const p = this.pos
    this.pos += n
    if (n === 1) return (b[p] << 24) >> 24
    if (n === 2) return ((b[p] | (b[p + 1] << 8)) << 16) >> 16
    return b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)
  }

  readModrm(): void {
    if (this.hasModrm) return
    const m = this.byte()
    this.hasModrm = true
    this.modrm = m
    this.mod = m >> 6
    this.regRaw = (m >> 3) & 7
    this.rmRaw = m & 7
    // mov to/from control and debug registers ignore mod: always a register, no SIB or displacement.
    if (this.mod === 3 || this.forceReg) return
    let base = this.rmRaw
    if (base === 4) {
      const s = this.byte()
      this.sib = s
      this.scale = (1 << (s >> 6)) as 1 | 2 | 4 | 8
      this.sibIndex = ((s >> 3) & 7) | (this.X << 3)
      this.index = this.sibIndex === 4 ? -1 : this.sibIndex
      base = s & 7
      if (base === 5 && this.mod === 0) {
        this.base = -1
        this.readDisp(4)
        return
      }
    } else if (base === 5 && this.mod === 0) {
      this.rip = true
      this.base = -1
      this.readDisp(4)
      return
    }
    this.base = base | (this.B << 3)
    if (this.mod === 1) this.readDisp(1)
    else if (this.mod === 2) this.readDisp(4)
  }

  readDisp(n: 1 | 4): void {
    this.dispOff = this.pos - this.start
    this.dispSize = n
    this.disp = this.signed(n)
  }

  readImm(n: number): void {
    if (this.immSize !== 0) {
      // enter / extrq / insertq: the second immediate is always one byte.
      this.imm2 = this.byte()
      this.imm2Size = 1
      return
    }
    this.immOff = this.pos - this.start
    if (n === 8) {
      this.need(8)
      const lo = this.signed(4) >>> 0
      const hi = this.signed(4)
      this.imm = hi * TWO_32 + lo
      this.immLo = lo
      this.immHi = hi
      this.immSize = 8
      return
    }
    this.immSize = n as 1 | 2 | 4
    this.imm = this.signed(n)
  }

  run(buf: Uint8Array, address: number, offset: number): Instruction {
    this.buf = buf
    this.start = offset
    this.pos = offset
    this.lock = false
    this.rep = 0
    this.seg = -1
    this.opsz = false
    this.adsz = false
    this.rex = 0
    this.enc = ENC_LEGACY
    this.W = 0
    this.R = 0
    this.X = 0
    this.B = 0
    this.Rp = 0
    this.Vp = 0
    this.vvvv = 0
    this.L = 0
    this.pp = 0
    this.z = 0
    this.bc = 0
    this.aaa = 0
    this.hasModrm = false
    this.forceReg = false
    this.modrm = -1
    this.mod = this.regRaw = this.rmRaw = 0
    this.sib = -1
    this.sibIndex = 0
    this.base = this.index = -1
    this.scale = 1
    this.rip = false
    this.disp = 0
    this.dispOff = -1
    this.dispSize = 0
    this.immOff = -1
    this.immSize = 0
    this.imm = 0
    this.immLo = 0
    this.immHi = 0
    this.imm2 = 0
    this.imm2Size = 0

    // Legacy prefixes and REX. A REX counts only right before the opcode.
    let fsgs = false
    let b: number
    prefixes: for (;;) {
      b = this.byte()
      switch (b) {
        case 0xf0:
          this.lock = true
          break
        case 0xf2:
        case 0xf3:
          this.rep = b
          break
        case 0x26:
        case 0x2e:
        case 0x36:
        case 0x3e:
          // In 64-bit mode ES/CS/SS/DS overrides are null prefixes: they never displace FS/GS.
          if (!fsgs) this.seg = (b >> 3) & 3
          break
        case 0x64:
        case 0x65:
          this.seg = b - 0x60
          fsgs = true
          break
        case 0x66:
          this.opsz = true
          break
        case 0x67:
          this.adsz = true
          break
        default:
          if ((b & 0xf0) === 0x40) {
            this.rex = b
            continue prefixes
          }
          this.pos--
          break prefixes
      }
      this.rex = 0
    }
    if (this.rex !== 0) {
      this.W = (this.rex >> 3) & 1
      this.R = (this.rex >> 2) & 1
      this.X = (this.rex >> 1) & 1
      this.B = this.rex & 1
    }

    // Opcode and escapes.
    let table: OpcodeTable
    b = this.byte()
    let map = 0
    if (b === 0x0f) {
      b = this.byte()
      if (b === 0x38) {
        map = 2
        table = MAP_0F38
        b = this.byte()
      } else if (b === 0x3a) {
        map = 3
        table = MAP_0F3A
        b = this.byte()
      } else if (b === 0x0f) {
        map = 0x0f0f
        this.enc = ENC_3DNOW
        table = AMD3DNOW
      } else {
        map = 1
        table = MAP_0F
      }
    } else if (b === 0xc4 || b === 0xc5) {
      table = this.vexPrefix(b)
      map = this.map
      b = this.byte()
    } else if (b === 0x62) {
      table = this.evexPrefix()
      map = this.map
      b = this.byte()
    } else if (b === 0x8f && (this.peek() & 0x1f) >= 8) {
      table = this.xopPrefix()
      map = this.map
      b = this.byte()
    } else {
      table = MAP_1BYTE
    }
    this.map = map
    this.opcode = b

    let e: Entry
    if (this.enc === ENC_3DNOW) {
      // 0F 0F /r ib: the trailing byte is the opcode.
      this.readModrm()
      const suffix = this.byte()
      this.opcode = suffix
      e = table[suffix]
    } else if (map === 0 && b === 0x90 && this.B === 0) {
      e = this.rep === 0xf3 ? PAUSE : NOP
    } else {
      if (map === 1 && (b & 0xfc) === 0x20) this.forceReg = true
      e = table[b]
    }

    // Walk selectors down to a leaf.
    let mandatory = 0
    while (e !== null && e.t !== T.Leaf) {
      switch (e.t) {
        case T.Reg:
          this.readModrm()
          e = e.e[this.regRaw]
          break
        case T.Mod:
          this.readModrm()
          e = e.e[this.mod === 3 ? 1 : 0]
          break
        case T.Rm:
          this.readModrm()
          e = this.mod === 3 ? e.e[this.rmRaw] : null
          break
        case T.Pfx: {
          const i = this.prefixSlot()
          const next = e.e[i]
          if (i !== 0 && next !== e.e[0]) mandatory = i
          e = next
          break
        }
        case T.W:
          e = e.e[this.W]
          break
        case T.L:
          e = e.e[this.enc === ENC_EVEX ? this.L : this.L & 1]
          break
      }
    }
    if (e === null) throw INVALID
    return this.finish(parsedLeaf(e), mandatory, address)
  }

  /** The mandatory-prefix slot [none, 66, F3, F2]: the last F2/F3 takes precedence over 66; VEX & co. carry pp. */
  prefixSlot(): number {
    if (this.enc !== ENC_LEGACY) return this.pp
    if (this.rep === 0xf3) return 2
    if (this.rep === 0xf2) return 3
    return this.opsz ? 1 : 0
  }

  peek(): number {
    this.need(1)
    return this.buf[this.pos]
  }

  /** Prefixes that must not precede VEX/EVEX/XOP (#UD): 66, F2, F3, F0, REX. */
  checkNoLegacyBeforeVex(): void {
    if (this.opsz || this.rep !== 0 || this.lock || this.rex !== 0) throw INVALID
  }

  vexPrefix(c: number): OpcodeTable {
    this.checkNoLegacyBeforeVex()
    this.enc = ENC_VEX
    const p1 = this.byte()
    this.R = (~p1 >> 7) & 1
    let p2 = p1
    if (c === 0xc4) {
      this.X = (~p1 >> 6) & 1
      this.B = (~p1 >> 5) & 1
      this.map = p1 & 0x1f
      p2 = this.byte()
      this.W = p2 >> 7
    } else {
      this.map = 1
    }
    this.vvvv = (~p2 >> 3) & 15
    this.L = (p2 >> 2) & 1
    this.pp = p2 & 3
    const t = this.map < 4 ? VEX_TABLES[this.map] : null
    if (!t) throw INVALID
    return t
  }

  evexPrefix(): OpcodeTable {
    this.checkNoLegacyBeforeVex()
    this.enc = ENC_EVEX
    this.need(3)
    const p0 = this.buf[this.pos]
    const p1 = this.buf[this.pos + 1]
    const p2 = this.buf[this.pos + 2]
    this.pos += 3
    // P0 bits 3:2 and P1 bit 2 are fixed (0 and 1); maps 5/6 (AVX512-FP16) are not decoded.
    if ((p0 & 0x0c) !== 0 || (p1 & 4) === 0) throw INVALID
    this.R = (~p0 >> 7) & 1
    this.X = (~p0 >> 6) & 1
    this.B = (~p0 >> 5) & 1
    this.Rp = (~p0 >> 4) & 1
    this.map = p0 & 3
    this.W = p1 >> 7
    this.vvvv = (~p1 >> 3) & 15
    this.pp = p1 & 3
    this.z = p2 >> 7
    this.L = (p2 >> 5) & 3
    this.bc = (p2 >> 4) & 1
    this.Vp = (~p2 >> 3) & 1
    this.aaa = p2 & 7
    const t = EVEX_TABLES[this.map]
    if (!t) throw INVALID
    return t
  }

  xopPrefix(): OpcodeTable {
    this.checkNoLegacyBeforeVex()
    this.enc = ENC_XOP
    this.need(2)
    const p1 = this.buf[this.pos]
    const p2 = this.buf[this.pos + 1]
    this.pos += 2
    this.R = (~p1 >> 7) & 1
    this.X = (~p1 >> 6) & 1
    this.B = (~p1 >> 5) & 1
    this.map = p1 & 0x1f
    this.W = p2 >> 7
    this.vvvv = (~p2 >> 3) & 15
    this.L = (p2 >> 2) & 1
    this.pp = p2 & 3
    const t = this.map >= 8 && this.map <= 10 ? XOP_TABLES[this.map - 8] : null
    if (!t) throw INVALID
    return t
  }

  finish(leaf: Leaf, mandatory: number, address: number): Instruction {
    const attr = leaf.attr
    const enc = this.enc
    if (attr & A.ModRM) this.readModrm()

    // Effective operand size for general-purpose operands.
    let osz: 1 | 2 | 4 | 8
    if (attr & A.Byte) osz = 1
    else if (attr & A.F64) osz = 8
    else if (this.W) osz = 8
    else if (this.opsz && mandatory !== 1 && enc === ENC_LEGACY) osz = 2
    else osz = attr & A.D64 ? 8 : 4

    if (enc !== ENC_LEGACY && enc !== ENC_3DNOW) this.checkVex(leaf)

    // Vector length in bytes.
    let vl = 16
    if (enc === ENC_VEX || enc === ENC_XOP) vl = this.L ? 32 : 16
    else if (enc === ENC_EVEX) vl = this.evexVl(leaf)

    // Operand-form checks and immediates, in encoding order.
    const ops = leaf.ops
    let memSpec: OpSpec | null = null
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i]
      switch (o.k) {
        case K.M:
          if (this.mod === 3) throw INVALID
          memSpec = o
          break
        case K.E:
        case K.W:
        case K.Q:
        case K.KE:
        case K.BE:
        case K.GE:
          if (this.mod !== 3) memSpec = o
          break
        case K.R:
        case K.U:
        case K.N:
        case K.KR:
          if (this.mod !== 3) throw INVALID
          break
        case K.I:
          this.readImm(this.immBytes(o.s, osz))
          break
        case K.I2:
          this.readImm(1)
          break
        case K.J:
          this.readImm(o.s === Sz.b ? 1 : osz === 2 ? 2 : 4)
          break
        case K.O:
          this.readMoffs()
          break
        case K.L:
          this.readImm(1)
          break
        case K.BG:
          if (this.regRaw + (this.R << 3) > 3) throw INVALID
          break
        case K.C: {
          const cr = this.regRaw | (this.R << 3)
          if (cr === 1 || (cr >= 5 && cr <= 7) || cr > 8) throw INVALID
          break
        }
        case K.D:
          if (this.R) throw INVALID
          break
        // Mask registers are k0-k7: register-extension bits that would select k8+ must be clear.
        case K.KH:
          if (this.vvvv > 7) throw INVALID
          break
        case K.KG:
          if (this.R) throw INVALID
          break
        case K.G:
          // EVEX.R' would select a 17th+ general-purpose register.
          if (this.Rp) throw INVALID
          break
      }
      // A mask register in r/m: REX.B/VEX.B would select k8+ (EVEX.X is ignored).
      if ((o.k === K.KR || o.k === K.KE) && this.mod === 3 && this.B) throw INVALID
    }
    if (attr & A.Vsib) {
      // VSIB: a SIB byte is mandatory and its index is a vector register.
      if (this.mod === 3 || this.rmRaw !== 4) throw INVALID
      this.index = this.sibIndex | (this.Vp << 4)
    }

    // LOCK needs a lockable instruction with a memory destination.
    if (this.lock && (!(attr & A.Lock) || this.mod === 3 || !this.hasModrm)) throw INVALID

    const length = this.pos - this.start

    // EVEX compressed disp8: scaled by the memory operand's size (or the element size when broadcasting).
    let disp = this.disp
    let memSize = memSpec === null ? 0 : this.sizeOf(memSpec.s, osz, vl)
    if (enc === ENC_EVEX && memSpec !== null) {
      // Elements are 4 or 8 bytes by EVEX.W for every instruction that broadcasts or gathers.
      if (this.bc || attr & A.Vsib) memSize = this.W ? 8 : 4
      if (this.dispSize === 1) disp *= memSize
    }

    // An address-only memory operand (lea, nop, prefetch, clflush) accesses nothing.
    if (attr & A.NoMem) memSize = 0

    // Operands.
    const operands: Operand[] = []
    let flags = leaf.flags
    let branchTarget: number | null = null
    const segName: SegmentRegister | null = this.seg >= 0 ? SEGMENTS[this.seg] : null
    for (let i = 0; i < ops.length; i++) {
      const o = ops[i]
      let op: Operand
      let isMem = false
      switch (o.k) {
        case K.E:
          if (this.mod === 3) op = this.gpr(this.rmRaw | (this.B << 3), this.sizeOf(o.s, osz, vl))
          else {
            op = this.memOp(memSize, segName, disp)
            isMem = true
          }
          break
        case K.GE:
          if (this.mod === 3) op = this.gpr(this.rmRaw | (this.B << 3), this.sizeOf(o.n, osz, vl))
          else {
            op = this.memOp(memSize, segName, disp)
            isMem = true
          }
          break
        case K.M:
        case K.W:
        case K.Q:
        case K.KE:
        case K.BE:
          if (this.mod !== 3) {
            op = this.memOp(memSize, segName, disp)
            isMem = true
          } else if (o.k === K.W) op = this.vec(this.rmVec(), this.sizeOf(o.s, osz, vl))
          else if (o.k === K.Q) op = reg(MMX[this.rmRaw], 'mmx', this.rmRaw, 8)
          else if (o.k === K.KE) op = reg(MASK[this.rmRaw], 'mask', this.rmRaw, 8)
          else {
            const n = this.rmRaw | (this.B << 3)
            if (n > 3) throw INVALID
            op = reg(BND[n], 'bnd', n, 16)
          }
          break
        case K.G:
          op = this.gpr(this.regRaw | (this.R << 3), this.sizeOf(o.s, osz, vl))
          break
        case K.R:
          op = this.gpr(this.rmRaw | (this.B << 3), this.sizeOf(o.s, osz, vl))
          break
        case K.Rf:
          op = this.gpr(this.rmRaw | (this.B << 3), 8)
          break
        case K.Z:
          op = this.gpr((this.opcode & 7) | (this.B << 3), this.sizeOf(o.s, osz, vl))
          break
        case K.Fix:
          op = this.gpr(o.n, this.sizeOf(o.s, osz, vl))
          break
        case K.B:
          op = this.gpr(this.vvvv, this.sizeOf(o.s, osz, vl))
          break
        case K.I:
          op = { kind: 'imm', size: this.immSize, value: this.imm, bigValue: this.immBig() }
          break
        case K.I2:
          op = { kind: 'imm', size: 1, value: this.imm2, bigValue: big(this.imm2) }
          break
        case K.One:
          op = { kind: 'imm', size: 1, value: 1, bigValue: 1n }
          break
        case K.J:
          branchTarget = address + length + this.imm
          op = { kind: 'rel', target: branchTarget }
          break
        case K.O:
          op = {
            kind: 'mem',
            size: this.sizeOf(o.s, osz, vl),
            segment: segName,
            base: -1,
            index: -1,
            scale: 1,
            displacement: this.disp,
            ripRelative: false,
          }
          isMem = true
          break
        case K.S:
          if (this.regRaw > 5) throw INVALID
          op = reg(SEGMENTS[this.regRaw], 'seg', this.regRaw, 2)
          break
        case K.Seg:
          op = reg(SEGMENTS[o.n], 'seg', o.n, 2)
          break
        case K.C: {
          const n = this.regRaw | (this.R << 3)
          op = reg(CR[n], 'cr', n, 8)
          break
        }
        case K.D:
          op = reg(DR[this.regRaw], 'dr', this.regRaw, 8)
          break
        case K.X:
        case K.Y: {
          const size = this.sizeOf(o.s, osz, vl)
          const x = o.k === K.X
          op = {
            kind: 'mem',
            size,
            segment: x ? segName : 'es',
            base: x ? 6 : 7,
            index: -1,
            scale: 1,
            displacement: 0,
            ripRelative: false,
          }
          isMem = true
          break
        }
        case K.V: {
          const n = this.regRaw | (this.R << 3) | (this.Rp << 4)
          op = this.vec(n, this.sizeOf(o.s, osz, vl))
          break
        }
        case K.U:
          op = this.vec(this.rmVec(), this.sizeOf(o.s, osz, vl))
          break
        case K.H:
          op = this.vec(this.vvvv | (this.Vp << 4), this.sizeOf(o.s, osz, vl))
          break
        case K.L:
          op = this.vec((this.imm >> 4) & 15, this.sizeOf(o.s, osz, vl))
          break
        case K.P:
          op = reg(MMX[this.regRaw], 'mmx', this.regRaw, 8)
          break
        case K.N:
          op = reg(MMX[this.rmRaw], 'mmx', this.rmRaw, 8)
          break
        case K.KG:
          op = reg(MASK[this.regRaw], 'mask', this.regRaw, 8)
          break
        case K.KR:
          op = reg(MASK[this.rmRaw], 'mask', this.rmRaw, 8)
          break
        case K.KH:
          op = reg(MASK[this.vvvv & 7], 'mask', this.vvvv & 7, 8)
          break
        case K.ST0:
          op = reg(ST[0], 'x87', 0, 10)
          break
        case K.STi:
          op = reg(ST[this.rmRaw], 'x87', this.rmRaw, 10)
          break
        case K.BG: {
          const n = this.regRaw | (this.R << 3)
          op = reg(BND[n], 'bnd', n, 16)
          break
        }
        default:
          throw INVALID
      }
      if (isMem) {
        if (!(attr & A.NoFault)) flags |= F_MAY_FAULT
        if (!(attr & A.NoMem)) {
          let acc: number
          if (o.k === K.X) acc = ACC_R
          else if (o.k === K.Y) acc = attr & A.StrRead ? ACC_R : ACC_W
          else if (i === 0) acc = attr & A.ReadOnly ? ACC_R : attr & A.WriteOnly ? ACC_W : ACC_R | ACC_W
          else acc = ACC_R
          if (acc & ACC_R) flags |= F_READS
          if (acc & ACC_W) flags |= F_WRITES
        }
      }
      operands.push(op)
    }
    if (attr & A.Push) flags |= F_WRITES | F_MAY_FAULT
    if (attr & A.Pop) flags |= F_READS | F_MAY_FAULT
    if (attr & A.Lock) flags |= F_LOCKABLE
    if (flags & F_PRIVILEGED) flags |= F_MAY_FAULT

    let mnemonic = leaf.mn
    if (leaf.mns !== null) {
      switch (leaf.mnSel) {
        case MnSel.OpSize:
          mnemonic = leaf.mns[osz === 2 ? 0 : osz === 4 ? 1 : 2]
          break
        case MnSel.W:
          mnemonic = leaf.mns[this.W]
          break
        case MnSel.AddrSize:
          mnemonic = leaf.mns[this.adsz ? 0 : 1]
          break
      }
    }

    const immSize = this.immSize
    const vexInfo =
      enc === ENC_LEGACY || enc === ENC_3DNOW
        ? null
        : { l: this.L, w: this.W === 1, vvvv: this.vvvv | (this.Vp << 4) }
    const mandatoryPrefix =
      enc === ENC_LEGACY ? MANDATORY[mandatory] : enc === ENC_3DNOW ? 0 : MANDATORY[this.pp]
    const insn: Instruction = {
      address,
      length,
      bytes: copyBytes(this.buf, this.start, this.pos),
      encoding: ENCODINGS[enc],
      map: this.map as OpcodeMap,
      opcode: this.opcode,
      mnemonic,
      lock: this.lock,
      rep: this.rep as 0 | 0xf2 | 0xf3,
      segment: this.seg >= 0 ? SEGMENTS[this.seg] : null,
      operandSizePrefix: this.opsz,
      addressSizePrefix: this.adsz,
      mandatoryPrefix: mandatoryPrefix as 0 | 0x66 | 0xf2 | 0xf3,
      rex: this.rex,
      rexW: this.W === 1,
      rexR: this.R === 1,
      rexX: this.X === 1,
      rexB: this.B === 1,
      vex: vexInfo,
      modrm: this.modrm,
      mod: this.hasModrm ? this.mod : 0,
      reg: this.hasModrm ? this.regRaw | (this.R << 3) : 0,
      rm: this.hasModrm ? this.rmRaw | (this.B << 3) : 0,
      sib: this.sib,
      displacement: disp,
      displacementOffset: this.dispOff,
      displacementSize: this.dispSize,
      immediate: this.imm,
      immediateBig: immSize === 0 ? ZERO_BIG : this.immBig(),
      immediateOffset: this.immOff,
      immediateSize: immSize,
      immediate2: this.imm2Size ? this.imm2 : 0,
      immediate2Size: this.imm2Size,
      operandSize: osz,
      addressSize: this.adsz ? 4 : 8,
      operands,
      ripRelative: this.rip,
      branchTarget,
      flags,
    }
    if (enc === ENC_EVEX) insn.evex = { z: this.z === 1, b: this.bc === 1, aaa: this.aaa, ll: this.L }
    return insn
  }

  /** Immediate size in bytes for an I operand. */
  immBytes(s: number, osz: number): number {
    switch (s) {
      case Sz.b:
        return 1
      case Sz.w:
        return 2
      case Sz.d:
        return 4
      case Sz.z:
        return osz === 2 ? 2 : 4
      case Sz.v:
        return osz
      default:
        return 1
    }
  }

  /** moffs: an absolute address as wide as the address size. */
  readMoffs(): void {
    this.dispOff = this.pos - this.start
    if (this.adsz) {
      this.dispSize = 4
      this.disp = this.signed(4) >>> 0
    } else {
      this.need(8)
      const lo = this.signed(4) >>> 0
      const hi = this.signed(4)
      this.dispSize = 8
      this.disp = hi * TWO_32 + lo
    }
  }

  immBig(): bigint {
    if (this.immSize === 8) return (BigInt(this.immHi) << 32n) | BigInt(this.immLo)
    return big(this.imm)
  }

  sizeOf(s: number, osz: number, vl: number): number {
    if (s < Sz.v) return s
    switch (s) {
      case Sz.v:
        return osz
      case Sz.z:
        return osz === 8 ? 4 : osz
      case Sz.y:
        return this.W ? 8 : 4
      case Sz.x:
        return vl
      case Sz.h:
        return vl >> 1
      case Sz.qx:
        return vl >> 2
      case Sz.ox:
        return vl >> 3
      case Sz.p:
        return osz + 2
      case Sz.s:
        return 10
      case Sz.e:
        return this.opsz ? 14 : 28
      case Sz.fs:
        return this.opsz ? 94 : 108
      case Sz.xs:
        return this.W ? 8 : 4
      default:
        return 0
    }
  }

  gpr(n: number, size: number): Operand {
    switch (size) {
      case 8:
        return reg(GPR64[n], 'gpr', n, 8)
      case 2:
        return reg(GPR16[n], 'gpr', n, 2)
      case 1:
        if (this.rex === 0 && n >= 4 && n < 8)
          return { kind: 'reg', name: GPR8_HIGH[n - 4], class: 'gpr', index: n - 4, size: 1, high8: true }
        return reg(GPR8[n], 'gpr', n, 1)
      default:
        return reg(GPR32[n], 'gpr', n, 4)
    }
  }

  rmVec(): number {
    return this.rmRaw | (this.B << 3) | (this.enc === ENC_EVEX ? this.X << 4 : 0)
  }

  vec(n: number, size: number): Operand {
    if (size >= 64) return reg(ZMM[n], 'zmm', n, 64)
    if (size === 32) return reg(YMM[n], 'ymm', n, 32)
    return reg(XMM[n], 'xmm', n, 16)
  }

  memOp(size: number, segment: SegmentRegister | null, disp: number): Operand {
    return {
      kind: 'mem',
      size,
      segment,
      base: this.base,
      index: this.index,
      scale: this.scale,
      displacement: disp,
      ripRelative: this.rip,
    }
  }

  checkVex(leaf: Leaf): void {
    const attr = leaf.attr
    if (attr & A.W0 && this.W) throw INVALID
    if (attr & A.W1 && !this.W) throw INVALID
    if (attr & A.NoVvvv && (this.vvvv !== 0 || (this.Vp && !(attr & A.Vsib)))) throw INVALID
    if (this.enc !== ENC_EVEX) {
      if (attr & A.L0 && this.L) throw INVALID
      if (attr & A.L1 && !this.L) throw INVALID
    }
  }

  evexVl(leaf: Leaf): number {
    const attr = leaf.attr
    this.readModrm()
    const reg = this.mod === 3
    if (this.z && (attr & (A.NoZero | A.NoMask) || (!reg && attr & A.WriteOnly && leaf.ops[0].k !== K.V)))
      throw INVALID
    if (this.aaa === 0 ? attr & A.MaskReq : attr & A.NoMask) throw INVALID
    if (this.bc) {
      if (reg) {
        // EVEX.b on registers: rounding control (L'L is the rounding mode) or SAE, at 512 bits.
        if (!(attr & (A.Er | A.Sae))) throw INVALID
        return attr & A.Lig ? 16 : 64
      }
      if (!(attr & A.Bcst)) throw INVALID
    }
    if (attr & A.Lig) return 16
    const ll = this.L
    if (ll === 3) throw INVALID
    if (attr & A.L0 && ll !== 0) throw INVALID
    if (attr & A.L1 && ll === 0) throw INVALID
    if (attr & A.L512 && ll !== 2) throw INVALID
    return 16 << ll
  }
}

function reg(
  name: string,
  cls: 'gpr' | 'seg' | 'cr' | 'dr' | 'mmx' | 'xmm' | 'ymm' | 'zmm' | 'x87' | 'mask' | 'bnd',
  index: number,
  size: number,
): Operand {
  return { kind: 'reg', name, class: cls, index, size }
}

const D = new Decoder()

/** Decode one 64-bit-mode instruction at bytes[offset]; `address` is its linear address. Throws DecodeError. */
export function decode(bytes: Uint8Array, address: number, offset = 0): Instruction {
  const r = tryDecode(bytes, address, offset)
  if (r instanceof DecodeError) throw r
  return r
}

/** Like decode, but returns the DecodeError instead of throwing it. */
export function tryDecode(bytes: Uint8Array, address: number, offset = 0): Instruction | DecodeError {
  // A caller's bug, not bytes that fail to decode: reading at a negative or fractional index would walk undefined bytes.
  if (!(offset >= 0 && Number.isSafeInteger(offset)))
    throw new RangeError(`decode: offset ${offset} is not an index`)
  try {
    return D.run(bytes, address, offset)
  } catch (e) {
    if (e instanceof Fail)
      return new DecodeError(e.reason, address, bytes.slice(offset, Math.min(bytes.length, offset + 15)))
    throw e
  }
}
