// Jump optimization of kprobes (kernel/kprobes.c's optprobe half and
// arch/x86/kernel/kprobes/opt.c; the seed's sections 1.4, 4.3-4.4, 5, 6.1
// and appendices A-B), plugged into Kprobes as its optimizer.
//
// A probe is registered as an int3 probe and works at once. If its address
// can take a jump (can-optimize.ts) and nothing blocks it (a post_handler,
// a jprobe, a disabled probe, another probe inside the region), a detour
// buffer is prepared and the probe queued; from then on an int3 hit runs
// the buffer's copy of the region instead of single-stepping. The
// kprobe-optimizer work, on the kernel's delayed-work queue OPTIMIZE_DELAY
// jiffies later, batches the queue: unoptimizations first, then a grace
// period (no CPU inside a region about to change: synchronize_sched, and
// the CPU running the work not interrupted inside one), then each jump is
// written under stop_machine. Unoptimizing writes the int3 and the original
// bytes back the same way.

import { HC_OPTPROBE_CALLBACK, KERNEL_CS, type Kernel, parseBoolInt } from '@probekit/kernel'
import {
  InsnSlotCache,
  KPROBE_FLAG_OPTIMIZED,
  type KprobeOptimizer,
  type Kprobes,
  kprobeDisabled,
  MODULES_VADDR,
  type RegisteredKprobe,
  recoverInstruction,
} from '@probekit/kprobes'
import type { Cpu } from '@probekit/x86-emu'
import { canOptimize } from './can-optimize.js'
import {
  buildDetourBuffer,
  JMP32_INSN_SIZE,
  MAX_OPTIMIZED_LENGTH,
  MAX_OPTINSN_SIZE,
  optimizedJump,
} from './detour-buffer.js'
import type { OptimizedKprobe } from './optimized-kprobe.js'

/** The sysctl's /proc/sys path (the seed's appendix B: /proc/sys/debug/kprobes-optimization). */
export const KPROBES_OPTIMIZATION_SYSCTL = 'debug/kprobes-optimization'

/** Jiffies from a probe's queueing to the optimizer's run (kernel/kprobes.c OPTIMIZE_DELAY). */
export const OPTIMIZE_DELAY = 5
/** Where the optinsn slots go: the module area, past kprobes' own insn slots, within ±2 GiB of the text. */
export const OPTINSN_SLOTS_BASE = MODULES_VADDR + 0x400000

export interface OptprobesOptions {
  delay?: number
  slotBase?: number
  /**
   * Leave out the grace period before writing jumps, and write them without stop_machine (for the
   * test that shows what the wait prevents: a CPU inside a region returns into the middle of the
   * jump). Never set it otherwise.
   */
  unsafeSkipGracePeriod?: boolean
}

/**
 * Jump optimization of kprobes, plugged into {@link Kprobes} as its optimizer:
 * a probe whose region can take a 5-byte `jmp` gets a detour buffer, and the
 * delayed kprobe-optimizer replaces its int3 with the jump.
 */
export class Optprobes implements KprobeOptimizer {
  readonly kernel: Kernel
  private readonly ops = new Map<number, OptimizedKprobe>()
  private readonly byId = new Map<number, OptimizedKprobe>()
  private nextId = 1
  readonly slots: InsnSlotCache
  private optimizingList: OptimizedKprobe[] = []
  private unoptimizingList: OptimizedKprobe[] = []
  private workQueued = false
  /** sysctl debug.kprobes_optimization (kprobes_allow_optimization). */
  private allowOptimization = true
  /** Why the last attempt to optimize an address was refused (can_optimize's reasons, blockers). */
  readonly refused = new Map<number, string>()
  private readonly delay: number
  private readonly skipGracePeriod: boolean

  constructor(
    readonly kprobes: Kprobes,
    options: OptprobesOptions = {},
  ) {
    if (kprobes.optimizer) throw new Error('these kprobes already have an optimizer')
    this.kernel = kprobes.kernel
    this.delay = options.delay ?? OPTIMIZE_DELAY
    this.skipGracePeriod = options.unsafeSkipGracePeriod ?? false
    this.slots = new InsnSlotCache(this.kernel, options.slotBase ?? OPTINSN_SLOTS_BASE, MAX_OPTINSN_SIZE)
    this.kernel.machine.registerHypercall(HC_OPTPROBE_CALLBACK, (c) => this.optimizedCallback(c))
    kprobes.optimizer = this
    // /proc/sys/debug/kprobes-optimization (sysctl debug.kprobes-optimization).
    this.kernel.sysctls.register(KPROBES_OPTIMIZATION_SYSCTL, {
      read: () => `${this.kprobes_optimization}\n`,
      write: (value) => {
        const v = parseBoolInt(value)
        if (v < 0) return v
        this.kprobes_optimization = v
        return 0
      },
    })
    // Probes registered before we came: queue them as Linux's optimize_all_kprobes would.
    for (const p of this.hashed()) if (!kprobeDisabled(p)) this.optimizeKprobe(p)
  }

  // ================================================================ the sysctl (appendix B)

  /** /proc/sys/debug/kprobes-optimization: 1 (default) or 0. */
  get kprobes_optimization(): number {
    return this.allowOptimization ? 1 : 0
  }

  /**
   * Writing it: 0 unoptimizes every optimized probe (and waits for it) and keeps new ones int3
   * probes; 1 queues them all for optimization again (optimize_all_kprobes).
   */
  set kprobes_optimization(v: number) {
    if ((v !== 0) === this.allowOptimization) return
    this.allowOptimization = v !== 0
    if (this.allowOptimization) {
      for (const p of this.hashed()) if (!kprobeDisabled(p)) this.optimizeKprobe(p)
      this.kernel.printk.log(
        this.kernel.jiffies,
        'kprobes: kprobe jump-optimization is enabled. All kprobes are optimized if possible.',
      )
    } else {
      for (const p of this.hashed()) this.unoptimizeKprobe(p, false)
      this.wait_for_kprobe_optimizer()
      this.kernel.printk.log(
        this.kernel.jiffies,
        'kprobes: kprobe jump-optimization is disabled. All kprobes are based on software breakpoint.',
      )
    }
  }

  // ================================================================ what tools and tests see

  /** Is the jump at addr in the text now (what debugfs shows as [OPTIMIZED])? */
  isOptimized(addr: number): boolean {
    return this.ops.get(addr)?.state === 'optimized'
  }

  /** The detour buffer at a probed address: where it is, its bytes, the region it stands for. */
  detourBuffer(
    addr: number,
  ): { address: number; bytes: Uint8Array; copyOffset: number; size: number; state: string } | null {
    const op = this.ops.get(addr)
    if (!op) return null
    return {
      address: op.buffer,
      bytes: op.bytes.slice(),
      copyOffset: op.copyOffset,
      size: op.size,
      state: op.state,
    }
  }

  /** wait_for_kprobe_optimizer: run the queued work now (from host code: every CPU brought to a safe point). */
  wait_for_kprobe_optimizer(): void {
    if (this.optimizingList.length > 0 || this.unoptimizingList.length > 0) this.kprobeOptimizer()
  }

  // ================================================================ KprobeOptimizer

  /** optimize_kprobe: queue p if it may be optimized (its buffer prepared now). */
  optimizeKprobe(p: RegisteredKprobe): void {
    if (!this.allowOptimization || kprobeDisabled(p)) return
    if (this.kprobes.get_kprobe(p.addr) !== p) return
    if (!this.kprobes.kprobeOptimizable(p)) {
      this.refused.set(p.addr, 'a post_handler or a jprobe needs the single-step')
      return
    }
    let op = this.ops.get(p.addr)
    if (op && op.kp !== p) {
      this.forget(op)
      op = undefined
    }
    if (op?.state === 'optimized' || op?.state === 'optimizing') return
    if (op?.state === 'unoptimizing') {
      // Still jumped: just cancel the unoptimization.
      this.unoptimizingList = this.unoptimizingList.filter((o) => o !== op)
      op.state = 'optimized'
      return
    }
    op ??= this.prepare(p) ?? undefined
    if (!op) return
    // arch_check_optimized_kprobe: another probe's int3 inside the region stays in the way.
    for (let i = 1; i < op.size; i++) {
      const other = this.kprobes.get_kprobe(p.addr + i)
      if (other && !kprobeDisabled(other)) {
        this.refused.set(
          p.addr,
          `another probe at ${this.kernel.kallsyms.format(p.addr + i)} is inside the region`,
        )
        return
      }
    }
    this.refused.delete(p.addr)
    op.state = 'optimizing'
    this.optimizingList.push(op)
    this.kick()
  }

  /** unoptimize_kprobe: back to an int3 probe; force: now, else from the optimizer's work. */
  unoptimizeKprobe(p: RegisteredKprobe, force: boolean): void {
    const op = this.ops.get(p.addr)
    if (!op || op.kp !== p) return
    if (op.state === 'optimizing') {
      // Not jumped yet: just dequeued.
      this.optimizingList = this.optimizingList.filter((o) => o !== op)
      op.state = 'prepared'
      return
    }
    if (op.state === 'unoptimizing') {
      if (!force) return
      this.unoptimizingList = this.unoptimizingList.filter((o) => o !== op)
      op.state = 'optimized'
    }
    if (op.state !== 'optimized') return
    if (force) {
      this.archUnoptimize(op)
      return
    }
    op.state = 'unoptimizing'
    this.unoptimizingList.push(op)
    this.kick()
  }

  forgetKprobe(p: RegisteredKprobe): void {
    const op = this.ops.get(p.addr)
    if (op && op.kp === p) this.forget(op)
  }

  coveringKprobe(addr: number): RegisteredKprobe | null {
    for (let i = 1; i < MAX_OPTIMIZED_LENGTH; i++) {
      const op = this.ops.get(addr - i)
      if (op && addr < op.addr + op.size && this.kprobes.get_kprobe(op.addr) === op.kp) return op.kp
    }
    return null
  }

  detourAddress(p: RegisteredKprobe): number | null {
    const op = this.ops.get(p.addr)
    return op && op.kp === p && op.state === 'optimizing' ? op.buffer + op.copyOffset : null
  }

  recoverBytes(addr: number, buf: Uint8Array): void {
    for (const op of this.ops.values()) {
      if (op.state !== 'optimized' && op.state !== 'unoptimizing') continue
      // The jump's bytes 0..4: byte 0 becomes the int3 kprobes recovers, 1..4 the saved originals.
      for (let i = 0; i < JMP32_INSN_SIZE; i++) {
        const at = op.addr + i - addr
        if (at >= 0 && at < buf.length) buf[at] = i === 0 ? 0xcc : op.saved[i - 1]
      }
    }
  }

  // ================================================================ the work

  private kick(): void {
    if (this.workQueued) return
    this.workQueued = true
    this.kernel.services.scheduleDelayedWork(() => this.kprobeOptimizer(), this.delay)
  }

  /**
   * kprobe_optimizer: unoptimize what is queued for it, wait until no CPU is inside a region about to
   * change, optimize what is queued. The CPU running this work from its tick may itself have been
   * interrupted inside a region: those probes wait for the next run.
   */
  private kprobeOptimizer(): void {
    this.workQueued = false
    for (const op of this.unoptimizingList.splice(0)) this.archUnoptimize(op)
    if (this.optimizingList.length === 0) return
    const blocked = new Set<OptimizedKprobe>()
    if (!this.skipGracePeriod) {
      this.kernel.services.synchronizeSched()
      const ip = this.interruptedIp()
      if (ip !== null)
        for (const op of this.optimizingList) if (ip > op.addr && ip < op.addr + op.size) blocked.add(op)
    }
    const queue = this.optimizingList.splice(0)
    for (const op of queue) {
      if (blocked.has(op)) this.optimizingList.push(op)
      else if (op.state === 'optimizing') this.archOptimize(op)
    }
    if (this.optimizingList.length > 0) this.kick()
  }

  /** The kernel-mode ip the running work's CPU was interrupted at (null: none, or user mode). */
  private interruptedIp(): number | null {
    const w = this.kernel.services.workInterrupted
    if (!w || w.regs === 0) return null
    const regs = this.kernel.frame(w.regs)
    return (regs.get('cs') & 3) === 0 ? regs.get('ip') : null
  }

  /** arch_optimize_kprobes: the jump over the region, under stop_machine. */
  private archOptimize(op: OptimizedKprobe): void {
    const jump = optimizedJump(op.addr, op.buffer)
    if (!jump) return
    // (The unsafe test mode writes it as it is, with no CPU held: stop_machine would be a grace period too.)
    if (this.skipGracePeriod) this.kernel.services.textPoke(op.addr, jump)
    else this.kernel.services.textPokeSmp(op.addr, jump)
    op.state = 'optimized'
    op.kp.flags |= KPROBE_FLAG_OPTIMIZED
  }

  /** arch_unoptimize_kprobe: int3 at byte 0, the original bytes after it, under stop_machine. */
  private archUnoptimize(op: OptimizedKprobe): void {
    this.kernel.services.textPokeSmp(op.addr, Uint8Array.of(0xcc, ...op.saved))
    op.state = 'prepared'
    op.kp.flags &= ~KPROBE_FLAG_OPTIMIZED
  }

  /** arch_prepare_optimized_kprobe: the checks, a slot, the buffer written. null if refused. */
  private prepare(p: RegisteredKprobe): OptimizedKprobe | null {
    const read = (a: number) =>
      recoverInstruction(
        this.kernel,
        a,
        (x) => this.kprobes.get_kprobe(x),
        (x, buf) => this.recoverBytes(x, buf),
      )
    const can = canOptimize(this.kernel, p.addr, read)
    if (!can.ok) {
      this.refused.set(p.addr, can.reason)
      return null
    }
    const slot = this.slots.get()
    const id = this.nextId++
    const built = buildDetourBuffer(id, p.addr, slot, can.region)
    if (!built || !optimizedJump(p.addr, slot)) {
      this.slots.free(slot)
      this.refused.set(p.addr, 'the detour buffer is out of reach of the text')
      return null
    }
    this.slots.write(slot, built.bytes)
    const saved = read(p.addr).slice(1, JMP32_INSN_SIZE)
    const op: OptimizedKprobe = {
      id,
      kp: p,
      addr: p.addr,
      buffer: slot,
      bytes: built.bytes,
      copyOffset: built.copyOffset,
      size: built.size,
      saved,
      state: 'prepared',
    }
    this.ops.set(p.addr, op)
    this.byId.set(id, op)
    return op
  }

  /** The probe is gone: its jump (if any) out, then, after a grace period, its buffer. */
  private forget(op: OptimizedKprobe): void {
    this.optimizingList = this.optimizingList.filter((o) => o !== op)
    this.unoptimizingList = this.unoptimizingList.filter((o) => o !== op)
    if (op.state === 'optimized' || op.state === 'unoptimizing') this.archUnoptimize(op)
    this.ops.delete(op.addr)
    this.byId.delete(op.id)
    // A CPU may still be running the buffer's copies.
    this.kernel.services.synchronizeSched()
    this.slots.free(op.buffer)
  }

  /** The hashed probes (one per address: an aggregate or a single probe). */
  private hashed(): RegisteredKprobe[] {
    const seen = new Set<number>()
    const out: RegisteredKprobe[] = []
    for (const p of this.kprobes.probes()) {
      if (seen.has(p.addr)) continue
      seen.add(p.addr)
      const h = this.kprobes.get_kprobe(p.addr)
      if (h) out.push(h)
    }
    return out
  }

  /** optimized_callback: the buffer's vmcall, rdi = our id, rsi = its pt_regs. */
  private optimizedCallback(c: Cpu): void {
    const op = this.byId.get(c.getLinear(7))
    if (!op) return
    const regs = this.kernel.frame(c.getLinear(6))
    // The fields the template skipped: as an int3 would have left them.
    regs.set('cs', KERNEL_CS)
    regs.set('ip', op.addr + 1)
    regs.set('orig_ax', -1)
    const p = this.kprobes.get_kprobe(op.addr)
    if (p) this.kprobes.optimizedCallback(p, regs, c.id)
  }
}
