// resume_execution's flag fix-ups, on the pushf and popf of __schedule's local_irq_save /
// local_irq_restore: kprobes single-steps with TF set, and none of it may leak into what the
// kernel sees - the pushed image has the interrupted context's flags (TF clear), and after a
// stepped popf the flags are the popped image.

import { describe, expect, it } from 'vitest'
import { type Kprobe, Kprobes } from '../src/index.js'
import { bootKernel, SPINNER, textByte, textSnapshot } from './support/kernel.js'

const X86_EFLAGS_TF = 0x100
/** CF PF AF ZF SF TF IF DF OF: what popf loads and pushf stores that a leak would show in. */
const VISIBLE = 0xfd5

/** The address of the first `opcode` byte in fn that starts an instruction (a one-byte instruction here). */
function findOneByte(k: ReturnType<typeof bootKernel>, fn: string, opcode: number): number {
  const start = k.symbol(fn)
  for (let a = start; a < start + 0x80; a++) if (textByte(k, a) === opcode) return a
  throw new Error(`no 0x${opcode.toString(16)} in ${fn}`)
}

describe('pushf / popf stepped out of line', () => {
  it('pushf: the pushed image is the probed context flags, TF clear; popf: flags become the popped image', () => {
    // Two spinners on one CPU: the timer makes them switch, through __schedule, again and again.
    const k = bootKernel(1, [SPINNER, SPINNER])
    const kp = new Kprobes(k, { boost: false })
    const before = textSnapshot(k)
    const pushfAt = findOneByte(k, '__schedule', 0x9c)
    const popfAt = findOneByte(k, '__schedule', 0x9d)
    expect(textByte(k, popfAt - 1) & 0xf8).toBe(0x50) // push %rbx / %r12: the saved flags

    const pushes: { context: number; pushed: number; after: number }[] = []
    let context = 0
    const onPushf: Kprobe = {
      addr: pushfAt,
      pre_handler: (_p, regs) => {
        context = regs.get('flags')
        expect(context & X86_EFLAGS_TF).toBe(0)
        return 0
      },
      post_handler: (_p, regs) => {
        pushes.push({ context, pushed: kp.peek(regs.get('sp')), after: regs.get('flags') })
      },
    }
    const pops: { popped: number; after: number }[] = []
    let popped = 0
    const onPopf: Kprobe = {
      addr: popfAt,
      pre_handler: (_p, regs) => {
        popped = kp.peek(regs.get('sp'))
        return 0
      },
      post_handler: (_p, regs) => void pops.push({ popped, after: regs.get('flags') }),
    }
    expect(kp.register_kprobes([onPushf, onPopf])).toBe(0)
    const { result } = k.run(600_000)
    expect(result.reason).toBe('budget')
    expect(pushes.length).toBeGreaterThan(3)
    expect(pops.length).toBeGreaterThan(3)
    for (const p of pushes) {
      expect(p.pushed & X86_EFLAGS_TF).toBe(0)
      expect(p.pushed & VISIBLE).toBe(p.context & VISIBLE)
      expect(p.after & X86_EFLAGS_TF).toBe(0)
    }
    for (const p of pops) {
      expect(p.popped & X86_EFLAGS_TF).toBe(0)
      expect(p.after & VISIBLE).toBe(p.popped & VISIBLE)
    }
    // Both programs still ran: each switch came back through the popf.
    expect(k.tasks.size).toBeGreaterThanOrEqual(2)
    kp.unregister_kprobes([onPushf, onPopf])
    expect(textSnapshot(k)).toEqual(before)
  })
})
