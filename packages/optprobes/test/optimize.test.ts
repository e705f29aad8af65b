// The life of an optimized probe (the seed's 1.4): registered as an int3
// probe that works at once; queued, and hits then run the detour buffer's
// copies instead of single-stepping (1.4.4); optimized by the delayed
// kprobe-optimizer work, after which the text holds a jmp to real generated
// code and no int3; a pre_handler's change of ip is ignored there (and
// honoured by the same probe unoptimized); debugfs shows [OPTIMIZED] exactly
// while the jump is in place; unregistering leaves the text byte-identical.

import { HC_OPTPROBE_CALLBACK } from '@probekit/kernel'
import { KPROBE_FLAG_OPTIMIZED, type Kprobe, type Kretprobe } from '@probekit/kprobes'
import { decode, type Instruction } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { JMP32_INSN_SIZE, OPTIMIZE_DELAY } from '../src/index.js'
import { BAD_OPENER, bootOpt, text, textSnapshot } from './support/kernel.js'

/** Decode a byte run whole (the buffer's bytes). */
function decodeAll(bytes: Uint8Array, at: number): Instruction[] {
  const out: Instruction[] = []
  for (let off = 0; off < bytes.length; ) {
    const insn = decode(bytes, at + off, off)
    out.push(insn)
    off += insn.length
  }
  return out
}

describe('an optimized kprobe', () => {
  it('works as int3 at once, detours while queued, then jumps: text, flags, debugfs, buffer and unregister', () => {
    const { k, kp, op } = bootOpt()
    const before = textSnapshot(k)
    const addr = k.symbol('sys_ni_host')
    let hits = 0
    const p: Kprobe = {
      symbol_name: 'sys_ni_host',
      pre_handler: (_p, regs) => {
        // As an int3 would leave it: ip just past the probed address's first byte.
        expect(regs.get('ip')).toBe(addr + 1)
        hits++
        return 0
      },
    }
    expect(kp.register_kprobe(p)).toBe(0)
    // An int3 probe first.
    expect(text(k, addr, 1)[0]).toBe(0xcc)
    expect(op.isOptimized(addr)).toBe(false)
    expect(op.detourBuffer(addr)?.state).toBe('optimizing')
    expect(kp.debugfsList()).not.toContain('[OPTIMIZED]')
    // Hits before the optimizer's work: the int3 traps, the handler runs, the buffer's copies run.
    for (let i = 0; i < 1000 && hits < 3 && !op.isOptimized(addr); i++) k.run(500)
    expect(hits).toBeGreaterThanOrEqual(3)
    expect(op.isOptimized(addr)).toBe(false)
    // The work runs OPTIMIZE_DELAY jiffies after the queueing.
    for (let i = 0; i < 200 && !op.isOptimized(addr); i++) k.run(10_000)
    expect(op.isOptimized(addr)).toBe(true)
    expect(k.jiffies).toBeGreaterThanOrEqual(OPTIMIZE_DELAY)
    expect((p.flags ?? 0) & KPROBE_FLAG_OPTIMIZED).toBe(KPROBE_FLAG_OPTIMIZED)
    expect(kp.debugfsList()).toContain('sys_ni_host+0x0  ')
    expect(kp.debugfsList()).toContain('[OPTIMIZED]')
    // The text: jmp rel32 to the buffer.
    const buf = op.detourBuffer(addr)!
    const jmp = text(k, addr, JMP32_INSN_SIZE)
    expect(jmp[0]).toBe(0xe9)
    expect(addr + 5 + new DataView(jmp.buffer, jmp.byteOffset).getInt32(1, true)).toBe(buf.address)
    // The buffer is real code in an R+X page: the template with its vmcall, the copies, the jmp back.
    const insns = decodeAll(buf.bytes, buf.address)
    expect(insns[0].mnemonic).toBe('push')
    expect(insns.some((i) => i.mnemonic === 'vmcall')).toBe(true)
    const movEax = insns.find((i) => i.mnemonic === 'mov' && i.opcode === 0xb8)!
    expect(movEax.immediate).toBe(HC_OPTPROBE_CALLBACK)
    const last = insns[insns.length - 1]
    expect(last.mnemonic).toBe('jmp')
    expect(last.branchTarget).toBe(addr + buf.size)
    const copies = decodeAll(
      buf.bytes.subarray(buf.copyOffset, buf.bytes.length - 5),
      buf.address + buf.copyOffset,
    )
    const original = decodeAll(
      before.subarray(addr - k.image.textStart, addr - k.image.textStart + buf.size),
      addr,
    )
    expect(copies.map((i) => i.mnemonic)).toEqual(original.map((i) => i.mnemonic))
    // Hits go on through the jump; no int3 is left in the region.
    const mid = hits
    k.run(200_000)
    expect(hits).toBeGreaterThan(mid)
    expect([...text(k, addr, buf.size)]).not.toContain(0xcc)
    // Unregister: the original text, byte for byte.
    kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
    expect(op.detourBuffer(addr)).toBeNull()
    const after = hits
    k.run(100_000)
    expect(hits).toBe(after)
  })

  it("a pre_handler's change of ip is ignored when optimized, honoured by the same probe unoptimized", () => {
    const { k, kp, op } = bootOpt(1, [BAD_OPENER])
    const fn = k.symbol('do_sys_open')
    const size = k.kallsyms.functionAt(fn)!.size
    const insns = decodeAll(text(k, fn, size), fn)
    const ret = insns.find((i) => i.mnemonic === 'ret')!
    // A second probe past the first one's region: it sees whether the body ran.
    let redirected = 0
    const first: Kprobe = {
      symbol_name: 'do_sys_open',
      pre_handler: (_p, regs) => {
        // Straight to a ret: the function skipped (only what the stack says is left to do).
        regs.set('ip', ret.address)
        redirected++
        return 1
      },
    }
    let bodyRuns = 0
    const laterAt = insns.find((i) => i.address - fn >= 12 && i.address < ret.address)!.address
    const later: Kprobe = { addr: laterAt, pre_handler: () => (bodyRuns++, 0) }
    expect(kp.register_kprobe(first)).toBe(0)
    expect(kp.register_kprobe(later)).toBe(0)
    for (let i = 0; i < 200 && !op.isOptimized(fn); i++) k.run(10_000)
    expect(op.isOptimized(fn)).toBe(true)
    let r0 = redirected
    let b0 = bodyRuns
    k.run(200_000)
    // Optimized: every hit's redirect is lost, the body runs each time.
    expect(redirected - r0).toBeGreaterThan(3)
    expect(bodyRuns - b0).toBe(redirected - r0)
    // The sysctl off: the same probe as int3, and its redirect is honoured.
    op.kprobes_optimization = 0
    expect(op.isOptimized(fn)).toBe(false)
    expect(text(k, fn, 1)[0]).toBe(0xcc)
    r0 = redirected
    b0 = bodyRuns
    k.run(200_000)
    expect(redirected - r0).toBeGreaterThan(3)
    expect(bodyRuns - b0).toBe(0)
  })

  it('a kretprobe whose entry probe is optimized (ro) hijacks returns through the jump', () => {
    const { k, kp, op } = bootOpt(1, [BAD_OPENER])
    const fn = k.symbol('do_sys_open')
    const values: number[] = []
    const rp: Kretprobe = {
      kp: { symbol_name: 'do_sys_open' },
      handler: (_ri, regs) => {
        values.push(regs.get('ax'))
        return 0
      },
    }
    expect(kp.register_kretprobe(rp)).toBe(0)
    for (let i = 0; i < 200 && !op.isOptimized(fn); i++) k.run(10_000)
    expect(op.isOptimized(fn)).toBe(true)
    values.length = 0
    k.run(300_000)
    expect(values.length).toBeGreaterThan(3)
    // open("/no/such/file"): -ENOENT every time.
    expect(new Set(values)).toEqual(new Set([-2]))
    expect(rp.nmissed).toBe(0)
  })
})
