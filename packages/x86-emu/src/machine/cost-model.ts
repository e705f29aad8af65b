// The cost model: guest cycles, so overheads can be stated in guest terms
// (a probe hit costs a trap, a single-step, a mode switch) as well as in
// host time.

export interface CostModel {
  /** Cycles per retired instruction. */
  instruction: number
  /** Cycles to deliver an exception (fault or trap). */
  trap: number
  /** Cycles to deliver an external interrupt. */
  interrupt: number
  /** Cycles for a privilege change (syscall, sysret, iret across rings). */
  modeSwitch: number
  /** Cycles for a vmcall round trip, before the service's own cost. */
  hypercall: number
}

export const DEFAULT_COSTS: CostModel = {
  instruction: 1,
  trap: 150,
  interrupt: 150,
  modeSwitch: 70,
  hypercall: 200,
}

/** Per-vCPU counters the cost model charges. */
export class CpuCounters {
  cycles = 0
  traps = 0
  interrupts = 0
  modeSwitches = 0
  hypercalls = 0
}
