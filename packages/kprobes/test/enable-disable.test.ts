// disable_/enable_ jprobe and kretprobe: the switch of their kprobe (Linux's inline wrappers).
// Disabled, the int3 is gone from kernel text and no handler runs; enabled, both come back.

import { describe, expect, it } from 'vitest'
import { EINVAL, type Jprobe, Kprobes, type Kretprobe } from '../src/index.js'
import { BAD_OPENER, bootKernel, textByte, textSnapshot } from './support/kernel.js'

describe('disable/enable of jprobes and kretprobes', () => {
  it('each switch stops and restarts its own probe; kernel text follows', () => {
    const k = bootKernel(1, [BAD_OPENER])
    const kp = new Kprobes(k)
    const before = textSnapshot(k)
    const hits = { j: 0, r: 0 }
    const jp: Jprobe = { kp: { symbol_name: 'do_sys_open' }, entry: () => void hits.j++ }
    // A different function, so each has an int3 of its own.
    const rp: Kretprobe = {
      kp: { symbol_name: 'strncpy_from_user' },
      handler: () => {
        hits.r++
        return 0
      },
    }
    expect(kp.disable_jprobe(jp)).toBe(-EINVAL) // not registered yet
    expect(kp.enable_kretprobe(rp)).toBe(-EINVAL)
    expect(kp.register_jprobe(jp)).toBe(0)
    expect(kp.register_kretprobe(rp)).toBe(0)
    const jAt = jp.kp.addr as number
    const rAt = rp.kp.addr as number
    const step = () => {
      const was = { ...hits }
      k.run(150_000)
      return { j: hits.j - was.j, r: hits.r - was.r }
    }
    const both = step()
    expect(both.j).toBeGreaterThan(1)
    expect(both.r).toBeGreaterThan(1)

    expect(kp.disable_jprobe(jp)).toBe(0)
    expect(textByte(k, jAt)).toBe(before[jAt - k.image.textStart])
    expect(textByte(k, rAt)).toBe(0xcc)
    const onlyR = step()
    expect(onlyR.j).toBe(0)
    expect(onlyR.r).toBeGreaterThan(1)

    expect(kp.disable_kretprobe(rp)).toBe(0)
    k.run(50_000) // returns already hooked drain through the trampoline
    expect(step()).toEqual({ j: 0, r: 0 })
    expect(textSnapshot(k)).toEqual(before)

    expect(kp.enable_jprobe(jp)).toBe(0)
    expect(kp.enable_kretprobe(rp)).toBe(0)
    const again = step()
    expect(again.j).toBeGreaterThan(1)
    expect(again.r).toBeGreaterThan(1)
    kp.unregister_jprobe(jp)
    kp.unregister_kretprobe(rp)
    k.run(50_000)
    expect(textSnapshot(k)).toEqual(before)
  })
})
