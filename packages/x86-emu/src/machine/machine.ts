// The machine: physical memory, N vCPUs interleaved deterministically, the
// shared code cache, host services reached by vmcall, a per-vCPU timer, an
// instruction budget, and the cost model.
//
// Determinism: vCPUs run in a fixed round-robin order, each for `quantum`
// instructions (the block run that reaches it ends it, see quantumEnd: the
// same point interpreted or compiled), timers count guest cycles, and the
// TSC is guest cycles. The same inputs give the same run. A timer interrupt
// is taken at the instruction it falls due on (blocks are cut there too), so
// how code splits into blocks never moves it; a lone vCPU has no one to
// interleave with and runs without quanta.

import { formatLinear } from '../address.js'
import { Cpu, type CpuHost, type Cpu as CpuType } from '../cpu/cpu.js'
import { checkExecBreakpoint } from '../cpu/debug.js'
import { CpuFault, Vector } from '../cpu/exceptions.js'
import { DR6_BS, IF, RF, TF } from '../cpu/registers.js'
import { type Block, buildBlock, decodeBlock, MAX_BLOCK_INSTRUCTIONS, setsRip } from '../exec/block.js'
import { compileBlock } from '../jit/block-compiler.js'
import { FrameAllocator } from '../memory/frame-allocator.js'
import { PhysicalMemory } from '../memory/physical-memory.js'
import { TLB_MASK } from '../memory/tlb.js'
import { CodeCache } from './code-cache.js'
import { type CostModel, CpuCounters, DEFAULT_COSTS } from './cost-model.js'
import { deliver, describeTrap, eventFromFault, type TrapEvent, type TrapHandler } from './traps.js'

export interface MachineOptions {
  /** Bytes of physical memory (default 256 MiB). */
  memorySize?: number
  /** Number of vCPUs (default 1). */
  cpus?: number
  /** Instructions a vCPU runs before the next one gets its turn (default 1000). */
  quantum?: number
  /** A periodic timer interrupt on every vCPU: every `period` guest cycles, vector `vector`. */
  timer?: { period: number; vector: number } | null
  costs?: Partial<CostModel>
  /**
   * Executions after which a block is compiled to a JavaScript function
   * (default 32). 0 compiles every block at once; Infinity keeps the pure
   * interpreter. Both give identical results: the tests run both.
   */
  jitThreshold?: number
  /**
   * Estimated host bytes the code cache may hold (decoded and compiled
   * blocks) before it is emptied (default 8 MiB; see code-cache.ts). Any
   * budget gives identical results, a small one only runs slower.
   */
  codeCacheSize?: number
}

/** Hypercall numbers looked up in a plain table rather than a map (the kernel's are 0x100-0x1ff). */
const HYPERCALL_TABLE_SIZE = 1024

/** A host service: runs with the vCPU that executed vmcall; returns extra guest cycles to charge, if any. */
// biome-ignore lint/suspicious/noConfusingVoidType: services that charge nothing simply return nothing
export type Hypercall = (cpu: CpuType, machine: Machine) => number | void

export interface RunOptions {
  /** Stop after this many guest instructions in total (the runaway guard). */
  maxInstructions?: number
}

export interface RunResult {
  /**
   * 'halted': every vCPU is halted with nothing pending; 'stopped': machine.stop() was called; 'budget':
   * maxInstructions ran out; 'error': an unrecoverable guest error (triple fault, unhandled exception);
   * 'oops': host code run for the guest (a probe handler, a tracing callback) failed and the kernel
   * oopsed - the machine stopped for good (every later run ends at once with the same result).
   */
  reason: 'halted' | 'stopped' | 'budget' | 'error' | 'oops'
  detail: string
  instructions: number
}

/**
 * The machine: physical memory, N vCPUs interleaved deterministically, the
 * shared code cache, host services reached by vmcall, a per-vCPU timer, an
 * instruction budget and the cost model.
 */
export class Machine implements CpuHost {
  readonly memory: PhysicalMemory
  readonly frames: FrameAllocator
  readonly cpus: Cpu[]
  readonly codeCache: CodeCache
  readonly costs: CostModel
  readonly counters: CpuCounters[]
  quantum: number
  jitThreshold: number
  timer: { period: number; vector: number } | null
  /** Sees every exception and interrupt first. Without one, everything goes through the guest IDT. */
  trapHandler: TrapHandler | null = null
  /** Host services numbered below HYPERCALL_TABLE_SIZE, by number (every vmcall looks one up); the rest in hypercalls. */
  private readonly hypercallTable: (Hypercall | undefined)[] = new Array(HYPERCALL_TABLE_SIZE).fill(undefined)
  private readonly hypercalls = new Map<number, Hypercall>()
  private readonly nextTimer: number[]
  private stopRequest: { reason: 'stopped' | 'error' | 'oops'; detail: string } | null = null

  constructor(options: MachineOptions = {}) {
    this.memory = new PhysicalMemory(options.memorySize ?? 256 * 1024 * 1024)
    this.frames = new FrameAllocator(this.memory)
    const n = options.cpus ?? 1
    this.cpus = []
    this.counters = []
    for (let i = 0; i < n; i++) {
      const c = new Cpu(i, this.memory)
      c.host = this
      this.cpus.push(c)
      this.counters.push(new CpuCounters())
    }
    this.codeCache = new CodeCache(this.memory, this.cpus, options.codeCacheSize)
    this.costs = { ...DEFAULT_COSTS, ...options.costs }
    this.quantum = options.quantum ?? 1000
    this.jitThreshold = options.jitThreshold ?? 32
    this.timer = options.timer ?? null
    this.nextTimer = this.cpus.map(() => this.timer?.period ?? Number.POSITIVE_INFINITY)
  }

  // ------------------------------------------------------------------ host services

  registerHypercall(nr: number, fn: Hypercall): void {
    if (Number.isInteger(nr) && nr >= 0 && nr < HYPERCALL_TABLE_SIZE) this.hypercallTable[nr] = fn
    else this.hypercalls.set(nr, fn)
  }

  hypercall(c: CpuType): void {
    const nr = c.r[0] >>> 0
    const fn = nr < HYPERCALL_TABLE_SIZE ? this.hypercallTable[nr] : this.hypercalls.get(nr)
    if (!fn) throw new CpuFault(Vector.UD, 0, 0, `vmcall: no host service ${nr}`)
    const k = this.counters[c.id]
    k.hypercalls++
    k.cycles += this.costs.hypercall
    const extra = fn(c, this)
    if (typeof extra === 'number') k.cycles += extra
  }

  readTsc(c: CpuType): bigint {
    return BigInt(Math.floor(this.counters[c.id].cycles + c.instructions * this.costs.instruction))
  }

  modeSwitch(c: CpuType): void {
    const k = this.counters[c.id]
    k.modeSwitches++
    k.cycles += this.costs.modeSwitch
  }

  /** Guest cycles of a vCPU so far (instructions plus charged events). */
  cycles(cpu: number): number {
    return this.counters[cpu].cycles + this.cpus[cpu].instructions * this.costs.instruction
  }

  /** Queue an external interrupt (an IPI, a device) for a vCPU. */
  interrupt(cpu: number, vector: number): void {
    const c = this.cpus[cpu]
    if (!c.pendingInterrupts.includes(vector)) c.pendingInterrupts.push(vector)
  }

  /** Ask the run loop to return after the current instruction ('oops': for good; the first oops stays). */
  stop(detail = 'stopped', error: boolean | 'oops' = false): void {
    if (this.stopRequest?.reason === 'oops') return
    this.stopRequest = { reason: error === 'oops' ? 'oops' : error ? 'error' : 'stopped', detail }
    for (const c of this.cpus) c.blockExit = true
  }

  /** Flush every vCPU's TLB (after the host edited page tables: a TLB shootdown). */
  flushTlb(addr?: number): void {
    for (const c of this.cpus) {
      if (addr === undefined) c.flushTlb()
      else c.invlpg(addr)
    }
  }

  // ------------------------------------------------------------------ running

  run(options: RunOptions = {}): RunResult {
    const budget = options.maxInstructions ?? Number.POSITIVE_INFINITY
    const start = this.totalInstructions()
    if (this.stopRequest?.reason === 'oops') return this.result('oops', this.stopRequest.detail, start)
    this.stopRequest = null
    for (;;) {
      let progressed = false
      for (const c of this.cpus) {
        const left = budget - (this.totalInstructions() - start)
        if (left <= 0) return this.result('budget', `instruction budget of ${budget} exhausted`, start)
        const before = c.instructions
        const wasHalted = c.halted
        const slice = this.cpus.length === 1 ? left : Math.min(this.quantum, left)
        // A quantum may end a block late (never the run's own budget): its last block run goes to its end.
        this.runCpu(c, slice, left - slice >= MAX_BLOCK_INSTRUCTIONS)
        if (c.instructions !== before || (wasHalted && !c.halted)) progressed = true
        // A halted vCPU's clock runs while the others work, so its timer still fires.
        else if (c.halted) this.counters[c.id].cycles += Math.min(this.quantum, left) * this.costs.instruction
        const stop = this.pendingStop()
        if (stop) return this.result(stop.reason, stop.detail, start)
      }
      if (!progressed) {
        // Everyone is halted: let time pass to the next timer tick, or give up.
        const next = this.advanceIdleTime()
        if (!next) return this.result('halted', 'all vCPUs halted', start)
      }
    }
  }

  private pendingStop(): { reason: 'stopped' | 'error' | 'oops'; detail: string } | null {
    return this.stopRequest
  }

  private result(reason: RunResult['reason'], detail: string, start: number): RunResult {
    return { reason, detail, instructions: this.totalInstructions() - start }
  }

  totalInstructions(): number {
    let n = 0
    for (const c of this.cpus) n += c.instructions
    return n
  }

  private advanceIdleTime(): boolean {
    if (!this.timer) return false
    let earliest = Number.POSITIVE_INFINITY
    for (const c of this.cpus) {
      if ((c.eflags & IF) !== 0) earliest = Math.min(earliest, this.nextTimer[c.id] - this.cycles(c.id))
    }
    if (!Number.isFinite(earliest)) return false
    for (const c of this.cpus) this.counters[c.id].cycles += Math.max(0, earliest)
    return true
  }

  /**
   * The vCPU whose instructions run now (host code called from its hypercall, fault or trap handling
   * runs "on" it), or null between runs. A probe layer asked to wait for every vCPU leaves this one.
   */
  current: Cpu | null = null

  /** Run one vCPU for up to `budget` instructions (with `soft`, the last block may run whole past it). */
  runCpu(c: Cpu, budget: number, soft = false): void {
    const outer = this.current
    const outerEnd = this.quantumEnd
    this.current = c
    try {
      this.runCpuSlice(c, budget, soft)
    } finally {
      this.current = outer
      this.quantumEnd = outerEnd
    }
  }

  /**
   * Where a soft quantum ends (Infinity for a hard slice): the first block run (a block from its
   * start to its end or a side exit; a compiled loop's every iteration is one) that reaches it ends
   * the quantum. Interpreted blocks, compiled chains, compiled loops and exception handlers all stop
   * by this one rule, so where a quantum ends is a function of the guest's instructions alone, never
   * of which blocks happen to be compiled (what ran before in the process, the code cache budget).
   */
  private quantumEnd = Number.POSITIVE_INFINITY

  private runCpuSlice(c: Cpu, budget: number, soft: boolean): void {
    const target = c.instructions + budget
    this.quantumEnd = soft ? target : Number.POSITIVE_INFINITY
    const k = this.counters[c.id]
    const timer = this.timer
    let prev: Block | null = null
    while (c.instructions < target) {
      if (timer !== null && k.cycles + c.instructions * this.costs.instruction >= this.nextTimer[c.id]) {
        const now = this.cycles(c.id)
        this.nextTimer[c.id] +=
          timer.period * Math.max(1, Math.ceil((now - this.nextTimer[c.id] + 1) / timer.period))
        this.interrupt(c.id, timer.vector)
      }
      if (c.pendingInterrupts.length > 0 && (c.eflags & IF) !== 0 && !c.interruptShadow) {
        const vector = c.pendingInterrupts.shift()!
        c.halted = false
        prev = null
        this.raise(c, { vector, errorCode: 0, address: 0, kind: 'interrupt', software: false, detail: '' })
        if (this.stopRequest) return
        continue
      }
      c.interruptShadow = false
      if (c.halted) return
      // Follow the chain from the previous block when it still applies; otherwise look up.
      let b: Block | null = null
      if (prev !== null && prev.succEpoch === c.mapEpoch) {
        const rip = c.rip
        const s1: Block | null = prev.succ
        if (s1 !== null && s1.virt === rip && s1.valid) b = s1
        else {
          const s2: Block | null = prev.succ2
          if (s2 !== null && s2.virt === rip && s2.valid) b = s2
        }
      }
      if (b === null) {
        try {
          b = this.blockAt(c)
        } catch (e) {
          if (!(e instanceof CpuFault)) throw e
          this.raise(c, eventFromFault(e))
          if (this.stopRequest) return
          prev = null
          continue
        }
        if (prev !== null) {
          if (prev.succEpoch !== c.mapEpoch) {
            prev.succ2 = null
            prev.succEpoch = c.mapEpoch
          } else prev.succ2 = prev.succ
          prev.succ = b
        }
      }
      // Hard: what may run before we must stop (a soft quantum's last block runs whole, see quantumEnd).
      let left = soft ? Number.POSITIVE_INFINITY : target - c.instructions
      if (timer !== null) {
        // Stop at the instruction the timer falls due on (at least 1: it is not due yet).
        const due = Math.ceil((this.nextTimer[c.id] - k.cycles) / this.costs.instruction) - c.instructions
        if (due < left) left = Math.max(1, due)
      }
      prev = this.execute(c, b, left)
      if (this.stopRequest) return
    }
  }

  /** Physical address of rip when the TLB holds an executable mapping for it, else -1. */
  private tlbExecPhys(c: Cpu, rip: number): number {
    const vpn = Math.floor(rip / 4096)
    const t = c.tlb
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    return t.vpn[i] === vpn && (t.bits[i] & c.xBit) !== 0 ? t.phys[i] + (rip & 0xfff) : -1
  }

  /** The cached one-page block at rip when the TLB maps it already, else null: no walk, no fault, no decode. */
  private cachedBlockAt(c: Cpu, rip: number): Block | null {
    const phys = this.tlbExecPhys(c, rip)
    if (phys < 0) return null
    const b = this.codeCache.lookup(phys, rip)
    return b !== undefined && b.frames.length === 1 ? b : null
  }

  private blockAt(c: Cpu): Block {
    const rip = c.rip
    const hit = this.tlbExecPhys(c, rip)
    const phys = hit >= 0 ? hit : c.translate(rip, 2, c.cpl === 3)
    let b = this.codeCache.lookup(phys, rip)
    // A block whose last instruction spills onto the next page is only good while that page maps the same frame.
    if (
      b !== undefined &&
      b.frames.length > 1 &&
      c.translate(rip - (rip & 0xfff) + 4096, 2, c.cpl === 3) !== b.frames[1] * 4096
    ) {
      b = undefined
    }
    if (b === undefined) {
      b = buildBlock(c, rip)
      this.codeCache.insert(b)
    }
    return b
  }

  /** Run (part of) a block, and compiled blocks chained to it; the block that ended normally last (the next may be chained to it), else null. */
  private execute(c: Cpu, b: Block, budget: number): Block | null {
    const ops = b.ops
    c.blockExit = false
    // Fast path: a compiled block run whole, with no single-step, resume flag or debug register armed.
    if (b.jit !== null && budget >= b.length && (c.eflags & (TF | RF)) === 0 && c.debugTraps === 0) {
      return this.runCompiled(c, b, budget)
    }
    let stepping = (c.eflags & TF) !== 0
    // Debug features need an instruction boundary after every instruction.
    const n = stepping || c.debugTraps !== 0 ? 1 : Math.min(b.length, budget)
    const rf = (c.eflags & RF) !== 0
    let i = 0
    try {
      if (n === b.length && b.jit === null && ++b.hits >= this.jitThreshold) {
        const insns = decodeBlock(this.memory.bytes, b)
        if (insns !== null) this.codeCache.setCompiled(b, compileBlock(insns))
        // A block that cannot be compiled is not tried again (a small integer: Block.hits stays a Smi field).
        else b.hits = -0x3fffffff
      }
      // Cpu.ld counts a self-loop's completed iterations for a fault mid-way: a compiled loop that
      // returned normally leaves it set, so it starts from 0 here for either path (faulted adds it).
      c.ld = 0
      if (n === b.length && b.jit !== null) {
        i = b.jit(c, ops, n)
      } else {
        if (c.execBreakpoints.length > 0) checkExecBreakpoint(c, b.ips[0])
        const exits = b.exits
        for (; i < n; i++) {
          c.ci = i
          ops[i](c)
          if (c.blockExit || (exits !== null && exits[i] !== 0 && c.rip !== b.ips[i + 1])) {
            i++
            break
          }
        }
      }
    } catch (e) {
      return this.resume(c, this.faulted(c, b, e, budget))
    }
    // A trap (int3, int n) recorded rather than thrown: delivered as the thrown one would be.
    if (c.trap !== null) return this.resume(c, this.faulted(c, b, this.takeTrap(c), budget))
    c.instructions += i
    if (c.repeatCurrent) {
      // The last op stopped part-way (a rep string op between chunks; it counts as one instruction so long reps still yield): run it again.
      c.repeatCurrent = false
      c.rip = b.ips[i - 1]
    } else if (i > 0 && !setsRip(b, i - 1)) c.rip = b.ips[i]
    if (rf && i > 0) c.eflags &= ~RF
    if (c.stepSuppressed) {
      c.stepSuppressed = false
      stepping = false
    }
    if (c.pendingDataHits !== 0 || (stepping && i > 0)) {
      c.dr6 = (c.dr6 & ~0xf) | c.pendingDataHits | (stepping ? DR6_BS : 0)
      c.pendingDataHits = 0
      this.raise(c, {
        vector: Vector.DB,
        errorCode: 0,
        address: 0,
        kind: 'trap',
        software: false,
        detail: stepping ? 'single-step' : 'data breakpoint',
      })
      return this.resume(c, budget - i)
    }
    return i === b.length || (i > 0 && setsRip(b, i - 1)) ? b : null
  }

  /** Cpu.trap, cleared (and the block exit it asked for). */
  private takeTrap(c: Cpu): CpuFault {
    const e = c.trap!
    c.trap = null
    c.blockExit = false
    return e
  }

  /**
   * After an exception was delivered outside compiled code (the interpreter's single-step #DB, its
   * int3): go on at the handler in compiled code when the run loop would do nothing else first;
   * null sends it back to the run loop.
   */
  private resume(c: Cpu, budget: number): Block | null {
    const next = this.handlerBlock(c, budget)
    return next === null ? null : this.runCompiled(c, next, this.handlerBudget)
  }

  /** The budget handlerBlock left for the handler's chain (cut at the timer's instruction). */
  private handlerBudget = 0

  /**
   * The compiled block at RIP to run next, right after an exception was delivered, when the run
   * loop would not look at anything first (a stop, halt, pending interrupt, single-step, debug
   * register or the timer falling due, an uncompiled block); else null. Sets handlerBudget.
   */
  private handlerBlock(c: Cpu, budget: number): Block | null {
    if (
      this.stopRequest !== null ||
      c.instructions >= this.quantumEnd ||
      c.halted ||
      c.pendingInterrupts.length !== 0 ||
      (c.eflags & (TF | RF)) !== 0 ||
      c.debugTraps !== 0
    )
      return null
    if (this.timer !== null) {
      const due =
        Math.ceil((this.nextTimer[c.id] - this.counters[c.id].cycles) / this.costs.instruction) -
        c.instructions
      if (due < budget) budget = due
    }
    const next = this.cachedBlockAt(c, c.rip)
    if (next === null || !next.valid || next.jit === null || next.length > budget) return null
    c.interruptShadow = false
    c.blockExit = false
    this.handlerBudget = budget
    return next
  }

  /**
   * Run compiled blocks from b while each ends normally and its chained
   * successor is compiled too, without going back to the run loop: only
   * what the run loop would look at between two blocks stops the chain
   * (budget, timer, pending interrupts, halt, stop or code invalidation,
   * a block that changed CPU state, single-step or debug registers).
   */
  private runCompiled(c: Cpu, b: Block, budget: number): Block | null {
    const timer = this.timer
    const k = this.counters[c.id]
    const end = this.quantumEnd
    let charged = k.cycles
    for (;;) {
      let i: number
      c.ld = 0
      try {
        // A loop starts another iteration only while the quantum has not ended: as many as the interpreter would run.
        i = b.jit!(
          c,
          b.ops,
          end === Number.POSITIVE_INFINITY ? budget : Math.min(budget, end - c.instructions + b.length - 1),
        )
      } catch (e) {
        // Delivered; the handler runs on here when nothing else has to happen first.
        const next = this.handlerBlock(c, this.faulted(c, b, e, budget))
        if (next === null) return null
        b = next
        budget = this.handlerBudget
        charged = k.cycles
        continue
      }
      if (c.trap !== null) {
        const next = this.handlerBlock(c, this.faulted(c, b, this.takeTrap(c), budget))
        if (next === null) return null
        b = next
        budget = this.handlerBudget
        charged = k.cycles
        continue
      }
      c.instructions += i
      budget -= i
      const n = b.length
      // Common case inline: the block (or a looping block's whole iterations, RIP set by its branch) ran through.
      if (!c.repeatCurrent && (i === n || (i > n && i % n === 0))) {
        if (!b.lastBranch) c.rip = b.ips[n]
      } else if (!this.leave(c, b, i > n ? i % n : i)) return null
      // A block that changed CPU state (endsEarly: popf, sti, cli, swapgs, mov cr/dr, wrmsr) needs
      // nothing more than these: what such state can change is all here or in the lookup below.
      if (
        c.blockExit ||
        c.halted ||
        c.pendingInterrupts.length !== 0 ||
        (c.eflags & (TF | RF)) !== 0 ||
        c.debugTraps !== 0
      ) {
        return b
      }
      if (timer !== null && k.cycles !== charged) {
        // The block charged cycles (a mode switch, a host call): the timer falls due sooner than budgeted.
        charged = k.cycles
        const due = Math.ceil((this.nextTimer[c.id] - charged) / this.costs.instruction) - c.instructions
        if (due <= 0) return b
        if (due < budget) budget = due
      }
      const rip = c.rip
      let next: Block | null
      if (b.succEpoch !== c.mapEpoch) {
        // The links were made under other mappings or another privilege (an iretq or sysret that
        // goes to user mode one time and to the kernel the next): look up through the TLB, relink.
        next = this.cachedBlockAt(c, rip)
        if (next === null) return b
        b.succEpoch = c.mapEpoch
        b.succ2 = null
        b.succ = next
      } else {
        next = b.succ
        if (next === null || next.virt !== rip) next = b.succ2
        if (next === null || next.virt !== rip) {
          // Neither chained successor (a return to another caller, an indirect jump): look it up without leaving.
          next = this.cachedBlockAt(c, rip)
          if (next === null) return b
          b.succ2 = b.succ
          b.succ = next
        }
      }
      if (!next.valid || next.jit === null || next.length > budget || c.instructions >= end) return b
      c.interruptShadow = false
      b = next
    }
  }

  /** After compiled code stopped `within` instructions into block b (0: at its end, RIP set): fix RIP; true when b ended normally. */
  private leave(c: Cpu, b: Block, within: number): boolean {
    if (c.repeatCurrent) {
      c.repeatCurrent = false
      c.rip = b.ips[within - 1]
      return false
    }
    if (within === 0) return true
    // A branch inside the block that left it (a side exit) has set RIP already.
    if (setsRip(b, within - 1)) return true
    c.rip = b.ips[within]
    return within === b.length
  }

  /**
   * An instruction of block b (index Cpu.ci) raised e: account for the completed ones and deliver.
   * Returns what is left of `budget` (instructions) after them.
   */
  private faulted(c: Cpu, b: Block, e: unknown, budget: number): number {
    if (!(e instanceof CpuFault)) {
      throw new Error(
        `host error executing at ${formatLinear(b.ips[c.ci])}: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      )
    }
    let i = c.ci
    // A trap (int3, int n) reports the next instruction, a fault the instruction itself.
    if (e.trap) i++
    c.rip = b.ips[i]
    i += c.ld
    c.instructions += i
    c.ld = 0
    c.pendingDataHits = 0
    c.repeatCurrent = false
    this.raise(c, eventFromFault(e))
    return budget - i
  }

  /** Charge, offer to the trap handler, then deliver through the IDT. */
  raise(c: Cpu, ev: TrapEvent): void {
    const k = this.counters[c.id]
    if (ev.kind === 'interrupt') {
      k.interrupts++
      k.cycles += this.costs.interrupt
    } else {
      k.traps++
      k.cycles += this.costs.trap
    }
    if (ev.vector === Vector.PF) c.cr2 = ev.address
    const disposition = this.trapHandler ? this.trapHandler(c, ev) : 'deliver'
    if (disposition === 'handled') return
    if (disposition === 'stop') {
      this.stop(`cpu ${c.id}: ${describeTrap(ev)} at ${formatLinear(c.rip)}`, true)
      return
    }
    const err = deliver(c, ev)
    if (err) this.stop(`cpu ${c.id}: ${err} at ${formatLinear(c.rip)}`, true)
  }
}
