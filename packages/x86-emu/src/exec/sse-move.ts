// SSE/SSE2 data movement: movaps/movups/movapd/movupd, movss/movsd,
// movlps/movhps/movlpd/movhpd/movlhps/movhlps, movdqa/movdqu, movd/movq
// (GPR or memory <-> XMM, XMM <-> XMM/m64), movntps/movntpd/movntdq (plain
// stores here: no caches to bypass), maskmovdqu, pmovmskb, pinsrw/pextrw.
//
// The aligned forms (movaps, movapd, movdqa, movnt*) raise #GP(0) for a
// memory operand not aligned to 16 bytes; the others accept any address.

import type { Cpu } from '../cpu/cpu.js'
import type { Instruction } from '../decoder/instruction.js'
import type { Op } from './op.js'
import { compileEa, readReg, readRm, wrap64, writeReg, writeRm } from './operands.js'
import { compileEa16, I32, imm8, load64, load128, loadDst, U8, write128 } from './sse-common.js'

/** xmm(reg) = full r/m operand (movaps/movups/movapd/movupd/movdqa/movdqu loads). */
function moveLoad128(insn: Instruction, aligned: boolean): Op {
  const d = insn.reg * 4
  const load = load128(insn, aligned)
  return (c) => {
    load(c)
    const x = c.xmm
    x[d] = I32[4]
    x[d + 1] = I32[5]
    x[d + 2] = I32[6]
    x[d + 3] = I32[7]
  }
}

/** r/m = xmm(reg), 16 bytes (the store forms; a register destination is a plain copy). */
function moveStore128(insn: Instruction, aligned: boolean): Op {
  const s = insn.reg * 4
  if (insn.mod === 3) {
    const d = insn.rm * 4
    return (c) => {
      const x = c.xmm
      x[d] = x[s]
      x[d + 1] = x[s + 1]
      x[d + 2] = x[s + 2]
      x[d + 3] = x[s + 3]
    }
  }
  const ea = compileEa16(insn, aligned)
  return (c) => {
    const x = c.xmm
    write128(c, ea(c), x[s], x[s + 1], x[s + 2], x[s + 3])
  }
}

/** m64 = low (or high) quadword of xmm(reg). */
function storeQword(insn: Instruction, high: boolean): Op {
  const s = insn.reg * 4 + (high ? 2 : 0)
  const ea = compileEa(insn)
  return (c) => {
    const x = c.xmm
    c.write64(ea(c), x[s], x[s + 1])
  }
}

/** Low (or high) quadword of xmm(reg) = m64 or a quadword of an xmm register (srcLane 0 or 2). */
function loadQword(insn: Instruction, high: boolean, srcLane = 0): Op {
  const d = insn.reg * 4 + (high ? 2 : 0)
  if (insn.mod === 3) {
    const s = insn.rm * 4 + srcLane
    return (c) => {
      const x = c.xmm
      const lo = x[s]
      const hi = x[s + 1]
      x[d] = lo
      x[d + 1] = hi
    }
  }
  const ea = compileEa(insn)
  return (c) => {
    const lo = c.read64(ea(c))
    const x = c.xmm
    x[d] = lo
    x[d + 1] = c.th
  }
}

/** 0F 10 / 0F 11: movups, movupd, movss, movsd. */
export function compileMovUps(insn: Instruction): Op {
  const store = insn.opcode === 0x11
  const p = insn.mandatoryPrefix
  if (p === 0 || p === 0x66) return store ? moveStore128(insn, false) : moveLoad128(insn, false)
  const single = p === 0xf3
  const n = single ? 1 : 2
  if (insn.mod === 3) {
    // Register to register: only the low lane(s) move.
    const d = (store ? insn.rm : insn.reg) * 4
    const s = (store ? insn.reg : insn.rm) * 4
    return (c) => {
      const x = c.xmm
      x[d] = x[s]
      if (n === 2) x[d + 1] = x[s + 1]
    }
  }
  const ea = compileEa(insn)
  const r = insn.reg * 4
  if (store) {
    if (single) return (c) => c.write32(ea(c), c.xmm[r])
    return (c) => {
      const x = c.xmm
      c.write64(ea(c), x[r], x[r + 1])
    }
  }
  // Loads from memory zero the rest of the register.
  if (single)
    return (c) => {
      const v = c.read32(ea(c))
      const x = c.xmm
      x[r] = v
      x[r + 1] = 0
      x[r + 2] = 0
      x[r + 3] = 0
    }
  return (c) => {
    const lo = c.read64(ea(c))
    const x = c.xmm
    x[r] = lo
    x[r + 1] = c.th
    x[r + 2] = 0
    x[r + 3] = 0
  }
}

/** 0F 12/13/16/17: movlps/movlpd/movhlps, movhps/movhpd/movlhps and their stores. */
export function compileMovLowHigh(insn: Instruction): Op | null {
  const p = insn.mandatoryPrefix
  if (p !== 0 && p !== 0x66) return null // F3/F2 forms are SSE3 (movsldup, movddup, movshdup)
  switch (insn.opcode) {
    case 0x12:
      // mod 3 (no prefix): movhlps xmm1, xmm2 - low quadword = high quadword of xmm2.
      return insn.mod === 3 ? (p === 0 ? loadQword(insn, false, 2) : null) : loadQword(insn, false)
    case 0x13:
      return insn.mod === 3 ? null : storeQword(insn, false)
    case 0x16:
      // mod 3 (no prefix): movlhps xmm1, xmm2 - high quadword = low quadword of xmm2.
      return insn.mod === 3 ? (p === 0 ? loadQword(insn, true, 0) : null) : loadQword(insn, true)
    case 0x17:
      return insn.mod === 3 ? null : storeQword(insn, true)
  }
  return null
}

/** 0F 28/29 movaps/movapd (aligned), 0F 2B movntps/movntpd (aligned store). */
export function compileMovAps(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0 && insn.mandatoryPrefix !== 0x66) return null
  if (insn.opcode === 0x28) return moveLoad128(insn, true)
  if (insn.opcode === 0x2b && insn.mod === 3) return null
  return moveStore128(insn, true)
}

/** 66 0F 6F movdqa, F3 0F 6F movdqu; 66 0F 7F, F3 0F 7F the stores; 66 0F E7 movntdq. */
export function compileMovDq(insn: Instruction): Op | null {
  const p = insn.mandatoryPrefix
  if (p !== 0x66 && p !== 0xf3) return null
  if (insn.opcode === 0xe7) return p === 0x66 && insn.mod !== 3 ? moveStore128(insn, true) : null
  const aligned = p === 0x66
  return insn.opcode === 0x6f ? moveLoad128(insn, aligned) : moveStore128(insn, aligned)
}

/** 66 0F 6E movd/movq xmm, r/m32/64 (zero-extended to 128 bits). */
export function compileMovdToXmm(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66) return null
  const wide = insn.rexW
  const rd = readRm(insn, wide ? 8 : 4)
  const d = insn.reg * 4
  return (c) => {
    const lo = rd(c)
    const x = c.xmm
    x[d] = lo
    x[d + 1] = wide ? c.th : 0
    x[d + 2] = 0
    x[d + 3] = 0
  }
}

/** 66 0F 7E movd/movq r/m32/64, xmm; F3 0F 7E movq xmm, xmm/m64 (upper quadword zeroed). */
export function compileMovdFromXmm(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix === 0xf3) {
    const load = load64(insn)
    const d = insn.reg * 4
    return (c) => {
      load(c)
      const x = c.xmm
      x[d] = I32[4]
      x[d + 1] = I32[5]
      x[d + 2] = 0
      x[d + 3] = 0
    }
  }
  if (insn.mandatoryPrefix !== 0x66) return null
  const wide = insn.rexW
  const wr = writeRm(insn, wide ? 8 : 4)
  const s = insn.reg * 4
  return (c) => {
    const x = c.xmm
    wr(c, x[s], x[s + 1])
  }
}

/** 66 0F D6 movq xmm/m64, xmm: a register destination gets its upper quadword zeroed. */
export function compileMovqStore(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66) return null
  const s = insn.reg * 4
  if (insn.mod !== 3) return storeQword(insn, false)
  const d = insn.rm * 4
  return (c) => {
    const x = c.xmm
    x[d] = x[s]
    x[d + 1] = x[s + 1]
    x[d + 2] = 0
    x[d + 3] = 0
  }
}

/** The top bits of the four bytes of a dword (pmovmskb). */
export function byteSigns(v: number): number {
  return ((v >>> 31) << 3) | (((v >>> 23) & 1) << 2) | (((v >>> 15) & 1) << 1) | ((v >>> 7) & 1)
}

/** 66 0F D7 pmovmskb r32/r64, xmm: the 16 bytes' top bits, zero-extended. */
export function compilePmovmskb(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66 || insn.mod !== 3) return null
  const s = insn.rm * 4
  const wr = writeReg(insn.reg, 8)
  return (c) => {
    const x = c.xmm
    let m = 0
    for (let i = 3; i >= 0; i--) m = (m << 4) | byteSigns(x[s + i])
    wr(c, m, 0)
  }
}

/** 66 0F C4 pinsrw xmm, r32/m16, imm8. */
export function compilePinsrw(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66) return null
  const rd = readRm(insn, 2)
  const k = imm8(insn) & 7
  const lane = insn.reg * 4 + (k >> 1)
  const shift = (k & 1) * 16
  const keep = ~(0xffff << shift)
  return (c) => {
    const v = rd(c) & 0xffff
    const x = c.xmm
    x[lane] = (x[lane] & keep) | (v << shift)
  }
}

/** 66 0F C5 pextrw r32/r64, xmm, imm8 (zero-extended). */
export function compilePextrw(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66 || insn.mod !== 3) return null
  const k = imm8(insn) & 7
  const lane = insn.rm * 4 + (k >> 1)
  const shift = (k & 1) * 16
  const wr = writeReg(insn.reg, 8)
  return (c) => wr(c, (c.xmm[lane] >>> shift) & 0xffff, 0)
}

/**
 * maskmovdqu / maskmovq: store the `n` bytes in SCRATCH bytes 0..n-1 whose
 * mask byte (SCRATCH bytes 16..16+n-1) has its top bit set to DS:[rDI]
 * (segment override allowed); `load` fills both. Whether masked-out bytes can
 * fault is implementation-specific; like the AMD host the differential test
 * runs on, the whole range is checked for writability (whatever the mask)
 * before any byte is written.
 */
export function compileMaskmov(insn: Instruction, n: number, load: (c: Cpu) => void): Op {
  const rdi = readReg(7, 8)
  const short = insn.addressSize === 4
  const seg = insn.segment
  return (c) => {
    const lo = rdi(c)
    let a = short ? lo >>> 0 : c.th * 0x1_0000_0000 + (lo >>> 0)
    if (seg === 'fs') a = wrap64(a + c.fsBase)
    else if (seg === 'gs') a = wrap64(a + c.gsBase)
    load(c)
    c.probeWrite(a, n)
    for (let i = 0; i < n; i++) if ((U8[16 + i] & 0x80) !== 0) c.write8(a + i, U8[i])
  }
}

/** 66 0F F7 maskmovdqu xmm1, xmm2: the bytes of xmm1 selected by xmm2. */
export function compileMaskmovdqu(insn: Instruction): Op | null {
  if (insn.mandatoryPrefix !== 0x66 || insn.mod !== 3) return null
  const s = insn.reg * 4
  const m = insn.rm * 4
  return compileMaskmov(insn, 16, (c) => {
    loadDst(c, s)
    const x = c.xmm
    I32[4] = x[m]
    I32[5] = x[m + 1]
    I32[6] = x[m + 2]
    I32[7] = x[m + 3]
  })
}
