// Services the probe layers build on: text_poke, stop_machine,
// synchronize_rcu/synchronize_sched and delayed work.
//
// The host runs between guest instructions, so "every other vCPU stopped"
// comes for free; what these services add is the guarantee the real ones
// give: other vCPUs are at a safe point (user mode or the idle loop: the
// kernel is not preemptible, so no kernel code of theirs is in flight),
// and a grace period really waits for each vCPU to pass one.

import type { Cpu } from '@probekit/x86-emu'
import { imagePhys } from './guest-image.js'
import type { Kernel } from './kernel.js'

/** Instructions a vCPU may run while being brought to a safe point before we call it stuck. */
const SAFE_POINT_BUDGET = 50_000_000

export class KernelServices {
  private readonly work: { due: number; fn: () => void }[] = []

  constructor(private readonly kernel: Kernel) {}

  /** Is the vCPU at a quiescent point: user mode, or the idle loop? */
  quiescent(c: Cpu): boolean {
    if (c.cpl === 3) return true
    const k = this.kernel
    const start = k.kallsyms.lookupName('__cpuidle_text_start')
    const end = k.kallsyms.lookupName('__cpuidle_text_end')
    return start !== undefined && end !== undefined && c.rip >= start && c.rip < end
  }

  /** Run vCPU c alone until it reaches a quiescent point. */
  private bringToSafePoint(c: Cpu): void {
    const m = this.kernel.machine
    let ran = 0
    while (!this.quiescent(c)) {
      if (c.halted) return // halted outside the idle loop: nothing runs there either
      const before = c.instructions
      m.runCpu(c, 1)
      ran += c.instructions - before + 1
      if (ran > SAFE_POINT_BUDGET) throw new Error(`cpu ${c.id} does not reach a safe point`)
    }
  }

  /**
   * text_poke: patch kernel text through its writable alias (the direct map
   * of the same frames; the image mapping itself is read-only). Every vCPU's
   * cached code for those bytes is dropped. Returns the bytes replaced.
   */
  textPoke(addr: number, bytes: ArrayLike<number>): Uint8Array {
    const k = this.kernel
    if (addr < k.image.textStart || addr + bytes.length > k.image.textEnd) {
      throw new RangeError(`text_poke outside kernel text: ${k.kallsyms.format(addr)}`)
    }
    const phys = imagePhys(addr)
    const old = k.machine.memory.readBytes(phys, bytes.length)
    k.machine.memory.writeBytes(phys, bytes)
    return old
  }

  /**
   * stop_machine: run fn while every vCPU but `self` is held at a safe point. `self` defaults to the
   * vCPU the host is running for now (a call from a handler): it is where the caller is, not a CPU to wait for.
   */
  stopMachine<T>(fn: () => T, self: Cpu | null = this.kernel.machine.current): T {
    for (const c of this.kernel.machine.cpus) if (c !== self) this.bringToSafePoint(c)
    return fn()
  }

  /** text_poke_smp: a patch made under stop_machine. */
  textPokeSmp(
    addr: number,
    bytes: ArrayLike<number>,
    self: Cpu | null = this.kernel.machine.current,
  ): Uint8Array {
    return this.stopMachine(() => this.textPoke(addr, bytes), self)
  }

  /**
   * synchronize_sched / synchronize_rcu (the same for a non-preemptible
   * kernel): return once every vCPU has passed a quiescent state.
   */
  synchronizeSched(self: Cpu | null = this.kernel.machine.current): void {
    for (const c of this.kernel.machine.cpus) if (c !== self) this.bringToSafePoint(c)
  }

  synchronizeRcu(self: Cpu | null = this.kernel.machine.current): void {
    this.synchronizeSched(self)
  }

  /** schedule_delayed_work: fn runs from the timer tick once `delay` jiffies have passed. */
  scheduleDelayedWork(fn: () => void, delay = 0): void {
    this.work.push({ due: this.kernel.jiffies + delay, fn })
    this.work.sort((a, b) => a.due - b.due)
  }

  /**
   * While due work runs from a tick: the vCPU and the pt_regs address of the context its timer
   * interrupt cut into. Work that patches text must not patch under it (it returns there).
   */
  workInterrupted: { cpu: Cpu; regs: number } | null = null

  /** Called on every tick of CPU 0 (regs: what the tick interrupted): run the work that is due, in order. */
  runDueWork(cpu: Cpu | null = null, regs = 0): void {
    const outer = this.workInterrupted
    this.workInterrupted = cpu ? { cpu, regs } : null
    try {
      while (this.work.length > 0 && this.work[0].due <= this.kernel.jiffies) this.work.shift()!.fn()
    } finally {
      this.workInterrupted = outer
    }
  }

  get pendingWork(): number {
    return this.work.length
  }
}
