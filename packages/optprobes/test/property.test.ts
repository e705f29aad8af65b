// Property (the kprobes package's run, with jump optimization on): whatever
// sequence of register / unregister / enable / disable the probes go
// through, with the optimizer's work running from the ticks and the sysctl
// debug.kprobes_optimization switched now and then (programs running on two
// vCPUs all along), removing every probe leaves kernel text byte-identical
// to the original and every detour buffer freed.

import { describe, expect, it } from 'vitest'
import { randomProbeProperty } from '../../kprobes/test/support/property.js'
import { Optprobes } from '../src/index.js'

describe('property: register/unregister/enable/disable in random order, optimized', () => {
  for (const seed of [1, 2, 3]) {
    it(`removing every probe leaves kernel text byte-identical to the original (seed ${seed})`, () => {
      let optimizedSeen = 0
      randomProbeProperty(seed, (kp) => {
        const op = new Optprobes(kp)
        return {
          share: 0.07,
          act: (action) => {
            if (action < 0.97) op.kprobes_optimization = op.kprobes_optimization ? 0 : 1
            else op.wait_for_kprobe_optimizer()
          },
          afterStep: (kprobes) => {
            for (const p of kprobes) if (p.addr != null && op.isOptimized(p.addr)) optimizedSeen++
          },
          finalChecks: () => expect(op.slots.usedSlots).toBe(0),
        }
      })
      // ...and optimized: jumps were in the text along the way.
      expect(optimizedSeen).toBeGreaterThan(10)
    })
  }
})
