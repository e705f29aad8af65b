// The detour buffers, checked by the independent disassembler (capstone-wasm,
// as DESIGN.md has it): for every function entry of the guest kernel that can
// be optimized, the buffer made for it disassembles whole; its copies say
// what the original instructions say - the same text where nothing depends on
// the address, the same branch target for a relative jmp/jcc, the same
// effective address for a RIP-relative operand - and it ends in a jmp to the
// end of the region.

import { imagePhys, type Kernel } from '@probekit/kernel'
import { recoverInstruction } from '@probekit/kprobes'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CapstoneX64, type CsInsn, openCapstone } from '../../x86-emu/test/support/capstone.js'
import { buildDetourBuffer, canOptimize, OPTINSN_SLOTS_BASE, optprobeTemplate } from '../src/index.js'
import { bootOpt } from './support/kernel.js'

let cs: CapstoneX64
beforeAll(async () => {
  cs = await openCapstone()
})
afterAll(() => cs.close())

const u64 = (a: number) => BigInt.asUintN(64, BigInt(a))

/** A RIP-relative operand's effective address as capstone prints it ([rip + 0x10] after an insn at `end`). */
function ripTarget(i: CsInsn): bigint | null {
  const m = /\[rip (?:([+-]) (0x[0-9a-f]+|\d+))?\]/.exec(i.opStr)
  if (!m) return null
  const disp = m[2] ? BigInt(m[2]) : 0n
  return BigInt.asUintN(64, u64(i.address) + BigInt(i.size) + (m[1] === '-' ? -disp : disp))
}

/** The operand text with RIP-relative operands and branch targets left out (they are compared by value). */
const stripped = (i: CsInsn) => i.opStr.replace(/\[rip[^\]]*\]/, '[rip]').replace(/^0x[0-9a-f]+$/, 'TARGET')

function original(k: Kernel, addr: number, size: number): CsInsn[] {
  return cs.many(k.machine.memory.readBytes(imagePhys(addr), size), addr)
}

describe('detour buffers under capstone', () => {
  it('every optimizable function entry: the buffer decodes whole, its copies mean what the originals mean', () => {
    const { k, kp } = bootOpt()
    const read = (a: number) => recoverInstruction(k, a, (x) => kp.get_kprobe(x))
    const templateLength = optprobeTemplate(1).length
    let checked = 0
    let relocated = 0
    for (const s of k.kallsyms.all()) {
      if (s.type !== 't' && s.type !== 'T') continue
      if (s.address < k.image.textStart || s.address + s.size > k.image.textEnd) continue
      if (kp.within_kprobe_blacklist(s.address)) continue
      const can = canOptimize(k, s.address, read)
      if (!can.ok) continue
      const at = OPTINSN_SLOTS_BASE + 0x1000
      const built = buildDetourBuffer(1, s.address, at, can.region)
      expect(built, s.name).not.toBeNull()
      if (!built) continue
      const insns = cs.many(built.bytes, at)
      // Whole: capstone's lengths add up to the buffer.
      expect(
        insns.reduce((n, i) => n + i.size, 0),
        s.name,
      ).toBe(built.bytes.length)
      expect(built.copyOffset).toBe(templateLength)
      const tmpl = insns.filter((i) => i.address - at < built.copyOffset)
      expect(tmpl.map((i) => i.mnemonic)).toContain('vmcall')
      const copies = insns.filter((i) => i.address - at >= built.copyOffset).slice(0, -1)
      const back = insns[insns.length - 1]
      expect(back.mnemonic, s.name).toBe('jmp')
      expect(BigInt(back.opStr), s.name).toBe(u64(s.address + built.size))
      const orig = original(k, s.address, built.size)
      expect(copies.length, s.name).toBe(orig.length)
      for (const [n, o] of orig.entries()) {
        const c = copies[n]
        const jumpy = /^j/.test(o.mnemonic)
        expect(c.mnemonic, `${s.name}: ${o.mnemonic} ${o.opStr}`).toBe(o.mnemonic)
        if (jumpy) expect(BigInt(c.opStr)).toBe(BigInt(o.opStr))
        const rip = ripTarget(o)
        if (rip !== null) {
          expect(ripTarget(c), `${s.name}: ${o.mnemonic} ${o.opStr}`).toBe(rip)
          relocated++
        }
        expect(stripped(c), `${s.name}: ${o.mnemonic} ${o.opStr}`).toBe(stripped(o))
      }
      checked++
    }
    // Not vacuous: most entries can be optimized, some copies needed relocating.
    expect(checked).toBeGreaterThan(100)
    expect(relocated).toBeGreaterThan(0)
  })
})
