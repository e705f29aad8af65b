// The kprobes property run, shared by this package's test and optprobes':
// a seeded random sequence of register / unregister / enable / disable of
// kprobes and kretprobes (programs running on two vCPUs all along), then
// every probe removed: kernel text must be byte-identical to the original.
// An extension (jump optimization) adds its own actions and checks without
// changing the sequence of the kprobes actions for a seed.

import { decode } from '@probekit/x86-emu'
import { expect } from 'vitest'
import { prng } from '../../../kernel/test/support/prng.js'
import { getpidLoop } from '../../bench/programs.js'
import { EILSEQ, EINVAL, type Kprobe, Kprobes, type Kretprobe } from '../../src/index.js'
import { BAD_WRITER, bootKernel, textSnapshot } from './kernel.js'

export interface PropertyExtension {
  /** The share of the steps (the top of the random range) given to act instead of enable_kprobe. */
  share: number
  act(action: number): void
  /** After each step's run, with the kprobes registered now. */
  afterStep?(kprobes: readonly Kprobe[]): void
  /** After every probe is gone and the text checked. */
  finalChecks?(): void
}

/** Hot functions (entered on every syscall), so random probes there are really hit. */
const HOT = ['do_syscall_64', 'sys_ni_host', 'copy_from_user']

export function randomProbeProperty(seed: number, extend?: (kp: Kprobes) => PropertyExtension): void {
  const rnd = prng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
  const k = bootKernel(2, [getpidLoop(0), getpidLoop(0), BAD_WRITER])
  const kp = new Kprobes(k)
  const ext = extend?.(kp)
  const original = textSnapshot(k)
  const { textStart, textEnd } = k.image
  const orig = (addr: number, len: number) =>
    original.subarray(addr - textStart, Math.min(addr - textStart + len, original.length))

  // Candidate functions: text symbols, not blacklisted, with their instruction
  // boundaries decoded from the function start in the original text.
  const fns = k.kallsyms
    .all()
    .filter(
      (s) =>
        (s.type === 't' || s.type === 'T') &&
        s.size > 0 &&
        s.address >= textStart &&
        s.address + s.size <= textEnd &&
        !kp.within_kprobe_blacklist(s.address),
    )
  expect(fns.length).toBeGreaterThan(20)
  const boundaries = new Map<number, number[]>()
  const boundariesOf = (addr: number, size: number): number[] => {
    let b = boundaries.get(addr)
    if (b) return b
    b = []
    for (let a = addr; a < addr + size; ) {
      b.push(a)
      try {
        a += decode(orig(a, 16), a).length
      } catch {
        break
      }
    }
    boundaries.set(addr, b)
    return b
  }
  const hot = fns.filter((s) => HOT.includes(s.name))
  expect(hot.length).toBe(HOT.length)

  const hits = { pre: 0, post: 0, ret: 0 }
  const kprobes: Kprobe[] = []
  const kretprobes: Kretprobe[] = []
  const codes = new Map<number, number>()
  const note = (r: number) => codes.set(r, (codes.get(r) ?? 0) + 1)

  for (let step = 0; step < 200; step++) {
    const action = rnd()
    if (action < 0.35) {
      const fn = rnd() < 0.5 ? pick(hot) : pick(fns)
      const b = boundariesOf(fn.address, fn.size)
      // Mostly instruction boundaries; sometimes a byte inside an instruction.
      const addr = rnd() < 0.85 ? pick(b) : fn.address + Math.floor(rnd() * fn.size)
      const p: Kprobe = {
        addr,
        pre_handler: () => {
          hits.pre++
          return 0
        },
        post_handler: rnd() < 0.5 ? () => void hits.post++ : undefined,
      }
      const r = kp.register_kprobe(p)
      note(r)
      if (b.includes(addr)) expect([0, -EINVAL], `${k.kallsyms.format(addr)}`).toContain(r)
      else expect([0, -EINVAL, -EILSEQ], `${k.kallsyms.format(addr)}`).toContain(r)
      if (r === 0) kprobes.push(p)
    } else if (action < 0.45) {
      const fn = rnd() < 0.5 ? pick(hot) : pick(fns)
      const rp: Kretprobe = {
        kp: { addr: fn.address },
        maxactive: 4,
        handler: () => {
          hits.ret++
          return 0
        },
      }
      const r = kp.register_kretprobe(rp)
      note(r)
      expect([0, -EINVAL], fn.name).toContain(r)
      if (r === 0) kretprobes.push(rp)
    } else if (action < 0.65) {
      if (kprobes.length > 0) {
        const p = kprobes.splice(Math.floor(rnd() * kprobes.length), 1)[0]
        kp.unregister_kprobe(p)
      } else if (kretprobes.length > 0) {
        kp.unregister_kretprobe(kretprobes.pop() as Kretprobe)
      }
    } else if (action < 0.8) {
      if (kretprobes.length > 0 && rnd() < 0.3) {
        kp.unregister_kretprobe(kretprobes.splice(Math.floor(rnd() * kretprobes.length), 1)[0])
      } else if (kprobes.length > 0) expect(kp.disable_kprobe(pick(kprobes))).toBe(0)
    } else if (!ext || action < 1 - ext.share) {
      if (kprobes.length > 0) expect(kp.enable_kprobe(pick(kprobes))).toBe(0)
    } else ext.act(action)
    const r = k.run(20_000)
    expect(r.result.reason, r.result.detail).toBe('budget')
    ext?.afterStep?.(kprobes)
  }

  kp.unregister_kprobes(kprobes)
  kp.unregister_kretprobes(kretprobes)
  expect(kp.probes()).toEqual([])
  expect(kp.slots.usedSlots).toBe(0)
  expect(textSnapshot(k)).toEqual(original)

  // The programs carry on: every getpid still returns its own pid (else the loop exits 1).
  const r = k.run(300_000)
  expect(r.result.reason, r.result.detail).toBe('budget')
  for (const t of k.tasks.values()) if (t.pid > 0) expect(t.state, `pid ${t.pid}`).not.toBe('zombie')
  expect(k.printk.text()).not.toMatch(/oops|BUG|Unrecoverable/i)
  expect(textSnapshot(k)).toEqual(original)
  // The run was not vacuous: probes were placed, hit, refused.
  expect(codes.get(0)).toBeGreaterThan(20)
  expect(hits.pre).toBeGreaterThan(50)
  expect(hits.ret).toBeGreaterThan(0)
  ext?.finalChecks?.()
}
