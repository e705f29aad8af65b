// Boosting: an instruction that can run from its slot followed by a jump back
// skips the single-step trap — never with a post_handler, never for the
// classes can_boost refuses (relative branches, exception-table users, ...).

import { DIE_DEBUG } from '@probekit/kernel'
import { decode } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'
import { canBoost, KPROBES_NOTIFIER_PRIORITY, type Kprobe, Kprobes } from '../src/index.js'
import { bootKernel } from './support/kernel.js'

function hitsAndSteps(symbol: string, withPost: boolean) {
  const k = bootKernel()
  let steps = 0
  k.traps.registerDieNotifier((val) => {
    if (val === DIE_DEBUG) steps++
    return 0
  }, KPROBES_NOTIFIER_PRIORITY)
  const kprobes = new Kprobes(k)
  let hits = 0
  let posts = 0
  const p: Kprobe = {
    symbol_name: symbol,
    pre_handler: () => {
      hits++
      return 0
    },
    ...(withPost ? { post_handler: () => void posts++ } : {}),
  }
  expect(kprobes.register_kprobe(p)).toBe(0)
  k.run(300_000)
  kprobes.unregister_kprobe(p)
  return { hits, steps, posts, boostable: p.ainsn?.boostable }
}

describe('boosting', () => {
  it('a boostable first instruction (push %rbp) runs from the slot with no #DB', () => {
    const r = hitsAndSteps('sys_ni_host', false)
    expect(r.boostable).toBe(1)
    expect(r.hits).toBeGreaterThan(10)
    expect(r.steps).toBe(0)
  })

  it('not with a post_handler: every hit single-steps', () => {
    const r = hitsAndSteps('sys_ni_host', true)
    expect(r.hits).toBeGreaterThan(10)
    expect(r.steps).toBe(r.hits)
    expect(r.posts).toBe(r.hits)
  })

  it('can_boost follows the kernel rules per instruction class', () => {
    const k = bootKernel()
    const at = k.symbol('do_fork')
    const cases: [string, number[], boolean][] = [
      ['push %rbp', [0x55], true],
      ['mov %rdi,%rax', [0x48, 0x89, 0xf8], true],
      ['jne rel8 (7x)', [0x75, 0x10], false],
      ['jmp rel32', [0xe9, 0, 0, 0, 0], false],
      ['call rel32', [0xe8, 0, 0, 0, 0], false],
      ['jmp rel8', [0xeb, 0x10], false],
      ['loop', [0xe2, 0x10], false],
      ['ret', [0xc3], true],
      ['int3', [0xcc], false],
      ['int 0x80', [0xcd, 0x80], false],
      ['call far (9a)', [0x9a, 0, 0, 0, 0, 0, 0], false],
      ['cs: prefix', [0x2e, 0x48, 0x89, 0xf8], false],
      ['addr32 prefix', [0x67, 0x8b, 0x00], false],
      ['cmovne (0f 45)', [0x0f, 0x45, 0xc1], true],
      ['jne rel32 (0f 85)', [0x0f, 0x85, 0, 0, 0, 0], false],
      ['cpuid (0f a2)', [0x0f, 0xa2], false],
      ['pushf', [0x9c], true],
      ['hlt (f4)', [0xf4], false],
      ['cld (fc)', [0xfc], true],
    ]
    for (const [name, bytes, want] of cases) {
      // decode() cannot decode a few of these in 64-bit mode (9a): those are refused before boosting anyway.
      let insn: ReturnType<typeof decode>
      try {
        insn = decode(Uint8Array.from(bytes), at)
      } catch {
        expect(want, name).toBe(false)
        continue
      }
      expect(canBoost(k, insn, at), name).toBe(want)
    }
    // An exception-table user (copy_from_user's user access) is never boosted.
    const ex = k.image.exceptionTable[0]
    const insn = decode(k.machine.memory.readBytes(ex.insn + 0x80000000, 15), ex.insn)
    expect(canBoost(k, insn, ex.insn)).toBe(false)
  })
})
