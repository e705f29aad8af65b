// The safety checks (the seed's 4.3-4.4; can_optimize and
// copy_optimized_instructions), each shown failing on the guest kernel's
// real text, found by scanning it: the region past the function's end, an
// indirect jump (do_syscall_64's jump table), an exception-table user
// (strncpy_from_user), a jump into the bytes the jump would replace, a call
// inside the region. A refused probe stays an int3 probe and still works.
// And the pre-optimization blockers: a post_handler, a jprobe, a disabled
// probe, another probe inside the region - each keeps the probe an int3
// probe, and its going lets the probe be optimized again.

import type { Kernel } from '@probekit/kernel'
import { type Jprobe, type Kprobe, type Kprobes, kprobeDisabled, recoverInstruction } from '@probekit/kprobes'
import { type Instruction, InstructionFlag, tryDecode } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { syscall, tinyElf } from '../../kprobes/test/support/tiny-elf.js'
import { canOptimize, type Optprobes } from '../src/index.js'
import { BAD_OPENER, bootOpt, text, textSnapshot } from './support/kernel.js'

/** open("/no/such/file", O_PATH) in a loop (lea rdi, [rip + 14]; mov esi, O_PATH; syscall; jmp back). */
const O_PATH_OPENER = tinyElf([
  ...[0x48, 0x8d, 0x3d, 14, 0, 0, 0],
  ...[0xbe, 0, 0, 0x20, 0],
  ...syscall(2),
  ...[0xeb, 0x100 - 21],
  ...new TextEncoder().encode('/no/such/file\0'),
])

function decodeFunction(k: Kernel, start: number, size: number): Instruction[] | null {
  const out: Instruction[] = []
  for (let a = start; a < start + size; ) {
    const insn = tryDecode(text(k, a, 16), a)
    if (insn instanceof Error) return null
    out.push(insn)
    a += insn.length
  }
  return out
}

/** Every function of kernel text with its decoded instructions. */
function functions(k: Kernel): { name: string; start: number; size: number; insns: Instruction[] }[] {
  const out: { name: string; start: number; size: number; insns: Instruction[] }[] = []
  for (const s of k.kallsyms.all()) {
    if ((s.type !== 't' && s.type !== 'T') || s.size < 8) continue
    if (s.address < k.image.textStart || s.address + s.size > k.image.textEnd) continue
    const insns = decodeFunction(k, s.address, s.size)
    if (insns) out.push({ name: s.name, start: s.address, size: s.size, insns })
  }
  return out
}

/** Run until addr is optimized (or not, within the budget). */
function settle(k: Kernel, op: Optprobes, addr: number): boolean {
  for (let i = 0; i < 100 && !op.isOptimized(addr); i++) k.run(10_000)
  return op.isOptimized(addr)
}

function refusedFor(k: Kernel, kp: Kprobes, addr: number): string {
  const r = canOptimize(k, addr, (a) => recoverInstruction(k, a, (x) => kp.get_kprobe(x)))
  return r.ok ? 'ok' : r.reason
}

describe('can_optimize refuses, and the probe stays an int3 probe that works', () => {
  it('the region would run past the end of the function', () => {
    const { k, kp, op } = bootOpt(1, [O_PATH_OPENER])
    const fn = k.kallsyms.symbol('do_sys_open')!
    const insns = decodeFunction(k, fn.address, fn.size)!
    // gcc puts do_sys_open's O_PATH branch last (`xor ecx, ecx; jmp back`): a jump at the xor would
    // cover 5 bytes of which some are past the end. The program opens with O_PATH, so it runs.
    const last = insns[insns.length - 2]
    expect(fn.address + fn.size - last.address).toBeLessThan(5)
    let hits = 0
    const p: Kprobe = { addr: last.address, pre_handler: () => (hits++, 0) }
    expect(refusedFor(k, kp, last.address)).toMatch(/past the end of do_sys_open/)
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(op.isOptimized(last.address)).toBe(false)
    expect(op.refused.get(last.address)).toMatch(/past the end/)
    expect(text(k, last.address, 1)[0]).toBe(0xcc)
    expect(hits).toBeGreaterThan(0)
  })

  it("an indirect jump in the function (do_syscall_64's jump table)", () => {
    const { k, kp, op } = bootOpt()
    const addr = k.symbol('do_syscall_64')
    let hits = 0
    const p: Kprobe = { addr, pre_handler: () => (hits++, 0) }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(op.isOptimized(addr)).toBe(false)
    expect(op.refused.get(addr)).toMatch(/indirect jump .* \(a jump table\)/)
    expect(hits).toBeGreaterThan(0)
  })

  it('an instruction in the exception table (strncpy_from_user)', () => {
    const { k, kp, op } = bootOpt(1, [BAD_OPENER])
    const addr = k.symbol('strncpy_from_user')
    let hits = 0
    const p: Kprobe = { addr, pre_handler: () => (hits++, 0) }
    expect(kp.register_kprobe(p)).toBe(0)
    k.run(300_000)
    expect(op.isOptimized(addr)).toBe(false)
    expect(op.refused.get(addr)).toMatch(/exception-table fixup/)
    expect(hits).toBeGreaterThan(0)
    // The exception table really names an instruction of it.
    const fn = k.kallsyms.symbol('strncpy_from_user')!
    expect(k.image.exceptionTable.some((e) => e.insn >= fn.address && e.insn < fn.address + fn.size)).toBe(
      true,
    )
  })

  it('a jump into the bytes the jump would replace (JTPR), and a call inside the region: found by scanning the text', () => {
    const { k, kp } = bootOpt()
    let jtpr: { at: number; name: string } | null = null
    let call: { at: number; name: string } | null = null
    for (const f of functions(k)) {
      if (kp.within_kprobe_blacklist(f.start)) continue
      const fault = k.image.exceptionTable.some((e) => e.insn >= f.start && e.insn < f.start + f.size)
      const indirect = f.insns.some((i) => i.opcode === 0xff && (i.reg === 4 || i.reg === 5) && i.map === 0)
      if (fault || indirect) continue
      const targets = new Set(f.insns.map((i) => i.branchTarget).filter((t): t is number => t !== null))
      for (const [n, insn] of f.insns.entries()) {
        if (f.start + f.size - insn.address < 5) break
        const landsInside = [1, 2, 3, 4].some((d) => targets.has(insn.address + d))
        if (!jtpr && landsInside) jtpr = { at: insn.address, name: f.name }
        // A call among the instructions the jump overlaps, nothing else in the way.
        let covered = 0
        let hasCall = false
        for (let j = n; covered < 5 && j < f.insns.length; j++) {
          covered += f.insns[j].length
          if ((f.insns[j].flags & InstructionFlag.Call) !== 0) hasCall = true
        }
        if (!call && hasCall && !landsInside) call = { at: insn.address, name: f.name }
      }
      if (jtpr && call) break
    }
    expect(jtpr).not.toBeNull()
    expect(call).not.toBeNull()
    expect(refusedFor(k, kp, jtpr!.at)).toMatch(/jumps into the bytes the jump would replace/)
    expect(refusedFor(k, kp, call!.at)).toMatch(/a call/)
    // Both register as int3 probes and are not queued.
    const a: Kprobe = { addr: jtpr!.at, pre_handler: () => 0 }
    const b: Kprobe = { addr: call!.at, pre_handler: () => 0 }
    expect(kp.register_kprobe(a)).toBe(0)
    expect(kp.register_kprobe(b)).toBe(0)
    expect(text(k, jtpr!.at, 1)[0]).toBe(0xcc)
    expect(text(k, call!.at, 1)[0]).toBe(0xcc)
  })
})

describe('pre-optimization blockers', () => {
  it('a post_handler keeps it an int3 probe; the aggregate is optimized once that child goes', () => {
    const { k, kp, op } = bootOpt()
    const before = textSnapshot(k)
    const addr = k.symbol('sys_ni_host')
    let pre = 0
    let post = 0
    const plain: Kprobe = { addr, pre_handler: () => (pre++, 0) }
    const withPost: Kprobe = { addr, pre_handler: () => 0, post_handler: () => void post++ }
    expect(kp.register_kprobe(plain)).toBe(0)
    expect(settle(k, op, addr)).toBe(true)
    // The aggregate with a post_handler child: back to int3 at once, and it stays so.
    expect(kp.register_kprobe(withPost)).toBe(0)
    expect(op.isOptimized(addr)).toBe(false)
    expect(text(k, addr, 1)[0]).toBe(0xcc)
    expect(settle(k, op, addr)).toBe(false)
    expect(post).toBeGreaterThan(0)
    kp.unregister_kprobe(withPost)
    expect(settle(k, op, addr)).toBe(true)
    const p0 = pre
    k.run(100_000)
    expect(pre).toBeGreaterThan(p0)
    kp.unregister_kprobe(plain)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('a jprobe (break_handler) keeps it an int3 probe', () => {
    const { k, kp, op } = bootOpt(1, [BAD_OPENER])
    const addr = k.symbol('do_sys_open')
    let entries = 0
    const jp: Jprobe = { kp: { symbol_name: 'do_sys_open' }, entry: () => void entries++ }
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(settle(k, op, addr)).toBe(false)
    expect(entries).toBeGreaterThan(0)
    expect(op.refused.get(addr)).toMatch(/jprobe/)
    kp.unregister_jprobe(jp)
  })

  it('a disabled probe is not optimized; enabling it optimizes it, disabling unoptimizes it', () => {
    const { k, kp, op } = bootOpt()
    const before = textSnapshot(k)
    const addr = k.symbol('sys_ni_host')
    const p: Kprobe = { addr, pre_handler: () => 0, flags: 2 } // KPROBE_FLAG_DISABLED
    expect(kp.register_kprobe(p)).toBe(0)
    expect(kprobeDisabled(p)).toBe(true)
    expect(settle(k, op, addr)).toBe(false)
    expect(textSnapshot(k)).toEqual(before)
    expect(kp.enable_kprobe(p)).toBe(0)
    expect(settle(k, op, addr)).toBe(true)
    expect(kp.disable_kprobe(p)).toBe(0)
    expect(op.isOptimized(addr)).toBe(false)
    expect(textSnapshot(k)).toEqual(before)
    kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
  })

  it('another probe inside the region: the optimized one goes back to int3; it is optimized again when that one goes', () => {
    const { k, kp, op } = bootOpt()
    const before = textSnapshot(k)
    const addr = k.symbol('sys_ni_host')
    let outer = 0
    let inner = 0
    const p: Kprobe = { addr, pre_handler: () => (outer++, 0) }
    expect(kp.register_kprobe(p)).toBe(0)
    expect(settle(k, op, addr)).toBe(true)
    // The text is the jump now: the region from the original bytes.
    const insns = canOptimize(k, addr, (a) =>
      recoverInstruction(
        k,
        a,
        (x) => kp.get_kprobe(x),
        (x, buf) => op.recoverBytes(x, buf),
      ),
    )
    expect(insns.ok).toBe(true)
    if (!insns.ok) return
    const insideAt = insns.region[1].address
    const q: Kprobe = { addr: insideAt, pre_handler: () => (inner++, 0) }
    expect(kp.register_kprobe(q)).toBe(0)
    // Unoptimized at once (its jump covered q's byte); both are int3 probes now and both hit.
    expect(op.isOptimized(addr)).toBe(false)
    expect(text(k, addr, 1)[0]).toBe(0xcc)
    expect(text(k, insideAt, 1)[0]).toBe(0xcc)
    expect(settle(k, op, addr)).toBe(false)
    expect(inner).toBeGreaterThan(0)
    expect(outer).toBeGreaterThan(0)
    kp.unregister_kprobe(q)
    expect(settle(k, op, addr)).toBe(true)
    kp.unregister_kprobe(p)
    expect(textSnapshot(k)).toEqual(before)
  })
})
