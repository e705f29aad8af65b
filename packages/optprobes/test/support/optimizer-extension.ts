// The probe-sequence fuzzer's jump-optimization part: the optimizer plugged
// into the kprobes, debug.kprobes-optimization switched through the sysctl
// now and then, the optimizer's work sometimes run at once. Checks that
// jumps were really in the text along the way and every detour buffer is
// freed at the end.

import type { SequenceContext, SequenceExtension } from '../../../kprobes/test/support/probe-sequence.js'
import { KPROBES_OPTIMIZATION_SYSCTL, Optprobes } from '../../src/index.js'

export function optimizerExtension(ctx: SequenceContext): SequenceExtension {
  const op = new Optprobes(ctx.kp)
  let toggles = 0
  let optimizedSeen = 0
  return {
    share: 0.08,
    act: (x) => {
      if (x < 0.8) {
        const r = ctx.k.sysctls.set(KPROBES_OPTIMIZATION_SYSCTL, op.kprobes_optimization ? '0' : '1')
        ctx.check(r === 0, `sysctl ${KPROBES_OPTIMIZATION_SYSCTL}: ${r}`)
        toggles++
      } else op.wait_for_kprobe_optimizer()
    },
    afterRun: () => {
      for (const p of ctx.kp.probes()) if (op.isOptimized(p.addr)) optimizedSeen++
    },
    finish: () => {
      ctx.check(op.slots.usedSlots === 0, `${op.slots.usedSlots} detour buffers still in use`)
      ctx.check(optimizedSeen > 0, 'no probe was ever optimized')
    },
    summary: () => ({ optimizationToggles: toggles, optimizedSeen }),
  }
}
