// kernel/kprobes.c + the x86 int3/debug/fault notifiers: the Kprobes manager
// bound to one Kernel. One die notifier sees every exception the guest takes;
// DIE_INT3 at a probe address runs the pre_handler and single-steps the copy
// out of line with TF, DIE_DEBUG after that step fixes up and runs the
// post_handler, DIE_GPF/DIE_PAGE_FAULT during the step go to fault_handler.

import {
  describeException,
  guestCallTrace,
  HC_JPROBE_ENTRY,
  HC_KRETPROBE_TRAMPOLINE,
  type Kernel,
  kernelOopsed,
  oops,
  PERCPU_TOP_OF_STACK,
  PT_REGS,
  PT_REGS_SIZE,
  type Task,
} from '@probekit/kernel'
import { type Cpu, CpuFault, formatLinear, Vector } from '@probekit/x86-emu'
import {
  archArmKprobe,
  archCopyKprobe,
  archDisarmKprobe,
  BREAKPOINT_INSTRUCTION,
  canProbe,
  readText,
  resumeExecution,
  X86_EFLAGS_IF,
  X86_EFLAGS_TF,
} from './arch-x86.js'
import { E2BIG, EEXIST, EILSEQ, EINVAL, ENOENT } from './errno.js'
import { faultOops, HandlerFaulted } from './handler-fault.js'
import { InsnSlotCache } from './insn-slot.js'
import {
  type Jprobe,
  type JprobeCtlblk,
  JprobeReturn,
  jprobeArguments,
  MAX_STACK_SIZE,
  MIN_STACK_SIZE,
} from './jprobe.js'
import {
  type AggrKprobe,
  KPROBE_FLAG_DISABLED,
  KPROBE_FLAG_FTRACE,
  KPROBE_FLAG_GONE,
  KPROBE_FLAG_OPTIMIZED,
  KPROBE_HIT_ACTIVE,
  KPROBE_HIT_SS,
  KPROBE_HIT_SSDONE,
  KPROBE_REENTER,
  type Kprobe,
  type KprobeCtlblk,
  kprobeAggrprobe,
  kprobeDisabled,
  MAX_INSN_SIZE,
  type PtRegs,
  type RegisteredKprobe,
  ResumeFixup,
} from './kprobe.js'
import { KRETPROBE_MAX_DATA_SIZE, type Kretprobe, type KretprobeInstance } from './kretprobe.js'
import type { KprobeOptimizer } from './optimizer.js'

/** A kretprobe's instance pool (the free list of struct kretprobe). */
interface KretprobePool {
  free: KretprobeInstance[]
}

/**
 * Which of a probe's functions a handler call runs (a kretprobe's pre_handler runs its
 * entry_handler, the trampoline its handler, a jprobe's stub its entry): named in the oops of one
 * that throws.
 */
type HandlerKind = 'pre_handler' | 'post_handler' | 'fault_handler' | 'break_handler' | 'handler' | 'entry'

/** Where a handler was called from, for the oops of one that throws: which function, and the registers of the context it ran for. */
interface HandlerSite {
  kind: HandlerKind
  probe: Kprobe | null
  regs: PtRegs
}

// enum die_val and notifier return values (include/linux/kdebug.h, notifier.h)
export const DIE_INT3 = 2
export const DIE_DEBUG = 3
export const DIE_GPF = 9
export const DIE_PAGE_FAULT = 11
export const NOTIFY_DONE = 0
export const NOTIFY_STOP = 0x8001
/** DR6.BS: the #DB was a single-step trap. */
export const DR6_BS = 0x4000
/** die_args.err (struct die_args: regs, str, err, trapnr, signr). */

/** Priority of our die notifier: kprobes must see int3/#DB before anybody else (0x7fffffff in Linux). */
export const KPROBES_NOTIFIER_PRIORITY = 0x7fffffff

export interface KprobesOptions {
  /** Boost probes where can_boost allows (default true; Linux does only without CONFIG_PREEMPTION). */
  boost?: boolean
  /** Where the insn slot pages go (default MODULES_VADDR). */
  slotBase?: number
}

/**
 * The kprobes manager bound to one {@link Kernel} (kernel/kprobes.c with the
 * x86 int3, debug and fault notifiers): registers kprobes, jprobes and
 * kretprobes on kernel text and runs their handlers when the guest hits them.
 */
export class Kprobes {
  /** kprobe_table: the hashed probe per address (an aggregate when several share it). */
  private readonly table = new Map<number, RegisteredKprobe>()
  private readonly ctlblks = new Map<number, KprobeCtlblk>()
  /** Ranges [start, end) nobody may probe: NOKPROBE_SYMBOL functions, .entry.text, .kprobes.text. */
  private readonly blacklist: [number, number][] = []
  readonly slots: InsnSlotCache
  /** The CPU whose handler is running (smp_processor_id() for handlers). */
  private handlerCpu = -1
  /** kprobe_instance: the user probe whose handler runs now (a child of an aggregate, or the probe). */
  private kprobeInstance: Kprobe | null = null
  /** The probed context's registers while a handler runs (what fault_handler gets for a handler fault). */
  private handlerRegs: PtRegs | null = null
  /** A dummy probe installed as current_kprobe by kprobe_busy_begin. */
  private readonly busyKprobe: RegisteredKprobe
  /** Registered kretprobes by their entry kprobe (container_of(p, struct kretprobe, kp)). */
  private readonly kretprobes = new Map<Kprobe, Kretprobe>()
  private readonly kretprobePools = new Map<Kretprobe, KretprobePool>()
  /** kretprobe_inst_table: each task's outstanding instances, most recent first. */
  private readonly kretprobeInstTable = new Map<Task, KretprobeInstance[]>()
  private trampolineRegistered = false
  private trampolineAddress: number | undefined
  /** debugfs kprobes/enabled = 0: every probe disarmed, per-probe DISABLED untouched. */
  private kprobesAllDisarmed = false
  /** Registered jprobes by their kprobe. */
  private readonly jprobes = new Map<Kprobe, Jprobe>()
  /** The jprobe part of each CPU's kprobe_ctlblk. */
  private readonly jprobeCtlblks = new Map<number, JprobeCtlblk>()
  private jprobeEntryRegistered = false
  /** When each outstanding instance was taken (orders instances across tasks). */

  private readonly boost: boolean
  /** Jump optimization (optprobes), when plugged in. */
  optimizer: KprobeOptimizer | null = null

  constructor(
    readonly kernel: Kernel,
    options: KprobesOptions = {},
  ) {
    this.slots = new InsnSlotCache(kernel, options.slotBase)
    this.boost = options.boost ?? true
    this.busyKprobe = {
      addr: 0,
      flags: 0,
      nmissed: 0,
      opcode: 0,
      ainsn: {
        insn: 0,
        length: 0,
        copy: new Uint8Array(0),
        ifModifier: false,
        boostable: -1,
        fixup: ResumeFixup.Relocate,
      },
    }
    this.populateBlacklist()
    kernel.traps.registerDieNotifier(
      (val, regs, trapnr, cpu, err) => this.exceptionsNotify(val, regs, trapnr, cpu, err),
      KPROBES_NOTIFIER_PRIORITY,
    )
    kernel.taskDeadHooks.push((t) => this.kprobeFlushTask(t))
  }

  // ---------------------------------------------------------------- registration

  /** register_kprobe: 0 or a negative errno. */
  register_kprobe(p: Kprobe): number {
    const resolved = this.kprobeAddr(p)
    if ('err' in resolved) return resolved.err
    const addr = resolved.addr
    // Re-registering the same struct (it is already in the table) is a caller bug.
    if (this.isRegistered(p)) return -EINVAL
    p.flags = (p.flags ?? 0) & KPROBE_FLAG_DISABLED
    p.nmissed = 0
    const safe = this.checkAddressSafe(addr)
    if (safe !== 0) return safe
    const old = this.table.get(addr)
    if (old) return this.registerAggrKprobe(old, p as RegisteredKprobe)
    const prepared = this.prepareKprobe(p, addr)
    if (prepared !== 0) return prepared
    const rp = p as RegisteredKprobe
    this.table.set(addr, rp)
    if (!kprobeDisabled(rp) && !this.kprobesAllDisarmed) this.armKprobe(rp)
    return 0
  }

  /** unregister_kprobe: disarm, wait for every CPU to leave the handlers and the slot, free the slot. */
  unregister_kprobe(p: Kprobe): void {
    this.unregister_kprobes([p])
  }

  /** register_kprobes: all or nothing. */
  register_kprobes(kps: Kprobe[], num = kps.length): number {
    if (num <= 0) return -EINVAL
    for (let i = 0; i < num; i++) {
      const ret = this.register_kprobe(kps[i])
      if (ret < 0) {
        if (i > 0) this.unregister_kprobes(kps, i)
        return ret
      }
    }
    return 0
  }

  unregister_kprobes(kps: Kprobe[], num = kps.length): void {
    if (num <= 0) return
    const freeSlots: number[] = []
    for (let i = 0; i < num; i++) {
      const p = kps[i]
      // __unregister_kprobe_top: an invalid probe gets addr = NULL and is skipped.
      if (!this.isRegistered(p)) {
        p.addr = null
        continue
      }
      const rp = p as RegisteredKprobe
      const hashed = this.table.get(rp.addr) as RegisteredKprobe
      if (hashed === rp) {
        // Out of the table first: a probe it blocked may be optimized as it is disarmed.
        this.table.delete(rp.addr)
        if (!kprobeDisabled(rp)) this.disarmKprobe(rp, true)
        this.optimizer?.forgetKprobe(rp)
        freeSlots.push(rp.ainsn.insn)
      } else if (kprobeAggrprobe(hashed)) {
        hashed.list.splice(hashed.list.indexOf(rp), 1)
        if (hashed.list.length === 0) {
          // The last child: the aggregate (and the slot it shares) goes too.
          this.table.delete(rp.addr)
          if (!kprobeDisabled(hashed)) this.disarmKprobe(hashed, true)
          this.optimizer?.forgetKprobe(hashed)
          freeSlots.push(hashed.ainsn.insn)
        } else {
          // Others stay armed; only drop the post_handler fan-out if nobody needs it now.
          this.updateAggrPostHandler(hashed)
          this.tryToDisableAggrKprobe(hashed)
          // The one that left may have been what kept the aggregate from being optimized.
          if (!kprobeDisabled(hashed) && !this.kprobesAllDisarmed) this.optimizer?.optimizeKprobe(hashed)
        }
      }
    }
    if (freeSlots.length === 0) return
    // A CPU may still be in a handler or stepping a copy: wait for a grace period.
    this.kernel.services.synchronizeSched()
    for (const slot of freeSlots) this.slots.free(slot)
  }

  /** disable_kprobe: disarm but keep it registered (a child of an aggregate: only when all children are disabled). */
  disable_kprobe(p: Kprobe): number {
    if (!this.isRegistered(p)) return -EINVAL
    const rp = p as RegisteredKprobe
    if (kprobeDisabled(rp)) return 0
    rp.flags |= KPROBE_FLAG_DISABLED
    const hashed = this.table.get(rp.addr) as RegisteredKprobe
    if (hashed === rp) this.disarmKprobe(rp, true)
    else if (kprobeAggrprobe(hashed)) this.tryToDisableAggrKprobe(hashed)
    return 0
  }

  enable_kprobe(p: Kprobe): number {
    if (!this.isRegistered(p)) return -EINVAL
    const rp = p as RegisteredKprobe
    const hashed = this.table.get(rp.addr) as RegisteredKprobe
    // The aggregate (or the probe itself) is re-armed if it was disarmed.
    const rearm = kprobeDisabled(hashed)
    rp.flags &= ~KPROBE_FLAG_DISABLED
    if (rearm) {
      hashed.flags &= ~KPROBE_FLAG_DISABLED
      if (!this.kprobesAllDisarmed) this.armKprobe(hashed)
    }
    return 0
  }

  /** disable_jprobe / enable_jprobe, disable_kretprobe / enable_kretprobe: their kprobe's switch. */
  disable_jprobe(jp: Jprobe): number {
    return this.disable_kprobe(jp.kp)
  }

  enable_jprobe(jp: Jprobe): number {
    return this.enable_kprobe(jp.kp)
  }

  disable_kretprobe(rp: Kretprobe): number {
    return this.disable_kprobe(rp.kp)
  }

  enable_kretprobe(rp: Kretprobe): number {
    return this.enable_kprobe(rp.kp)
  }

  /** get_kprobe: the probe hashed at addr (the aggregate when several share the address). */
  get_kprobe(addr: number): RegisteredKprobe | undefined {
    return this.table.get(addr)
  }

  /** Every registered probe (children of aggregates individually, newest first), in address order. */
  probes(): RegisteredKprobe[] {
    return [...this.table.keys()]
      .sort((a, b) => a - b)
      .flatMap((a) => {
        const p = this.table.get(a) as RegisteredKprobe
        return kprobeAggrprobe(p) ? [...p.list] : [p]
      })
  }

  // ---------------------------------------------------------------- kretprobes

  /** register_kretprobe: 0 or a negative errno. */
  register_kretprobe(rp: Kretprobe): number {
    const r = this.resolveAddr(rp.kp)
    if ('err' in r) return r.err
    // Only a function entry has the return address at the top of the stack.
    const fn = this.kernel.kallsyms.functionAt(r.addr)
    if (!fn || fn.address !== r.addr) return -EINVAL
    // x86 kretprobe_blacklist: __switch_to returns on another task's stack.
    if (this.kernel.kallsyms.lookupName('__switch_to') === r.addr) return -EINVAL
    if ((rp.data_size ?? 0) > KRETPROBE_MAX_DATA_SIZE) return -E2BIG
    if (this.kretprobes.has(rp.kp)) return -EINVAL
    rp.kp.pre_handler = (_p, regs) => this.preHandlerKretprobe(rp, regs)
    rp.kp.post_handler = null
    // Non-preemptible kernel: one instance per CPU is enough unless the function sleeps or recurses.
    if (!rp.maxactive || rp.maxactive <= 0) rp.maxactive = this.kernel.machine.cpus.length
    const free: KretprobeInstance[] = []
    for (let i = 0; i < rp.maxactive; i++) {
      free.push({ ret_addr: 0, rp, task: null, data: new Uint8Array(rp.data_size ?? 0), fp: 0 })
    }
    rp.nmissed = 0
    this.registerTrampolineHandler()
    this.kretprobes.set(rp.kp, rp)
    this.kretprobePools.set(rp, { free })
    const ret = this.register_kprobe(rp.kp)
    if (ret !== 0) {
      this.kretprobes.delete(rp.kp)
      this.kretprobePools.delete(rp)
    }
    return ret
  }

  unregister_kretprobe(rp: Kretprobe): void {
    this.unregister_kretprobes([rp])
  }

  /** register_kretprobes: all or nothing. */
  register_kretprobes(rps: Kretprobe[], num = rps.length): number {
    if (num <= 0) return -EINVAL
    for (let i = 0; i < num; i++) {
      const ret = this.register_kretprobe(rps[i])
      if (ret < 0) {
        if (i > 0) this.unregister_kretprobes(rps, i)
        return ret
      }
    }
    return 0
  }

  /** Outstanding instances are detached: they still return to the right place, without the handler. */
  unregister_kretprobes(rps: Kretprobe[], num = rps.length): void {
    if (num <= 0) return
    this.unregister_kprobes(
      rps.slice(0, num).map((rp) => rp.kp),
      num,
    )
    for (const rp of rps.slice(0, num)) {
      if (!this.kretprobes.has(rp.kp)) continue
      this.kretprobes.delete(rp.kp)
      this.kretprobePools.delete(rp)
      for (const list of this.kretprobeInstTable.values())
        for (const ri of list) if (ri.rp === rp) ri.rp = null
    }
  }

  /** Is p the entry probe of a kretprobe (debugfs type "r")? */
  isKretprobe(p: Kprobe): boolean {
    return this.kretprobes.has(p)
  }

  /** pre_handler_kretprobe: take an instance, hijack the return address. Always 0: the entry insn is stepped. */
  private preHandlerKretprobe(rp: Kretprobe, regs: PtRegs): number {
    const pool = this.kretprobePools.get(rp)
    if (!pool) return 0
    const ri = pool.free.pop()
    if (!ri) {
      rp.nmissed = (rp.nmissed ?? 0) + 1
      return 0
    }
    const cpu = this.kernel.machine.cpus[this.handlerCpu]
    ri.rp = rp
    ri.task = this.kernel.current(cpu)
    ri.data.fill(0)
    let skip: boolean
    try {
      skip = rp.entry_handler != null && rp.entry_handler(ri, regs) !== 0
    } catch (e) {
      // An entry_handler that threw (an oops): the instance goes back, the return is not hooked.
      ri.task = null
      pool.free.push(ri)
      throw e
    }
    if (skip) {
      // Not traced this time; not a miss either.
      ri.task = null
      pool.free.push(ri)
      return 0
    }
    // arch_prepare_kretprobe: at entry sp points at the return address.
    const sp = regs.get('sp')
    ri.fp = sp
    ri.ret_addr = this.kernel.readKernel64(sp)
    this.writeKernel64(sp, this.trampolineAddr())
    // The task's list stays while the task lives (kprobe_flush_task drops it): none made per hit.
    let list = this.kretprobeInstTable.get(ri.task)
    if (list === undefined) {
      list = []
      this.kretprobeInstTable.set(ri.task, list)
    }
    list.unshift(ri)
    return 0
  }

  /**
   * kprobe_flush_task: a task that died inside probed functions (do_exit
   * never returns; a task killed while asleep is ended where it slept) gives
   * its instances back when its stack goes.
   */
  private kprobeFlushTask(task: Task): void {
    const list = this.kretprobeInstTable.get(task)
    if (!list) return
    for (const ri of list) this.recycleInstance(ri)
    this.kretprobeInstTable.delete(task)
  }

  private recycleInstance(ri: KretprobeInstance): void {
    const pool = ri.rp ? this.kretprobePools.get(ri.rp) : undefined
    ri.task = null
    if (pool) pool.free.push(ri)
  }

  private registerTrampolineHandler(): void {
    if (this.trampolineRegistered) return
    this.trampolineRegistered = true
    this.kernel.machine.registerHypercall(HC_KRETPROBE_TRAMPOLINE, (c) => {
      c.setLinear(0, this.trampolineHandler(c, c.getLinear(7)))
    })
  }

  /**
   * trampoline_handler (5.10): run the handlers of this task's instances for
   * this frame (newest first), recycle them, return the real return address.
   * `&regs->sp` is the hijacked slot, i.e. the fp recorded at entry.
   */
  private trampolineHandler(c: Cpu, regsAddr: number): number {
    const regs = this.kernel.frame(regsAddr)
    const fp = regsAddr + PT_REGS.sp
    const trampoline = this.trampolineAddr()
    // Instances belong to tasks (ri->task), each with its own kernel stack: a function that slept
    // in schedule() returns in its own task, whatever ran on this CPU meanwhile.
    const task = this.kernel.current(c)
    const list = this.kretprobeInstTable.get(task) ?? []
    // The common case, nothing allocated: the newest instance is this frame's, and it holds the real address.
    const newest = list.length > 0 ? list[0] : null
    if (newest !== null && newest.fp === fp && newest.ret_addr !== trampoline) {
      const correct = newest.ret_addr
      this.runTrampolineHandlers(c, regs, list, newest, 1, correct, trampoline)
      return correct
    }
    // This frame's instances, newest first.
    let mine = list.filter((ri) => ri.fp === fp)
    // None for this frame (one skipped by a longjmp-like exit): the innermost, as 5.10 does.
    if (mine.length === 0 && list.length > 0) mine = [list[0]]
    // The chronologically first instance of the frame holds the real address, later ones the trampoline.
    const real = mine.find((ri) => ri.ret_addr !== trampoline)
    if (!real) {
      const ri = mine[0]
      const rpAddr = ri?.rp?.kp.addr ?? 0
      this.kernel.printk.log(
        this.kernel.jiffies,
        `kretprobe BUG!: Processing kretprobe ${hex64(0)} @ ${hex64(rpAddr)}`,
      )
      throw new Error(
        `kretprobe BUG!: no kretprobe instance for ${task.comm} (pid ${task.pid}) at ${hex64(fp)}`,
      )
    }
    const correct = real.ret_addr
    this.runTrampolineHandlers(c, regs, list, mine, mine.length, correct, trampoline)
    return correct
  }

  /**
   * The trampoline's loop over this frame's instances (`count` of them from `mine`: an array, or
   * the one instance): each one's handler with the real return address in ri.ret_addr, then
   * recycled, up to the one that held that address.
   */
  private runTrampolineHandlers(
    c: Cpu,
    regs: PtRegs,
    list: KretprobeInstance[],
    mine: KretprobeInstance[] | KretprobeInstance,
    count: number,
    correct: number,
    trampoline: number,
  ): void {
    const kcb = this.get_kprobe_ctlblk(c.id)
    const saved = kcb.current
    this.kprobe_busy_begin(c.id)
    try {
      for (let k = 0; k < count; k++) {
        const ri = Array.isArray(mine) ? mine[k] : mine
        const orig = ri.ret_addr
        const rp = ri.rp
        if (rp?.handler) {
          kcb.current = rp.kp as RegisteredKprobe
          ri.ret_addr = correct
          this.callHandler(c.id, 'handler', rp.kp, regs, null, 0, ri)
          kcb.current = this.busyKprobe
        }
        list.splice(list.indexOf(ri), 1)
        this.recycleInstance(ri)
        if (orig !== trampoline) break
      }
    } finally {
      this.kprobe_busy_end(c.id)
      kcb.current = saved
    }
  }

  /** A word of kernel data (a stack slot): straight to memory, nothing allocated (it runs on every return). */
  private writeKernel64(addr: number, v: number): void {
    this.kernel.writeKernel64(addr, v)
  }

  /** kretprobe_trampoline's address, looked up once. */
  private trampolineAddr(): number {
    this.trampolineAddress ??= this.kernel.symbol('kretprobe_trampoline')
    return this.trampolineAddress
  }

  // ---------------------------------------------------------------- debugfs

  /**
   * debugfs kprobes/list: `<addr>  <type>  <sym>+0x<off>  <mod> <flags>` per
   * probe, children of an aggregate individually (flags OPTIMIZED/FTRACE from
   * the aggregate). Address order stands in for the hash-bucket walk.
   */
  debugfsList(): string {
    let out = ''
    for (const addr of [...this.table.keys()].sort((a, b) => a - b)) {
      const pp = this.table.get(addr) as RegisteredKprobe
      for (const p of kprobeAggrprobe(pp) ? pp.list : [pp]) {
        const type = this.kretprobes.has(p) ? 'r' : this.jprobes.has(p) ? 'j' : 'k'
        const fn = this.kernel.kallsyms.functionAt(addr)
        out += fn
          ? `${hex64(addr)}  ${type}  ${fn.name}+0x${(addr - fn.address).toString(16)}  ${' '} ` // no module: " "
          : `${hex64(addr)}  ${type}  ${this.kernel.kallsyms.format(addr)} `
        const gone = (p.flags & KPROBE_FLAG_GONE) !== 0
        out += gone ? '[GONE]' : ''
        out += kprobeDisabled(p) && !gone ? '[DISABLED]' : ''
        out += (pp.flags & KPROBE_FLAG_OPTIMIZED) !== 0 ? '[OPTIMIZED]' : ''
        out += (pp.flags & KPROBE_FLAG_FTRACE) !== 0 ? '[FTRACE]' : ''
        out += '\n'
      }
    }
    return out
  }

  /** debugfs kprobes/enabled, read: "1\n" or "0\n". */
  debugfsEnabledRead(): string {
    return this.kprobesAllDisarmed ? '0\n' : '1\n'
  }

  /** debugfs kprobes/enabled, write: a kstrtobool value; 0 or -EINVAL. */
  debugfsEnabledWrite(value: string): number {
    const c = value.trim().charAt(0)
    if ('1yY'.includes(c) && c !== '') this.arm_all_kprobes()
    else if ('0nN'.includes(c) && c !== '') this.disarm_all_kprobes()
    else if (/^on$/i.test(value.trim())) this.arm_all_kprobes()
    else if (/^off$/i.test(value.trim())) this.disarm_all_kprobes()
    else return -EINVAL
    return 0
  }

  /** arm_all_kprobes: re-arm every hashed probe that is not itself disabled. */
  arm_all_kprobes(): void {
    if (!this.kprobesAllDisarmed) return
    this.kprobesAllDisarmed = false
    for (const p of this.table.values()) if (!kprobeDisabled(p)) this.armKprobe(p)
    this.kernel.printk.log(this.kernel.jiffies, 'Kprobes globally enabled')
  }

  /** disarm_all_kprobes: original bytes back everywhere; DISABLED flags are left alone. */
  disarm_all_kprobes(): void {
    if (this.kprobesAllDisarmed) return
    this.kprobesAllDisarmed = true
    for (const p of this.table.values()) if (!kprobeDisabled(p)) this.disarmKprobe(p, false)
    this.kernel.printk.log(this.kernel.jiffies, 'Kprobes globally disabled')
  }

  // ---------------------------------------------------------------- jprobes

  /** register_jprobe: 0 or a negative errno (-EEXIST for a second jprobe at one address). */
  register_jprobe(jp: Jprobe): number {
    if (typeof jp.entry !== 'function' || this.jprobes.has(jp.kp)) return -EINVAL
    jp.kp.pre_handler = (_p, regs) => this.setjmpPreHandler(jp, regs)
    jp.kp.break_handler = (_p, regs) => this.longjmpBreakHandler(regs)
    this.registerJprobeEntry()
    this.jprobes.set(jp.kp, jp)
    const ret = this.register_kprobe(jp.kp)
    if (ret !== 0) this.jprobes.delete(jp.kp)
    return ret
  }

  register_jprobes(jps: Jprobe[], num = jps.length): number {
    if (num <= 0) return -EINVAL
    for (let i = 0; i < num; i++) {
      const ret = this.register_jprobe(jps[i])
      if (ret < 0) {
        if (i > 0) this.unregister_jprobes(jps, i)
        return ret
      }
    }
    return 0
  }

  unregister_jprobe(jp: Jprobe): void {
    this.unregister_jprobes([jp])
  }

  unregister_jprobes(jps: Jprobe[], num = jps.length): void {
    if (num <= 0) return
    this.unregister_kprobes(
      jps.slice(0, num).map((jp) => jp.kp),
      num,
    )
    for (const jp of jps.slice(0, num)) this.jprobes.delete(jp.kp)
  }

  isJprobe(p: Kprobe): boolean {
    return this.jprobes.has(p)
  }

  /** The jprobe part of this CPU's kprobe_ctlblk. */
  private jprobeCtlblk(cpu: number): JprobeCtlblk {
    let ctl = this.jprobeCtlblks.get(cpu)
    if (!ctl) {
      ctl = {
        jp: null,
        savedRegs: new Uint8Array(PT_REGS_SIZE),
        savedSp: 0,
        stack: new Uint8Array(MAX_STACK_SIZE),
        stackSize: 0,
        regs: null,
      }
      this.jprobeCtlblks.set(cpu, ctl)
    }
    return ctl
  }

  /**
   * setjmp_pre_handler: save pt_regs, the stack pointer and MIN_STACK_SIZE(sp)
   * bytes of stack, clear IF and send the CPU to jprobe_entry_stub instead of
   * the function (1: no single-step now; current_kprobe stays set, HIT_ACTIVE,
   * until jprobe_return's int3 reaches longjmp_break_handler).
   */
  private setjmpPreHandler(jp: Jprobe, regs: PtRegs): number {
    const cpu = this.handlerCpu
    const ctl = this.jprobeCtlblk(cpu)
    regs.save(ctl.savedRegs)
    const sp = regs.get('sp')
    ctl.savedSp = sp
    const top = this.kernel.readKernel64(this.kernel.sched.rq[cpu].percpu + PERCPU_TOP_OF_STACK)
    ctl.stackSize = MIN_STACK_SIZE(sp, top)
    ctl.stack.set(this.kernel.readKernel(sp, ctl.stackSize))
    regs.set('flags', regs.get('flags') & ~X86_EFLAGS_IF)
    regs.set('ip', this.kernel.symbol('jprobe_entry_stub'))
    ctl.jp = jp
    return 1
  }

  /** HC_JPROBE_ENTRY (jprobe_call_entry, called by jprobe_entry_stub): registered with the first jprobe. */
  private registerJprobeEntry(): void {
    if (this.jprobeEntryRegistered) return
    this.jprobeEntryRegistered = true
    this.kernel.machine.registerHypercall(HC_JPROBE_ENTRY, (c) => {
      c.setLinear(0, this.jprobeEntry(c.id, c.getLinear(7)))
    })
  }

  /**
   * The stub's hypercall: run the entry of the jprobe this CPU's setjmp sent here, with the probed
   * function's arguments from the stub's pt_regs (and the stack above its return address); returns
   * the saved sp, which jprobe_return puts back in rsp before its int3.
   */
  private jprobeEntry(cpu: number, regsAddr: number): number {
    const ctl = this.jprobeCtlblk(cpu)
    const jp = ctl.jp
    if (!jp) throw new Error(`jprobe_entry_stub on CPU ${cpu} with no jprobe running`)
    const regs = this.kernel.frame(regsAddr)
    const sp = regs.get('sp')
    const args = jprobeArguments(
      jp.entry.length,
      (r) => regs.get(r),
      (i) => this.kernel.readKernel64(sp + 8 * (i + 1)),
    )
    const outer = ctl.regs
    ctl.regs = regs
    try {
      this.callHandler(cpu, 'entry', jp.kp, regs, jp.kp, 0, null, () => {
        try {
          jp.entry(...args)
        } catch (e) {
          // jprobe_return(): the entry ends there.
          if (!(e instanceof JprobeReturn)) throw e
        }
      })
    } finally {
      ctl.regs = outer
    }
    return ctl.savedSp
  }

  /**
   * Inside a jprobe entry: the pt_regs jprobe_entry_stub built - the probed
   * function's registers at its first instruction, with ip = jprobe_entry_stub
   * (a stackTrace/dump_stack from them starts at the stub, then the function's
   * caller). The stub loads them back before jprobe_return: an entry that
   * writes them changes the CPU's registers, until longjmp_break_handler puts
   * the saved ones back.
   */
  jprobe_regs(): PtRegs {
    const regs = this.handlerCpu < 0 ? null : this.jprobeCtlblk(this.handlerCpu).regs
    if (!regs) throw new Error('jprobe_regs: only from inside a jprobe entry')
    return regs
  }

  /**
   * longjmp_break_handler: the int3 between jprobe_return and
   * jprobe_return_end, with rsp back at the saved sp (else BUG, as Linux).
   * Restores pt_regs and the saved stack bytes; 1 = the probed instruction is
   * now stepped as after a pre_handler that returned 0.
   */
  private longjmpBreakHandler(regs: PtRegs): number {
    const ctl = this.jprobeCtlblk(this.handlerCpu)
    const addr = regs.get('ip') - 1
    const start = this.kernel.symbol('jprobe_return')
    const end = this.kernel.symbol('jprobe_return_end')
    if (!ctl.jp || addr <= start || addr >= end) return 0
    const sp = regs.get('sp')
    if (sp !== ctl.savedSp) {
      const log = (line: string) => this.kernel.printk.log(this.kernel.jiffies, line)
      log(`current sp ${hex64(sp)} does not match saved sp ${hex64(ctl.savedSp)}`)
      log(`Saved registers for jprobe at ${this.kernel.kallsyms.format(ctl.jp.kp.addr ?? 0)}`)
      throw new Error(`kernel BUG: jprobe sp mismatch (${hex64(sp)} != ${hex64(ctl.savedSp)})`)
    }
    regs.load(ctl.savedRegs)
    this.kernel.writeKernel(ctl.savedSp, ctl.stack.subarray(0, ctl.stackSize))
    ctl.jp = null
    return 1
  }

  /** aggr_break_handler: the break goes to the child whose setjmp ran (kprobe_instance). */
  private aggrBreakHandler(regs: PtRegs): number {
    const cur = this.jprobeCtlblk(this.handlerCpu).jp?.kp
    return cur?.break_handler ? cur.break_handler(cur, regs) : 0
  }

  /**
   * Can p's address be jump-optimized? Not with a post_handler (it needs the
   * single-step) nor a jprobe (it needs the break path), on any child.
   */
  kprobeOptimizable(p: RegisteredKprobe): boolean {
    const all = kprobeAggrprobe(p) ? p.list : [p]
    return !all.some((c) => c.post_handler || c.break_handler || this.jprobes.has(c))
  }

  // ---------------------------------------------------------------- aggregate probes

  /** register_aggr_kprobe: p joins the probe(s) already at its address. */
  private registerAggrKprobe(orig: RegisteredKprobe, p: RegisteredKprobe): number {
    let ap: AggrKprobe
    if (kprobeAggrprobe(orig)) ap = orig
    else {
      // The aggregate takes orig's place: orig stops being optimized first (the aggregate may be later).
      if (this.optimizer) {
        this.optimizer.unoptimizeKprobe(orig, true)
        this.optimizer.forgetKprobe(orig)
      }
      ap = this.allocAggrKprobe(orig)
      this.table.set(orig.addr, ap)
    }
    // The new probe shares the aggregate's copy (one slot per address).
    p.opcode = ap.opcode
    p.ainsn = ap.ainsn
    const ret = this.addNewKprobe(ap, p)
    if (ret !== 0) return ret
    if (kprobeDisabled(ap) && !kprobeDisabled(p)) {
      ap.flags &= ~KPROBE_FLAG_DISABLED
      if (!this.kprobesAllDisarmed) this.armKprobe(ap)
    } else if (!kprobeDisabled(ap) && !this.kprobesAllDisarmed) {
      // A post_handler or a jprobe needs the single-step: back to int3. Otherwise optimize the aggregate.
      if (!this.kprobeOptimizable(ap)) this.optimizer?.unoptimizeKprobe(ap, true)
      else this.optimizer?.optimizeKprobe(ap)
    }
    return 0
  }

  /** alloc_aggr_kprobe + init_aggr_kprobe: takes orig's place in the table, orig becomes its only child. */
  private allocAggrKprobe(orig: RegisteredKprobe): AggrKprobe {
    const ap: AggrKprobe = {
      addr: orig.addr,
      flags: orig.flags & ~KPROBE_FLAG_OPTIMIZED,
      nmissed: 0,
      opcode: orig.opcode,
      ainsn: orig.ainsn,
      list: [orig],
      pre_handler: (_p, regs) => this.aggrPreHandler(ap, regs),
      post_handler: null,
      fault_handler: (_p, regs, trapnr) => this.aggrFaultHandler(ap, regs, trapnr),
    }
    this.updateAggrPostHandler(ap)
    return ap
  }

  /** add_new_kprobe: at the head of the list (newest runs first); a jprobe at the tail, one per address. */
  private addNewKprobe(ap: AggrKprobe, p: RegisteredKprobe): number {
    if (this.jprobes.has(p)) {
      if (ap.list.some((c) => this.jprobes.has(c))) return -EEXIST
      ap.list.push(p)
    } else ap.list.unshift(p)
    this.updateAggrPostHandler(ap)
    return 0
  }

  /** ap->post_handler is set only while some child has one (it decides whether post runs at all). */
  private updateAggrPostHandler(ap: AggrKprobe): void {
    ap.post_handler = ap.list.some((c) => c.post_handler)
      ? (_p, regs, flags) => this.aggrPostHandler(ap, regs, flags)
      : null
    // ap->break_handler once a jprobe is a child (aggr_break_handler). It stays when the jprobe
    // leaves: a CPU may still be in its entry, and its jprobe_return int3 comes during unregister's
    // grace period; aggr_break_handler acts only for the jprobe whose setjmp ran on that CPU.
    if (ap.list.some((c) => c.break_handler)) ap.break_handler = (_p, regs) => this.aggrBreakHandler(regs)
  }

  /** The aggregate is disarmed only when every child is disabled. */
  private tryToDisableAggrKprobe(ap: AggrKprobe): void {
    if (kprobeDisabled(ap) || !ap.list.every(kprobeDisabled)) return
    ap.flags |= KPROBE_FLAG_DISABLED
    this.disarmKprobe(ap, true)
  }

  /** aggr_pre_handler: newest first, disabled children skipped; the first non-zero return ends the chain. */
  private aggrPreHandler(ap: AggrKprobe, regs: PtRegs): number {
    for (const kp of [...ap.list]) {
      if (kprobeDisabled(kp) || !kp.pre_handler) continue
      this.kprobeInstance = kp
      if (kp.pre_handler(kp, regs) !== 0) return 1
    }
    return 0
  }

  /** aggr_post_handler: every enabled child's post_handler, same order. */
  private aggrPostHandler(ap: AggrKprobe, regs: PtRegs, flags: number): void {
    for (const kp of [...ap.list]) {
      if (kprobeDisabled(kp) || !kp.post_handler) continue
      this.kprobeInstance = kp
      kp.post_handler(kp, regs, flags)
    }
  }

  /**
   * Fault while stepping an aggregate's copy: each enabled child's fault_handler
   * in list order until one returns non-zero, as the seeds say a fault during the
   * single-step reaches fault_handler. (A fault inside a child's handler goes to
   * that child alone - kprobe_instance - in handlerFault.)
   */
  private aggrFaultHandler(ap: AggrKprobe, regs: PtRegs, trapnr: number): number {
    for (const kp of [...ap.list]) {
      if (kprobeDisabled(kp) || !kp.fault_handler) continue
      this.kprobeInstance = kp
      if (kp.fault_handler(kp, regs, trapnr) !== 0) return 1
    }
    return 0
  }

  /** kprobes_inc_nmissed_count: an aggregate counts the miss on every child. */
  private incNmissed(p: RegisteredKprobe): void {
    if (kprobeAggrprobe(p)) for (const c of p.list) c.nmissed++
    else p.nmissed++
  }

  /**
   * __arm_kprobe: an optimized probe whose region p falls in goes back to int3 first (its jump covers
   * p's byte), then p's int3, then p may itself be optimized.
   */
  private armKprobe(p: RegisteredKprobe): void {
    const covering = this.optimizer?.coveringKprobe(p.addr)
    if (covering) this.optimizer?.unoptimizeKprobe(covering, true)
    archArmKprobe(this.kernel, p)
    this.optimizer?.optimizeKprobe(p)
  }

  /** __disarm_kprobe: p's jump (if any) and int3 go; a probe p was blocking may be optimized (reopt). */
  private disarmKprobe(p: RegisteredKprobe, reopt: boolean): void {
    this.optimizer?.unoptimizeKprobe(p, true)
    archDisarmKprobe(this.kernel, p)
    const covering = this.optimizer?.coveringKprobe(p.addr)
    if (covering && reopt) this.optimizer?.optimizeKprobe(covering)
  }

  /**
   * optimized_callback's core, called from a detour buffer (no int3, no step): p's pre_handler with
   * the buffer's pt_regs, unless this CPU is already handling a probe (then it is missed).
   */
  optimizedCallback(p: RegisteredKprobe, regs: PtRegs, cpu: number): void {
    const kcb = this.get_kprobe_ctlblk(cpu)
    if (kcb.current) {
      this.incNmissed(p)
      return
    }
    kcb.current = p
    kcb.kprobe_status = KPROBE_HIT_ACTIVE
    try {
      if (p.pre_handler) this.callHandler(cpu, 'pre_handler', p, regs, p)
    } finally {
      kcb.current = null
    }
  }

  // ---------------------------------------------------------------- per-CPU state

  get_kprobe_ctlblk(cpu: number): KprobeCtlblk {
    let kcb = this.ctlblks.get(cpu)
    if (!kcb) {
      kcb = {
        current: null,
        kprobe_status: 0,
        kprobe_old_flags: 0,
        kprobe_saved_flags: 0,
        prev_kprobe: { kp: null, status: 0, oldFlags: 0, savedFlags: 0 },
      }
      this.ctlblks.set(cpu, kcb)
    }
    return kcb
  }

  /** kprobe_running: the probe being handled on this CPU, or null. */
  kprobe_running(cpu: number): RegisteredKprobe | null {
    return this.get_kprobe_ctlblk(cpu).current
  }

  /** smp_processor_id() as seen from inside a handler (-1 outside). */
  smp_processor_id(): number {
    return this.handlerCpu
  }

  /** kprobe_busy_begin: any probe hit on this CPU now counts as missed (used around host-run probe work). */
  kprobe_busy_begin(cpu: number): void {
    const kcb = this.get_kprobe_ctlblk(cpu)
    kcb.current = this.busyKprobe
    kcb.kprobe_status = KPROBE_HIT_ACTIVE
  }

  kprobe_busy_end(cpu: number): void {
    const kcb = this.get_kprobe_ctlblk(cpu)
    if (kcb.current === this.busyKprobe) kcb.current = null
  }

  // ---------------------------------------------------------------- checks

  private isRegistered(p: Kprobe): boolean {
    if (p.addr === undefined || p.addr === null) return false
    const hashed = this.table.get(p.addr)
    if (!hashed) return false
    if (hashed === p) return !kprobeAggrprobe(p)
    return kprobeAggrprobe(hashed) && hashed.list.includes(p as RegisteredKprobe)
  }

  /** _kprobe_addr: addr, or symbol_name + offset through kallsyms. */
  private kprobeAddr(p: Kprobe): { addr: number } | { err: number } {
    const r = this.resolveAddr(p)
    if ('addr' in r) p.addr = r.addr
    return r
  }

  /** _kprobe_addr without writing p.addr (register_kretprobe checks before register_kprobe). */
  private resolveAddr(p: Kprobe): { addr: number } | { err: number } {
    const hasAddr = p.addr !== undefined && p.addr !== null
    const hasSym = p.symbol_name !== undefined && p.symbol_name !== null
    if (hasAddr === hasSym) return { err: -EINVAL }
    if (hasSym) {
      const base = this.kernel.kallsyms.lookupName(p.symbol_name as string)
      if (base === undefined) return { err: -ENOENT }
      return { addr: base + (p.offset ?? 0) }
    }
    return { addr: p.addr as number }
  }

  /** check_kprobe_address_safe: kernel text only, never the blacklist. */
  private checkAddressSafe(addr: number): number {
    const img = this.kernel.image
    if (addr < img.textStart || addr >= img.textEnd) return -EINVAL
    if (this.within_kprobe_blacklist(addr)) return -EINVAL
    return 0
  }

  within_kprobe_blacklist(addr: number): boolean {
    return this.blacklist.some(([s, e]) => addr >= s && addr < e)
  }

  /** The blacklist as debugfs shows it: [start, end) ranges. */
  kprobeBlacklist(): readonly (readonly [number, number])[] {
    return this.blacklist
  }

  private populateBlacklist(): void {
    const ks = this.kernel.kallsyms
    for (const a of this.kernel.image.blacklist) {
      const fn = ks.functionAt(a)
      this.blacklist.push([a, a + Math.max(fn && fn.address === a ? fn.size : 1, 1)])
    }
    for (const [s, e] of [
      ['__entry_text_start', '__entry_text_end'],
      ['__kprobes_text_start', '__kprobes_text_end'],
    ]) {
      const start = ks.lookupName(s)
      const end = ks.lookupName(e)
      if (start !== undefined && end !== undefined) this.blacklist.push([start, end])
    }
  }

  /** prepare_kprobe → arch_prepare_kprobe: boundary check, slot, copy. */
  private prepareKprobe(p: Kprobe, addr: number): number {
    const probeAt = (a: number) => this.get_kprobe(a)
    const recover = (a: number, buf: Uint8Array) => this.optimizer?.recoverBytes(a, buf)
    if (!canProbe(this.kernel, addr, probeAt, recover)) return -EILSEQ
    const slot = this.slots.get()
    const ainsn = archCopyKprobe(this.kernel, addr, slot, probeAt, recover)
    if (typeof ainsn === 'number') {
      this.slots.free(slot)
      return ainsn
    }
    this.slots.write(slot, ainsn.copy)
    p.ainsn = ainsn
    p.opcode = ainsn.copy[0]
    return 0
  }

  // ---------------------------------------------------------------- the hit path

  /** kprobe_exceptions_notify. */
  private exceptionsNotify(val: number, regsAddr: number, trapnr: number, cpu: Cpu, err: number): number {
    const regs = this.kernel.frame(regsAddr)
    // Only kernel-mode exceptions can be ours (kprobes never probe user code).
    if ((regs.get('cs') & 3) !== 0) return NOTIFY_DONE
    switch (val) {
      case DIE_INT3:
        return this.int3Handler(regs, cpu.id) ? NOTIFY_STOP : NOTIFY_DONE
      case DIE_DEBUG: {
        const dr6 = err
        if ((dr6 & DR6_BS) === 0) return NOTIFY_DONE
        return this.debugHandler(regs, cpu.id) ? NOTIFY_STOP : NOTIFY_DONE
      }
      case DIE_GPF:
      case DIE_PAGE_FAULT:
        return this.faultHandler(regs, trapnr, cpu.id) ? NOTIFY_STOP : NOTIFY_DONE
      default:
        return NOTIFY_DONE
    }
  }

  /** kprobe_int3_handler: true when the int3 was ours. */
  private int3Handler(regs: PtRegs, cpu: number): boolean {
    const addr = regs.get('ip') - 1
    const kcb = this.get_kprobe_ctlblk(cpu)
    const p = this.get_kprobe(addr)
    if (!p) {
      // The probe was removed between the int3 and now: run the restored instruction.
      if (readText(this.kernel, addr, 1)[0] !== BREAKPOINT_INSTRUCTION) {
        regs.set('ip', addr)
        return true
      }
      // No probe, a probe running (Linux <= 4.14): jprobe_return's int3 goes to its break_handler,
      // which puts the probed function's context back; its first instruction then runs as usual.
      const cur = kcb.current
      if (cur?.break_handler && this.callHandler(cpu, 'break_handler', cur, regs) !== 0) {
        this.setupSingleStep(cur, regs, kcb, false)
        return true
      }
      return false
    }
    if (kcb.current) {
      // reenter_kprobe: a probe hit while this CPU handles another — count it, step it, no handlers.
      if (kcb.kprobe_status === KPROBE_REENTER) {
        // Hit again on the way to or from a reentered step (a probe on the int3/debug path): going on
        // would reenter for ever. Linux: pr_err, dump_kprobe(p), BUG() - an oops, the machine stops.
        const where = this.kernel.kallsyms.format(addr)
        regs.set('ip', addr)
        oops(this.kernel, {
          bug: [
            'Unrecoverable kprobe detected.',
            'Dumping kprobe:',
            `Name: ${p.symbol_name ?? '(null)'}`,
            `Offset: ${(p.offset ?? 0).toString(16)}`,
            `Address: ${where}`,
            'kernel BUG at arch/x86/kernel/kprobes/core.c (reenter_kprobe)!',
          ],
          die: { str: 'invalid opcode', err: 0 },
          cpu,
          regs,
          trace: guestCallTrace(this.kernel, regs),
          detail: `Unrecoverable kprobe detected at ${where}`,
        })
        return true
      }
      this.incNmissed(p)
      this.setupSingleStep(p, regs, kcb, true)
      return true
    }
    this.setCurrentKprobe(p, regs, kcb)
    kcb.kprobe_status = KPROBE_HIT_ACTIVE
    if (p.pre_handler && this.callHandler(cpu, 'pre_handler', p, regs, p) !== 0) {
      // The handler redirected execution: no single-step, no post_handler. A jprobe's setjmp keeps
      // current_kprobe for its break_handler.
      if (!this.jprobeCtlblks.get(cpu)?.jp) kcb.current = null
      return true
    }
    // setup_detour_execution: a probe queued for optimization runs its buffer's copy of the region.
    const detour = this.optimizer?.detourAddress(p) ?? null
    if (detour !== null) {
      kcb.current = null
      regs.set('ip', detour)
      return true
    }
    this.setupSingleStep(p, regs, kcb, false)
    return true
  }

  /** set_current_kprobe: remember TF|IF of the interrupted context. */
  private setCurrentKprobe(p: RegisteredKprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
    kcb.current = p
    kcb.kprobe_old_flags = regs.get('flags') & (X86_EFLAGS_TF | X86_EFLAGS_IF)
    kcb.kprobe_saved_flags = kcb.kprobe_old_flags
    if (p.ainsn.ifModifier) kcb.kprobe_saved_flags &= ~X86_EFLAGS_IF
  }

  /** setup_singlestep: run the copy in the slot for exactly one instruction (TF), interrupts off. */
  private setupSingleStep(p: RegisteredKprobe, regs: PtRegs, kcb: KprobeCtlblk, reenter: boolean): void {
    // Boost (non-preemptible kernel): run the copy and its jmp back directly, no trap; not with a post_handler.
    if (this.boost && p.ainsn.boostable === 1 && !p.post_handler) {
      // A reentered boosted probe neither resets nor sets current_kprobe: it does not single-step.
      if (!reenter) kcb.current = null
      regs.set('ip', p.ainsn.insn)
      return
    }
    if (reenter) {
      kcb.prev_kprobe = {
        kp: kcb.current,
        status: kcb.kprobe_status,
        oldFlags: kcb.kprobe_old_flags,
        savedFlags: kcb.kprobe_saved_flags,
      }
      this.setCurrentKprobe(p, regs, kcb)
      kcb.kprobe_status = KPROBE_REENTER
    } else {
      kcb.kprobe_status = KPROBE_HIT_SS
    }
    regs.set('flags', (regs.get('flags') | X86_EFLAGS_TF) & ~X86_EFLAGS_IF)
    regs.set('ip', p.ainsn.insn)
  }

  private restorePreviousKprobe(kcb: KprobeCtlblk): void {
    kcb.current = kcb.prev_kprobe.kp
    kcb.kprobe_status = kcb.prev_kprobe.status
    kcb.kprobe_old_flags = kcb.prev_kprobe.oldFlags
    kcb.kprobe_saved_flags = kcb.prev_kprobe.savedFlags
    kcb.prev_kprobe = { kp: null, status: 0, oldFlags: 0, savedFlags: 0 }
  }

  /** kprobe_debug_handler: the single-step of the copy finished. */
  private debugHandler(regs: PtRegs, cpu: number): boolean {
    const kcb = this.get_kprobe_ctlblk(cpu)
    const cur = kcb.current
    if (!cur || (kcb.kprobe_status !== KPROBE_HIT_SS && kcb.kprobe_status !== KPROBE_REENTER)) return false
    resumeExecution(this.kernel, cur, regs, kcb)
    regs.set('flags', regs.get('flags') | kcb.kprobe_saved_flags)
    if (kcb.kprobe_status !== KPROBE_REENTER && cur.post_handler) {
      kcb.kprobe_status = KPROBE_HIT_SSDONE
      this.callHandler(cpu, 'post_handler', cur, regs, cur)
    }
    if (kcb.kprobe_status === KPROBE_REENTER) this.restorePreviousKprobe(kcb)
    else kcb.current = null
    // TF still set: somebody else (a debugger) is single-stepping this code too.
    return (regs.get('flags') & X86_EFLAGS_TF) === 0
  }

  /** kprobe_fault_handler: the single-stepped copy faulted (#GP/#PF). */
  private faultHandler(regs: PtRegs, trapnr: number, cpu: number): boolean {
    const kcb = this.get_kprobe_ctlblk(cpu)
    const cur = kcb.current
    if (!cur || (kcb.kprobe_status !== KPROBE_HIT_SS && kcb.kprobe_status !== KPROBE_REENTER)) return false
    const ip = regs.get('ip')
    if (ip < cur.ainsn.insn || ip >= cur.ainsn.insn + MAX_INSN_SIZE) return false
    const handled =
      kcb.kprobe_status === KPROBE_HIT_SS &&
      cur.fault_handler != null &&
      this.callHandler(cpu, 'fault_handler', cur, regs, null, trapnr) !== 0
    // Either way the step is over: put ip back on the original instruction (where the fault
    // handler or the exception table expects it) and restore the interrupted flags.
    const nowIp = regs.get('ip')
    if (nowIp >= cur.ainsn.insn && nowIp < cur.ainsn.insn + MAX_INSN_SIZE) {
      regs.set('ip', cur.addr + (nowIp - cur.ainsn.insn))
    }
    regs.set('flags', (regs.get('flags') & ~X86_EFLAGS_TF) | kcb.kprobe_old_flags)
    if (kcb.kprobe_status === KPROBE_REENTER) this.restorePreviousKprobe(kcb)
    else kcb.current = null
    return handled
  }

  /**
   * Run one of probe's handlers (kind) with regs on behalf of CPU `cpu`: a kretprobe's handler for
   * instance ri, a fault_handler with trapnr, a jprobe's entry through `entry`. Nothing is allocated
   * per call (this is every hit). `instance` is the probe whose fault_handler answers for faults in
   * it (null: nobody - a fault there oopses, as in Linux). A handler that throws is an oops
   * (handlerOops): it returned 0, and the machine stops after this trap.
   */
  private callHandler(
    cpu: number,
    kind: HandlerKind,
    probe: Kprobe,
    regs: PtRegs,
    instance: Kprobe | null = null,
    trapnr = 0,
    ri: KretprobeInstance | null = null,
    entry: (() => void) | null = null,
  ): number {
    // After an oops no more handlers run (the rest of an aggregate's or a trampoline's, in this trap).
    if (kernelOopsed(this.kernel)) return 0
    const outerCpu = this.handlerCpu
    const outerInstance = this.kprobeInstance
    const outerRegs = this.handlerRegs
    this.handlerCpu = cpu
    this.kprobeInstance = instance
    // The probed context's registers, for a fault in a handler that has a probe to answer for it.
    this.handlerRegs = instance === null ? null : regs
    // Handlers run with preemption off: whatever may sleep refuses (in_atomic()).
    this.kernel.preemptCount++
    try {
      switch (kind) {
        case 'pre_handler':
          return probe.pre_handler?.(probe, regs) ?? 0
        case 'post_handler':
          probe.post_handler?.(probe, regs, 0)
          return 0
        case 'fault_handler':
          return probe.fault_handler?.(probe, regs, trapnr) ?? 0
        case 'break_handler':
          return probe.break_handler?.(probe, regs) ?? 0
        case 'handler':
          return (ri !== null ? ri.rp?.handler?.(ri, regs) : 0) ?? 0
        default:
          entry?.()
          return 0
      }
    } catch (e) {
      // A faulted handler ends where it faulted; it returned nothing (after an oops the machine is stopping).
      if (e instanceof HandlerFaulted) return 0
      // The caller goes on as after a 0 (its state stays whole: the step set up, the instance recycled).
      this.handlerOops(cpu, { kind, probe, regs }, e)
      return 0
    } finally {
      this.kernel.preemptCount--
      this.handlerCpu = outerCpu
      this.kprobeInstance = outerInstance
      this.handlerRegs = outerRegs
    }
  }

  /**
   * A handler threw: the kernel's report of a module that oopsed in it - the probe, which of its
   * functions (and that function's name), the registers of the probed context, the JavaScript stack.
   * The probe stays registered and armed (Linux disables nothing); the machine has stopped for good,
   * and unregistering it still puts the original bytes back.
   */
  private handlerOops(cpu: number, site: HandlerSite, e: unknown): void {
    // An aggregate's child, or the probe whose pre/post/fault handler ran.
    const p =
      site.kind.endsWith('_handler') && site.kind !== 'break_handler'
        ? (this.kprobeInstance ?? site.probe)
        : site.probe
    const rp = p ? this.kretprobes.get(p) : undefined
    const jp = p ? this.jprobes.get(p) : undefined
    let what = `${rp ? 'kretprobe' : jp ? 'jprobe' : 'kprobe'} ${site.kind}`
    let fn: unknown
    if (rp && site.kind === 'pre_handler') {
      what = 'kretprobe entry_handler'
      fn = rp.entry_handler
    } else if (rp && site.kind === 'handler') fn = rp.handler
    else if (jp && site.kind === 'entry') fn = jp.entry
    else if (p && site.kind !== 'handler' && site.kind !== 'entry') fn = p[site.kind]
    const addr = p?.addr
    const at = addr != null ? `${this.kernel.kallsyms.format(addr)} [at ${formatLinear(addr)}]` : 'a probe'
    // Its own name, not the field's (an arrow function in an object literal is named after the field).
    const name = typeof fn === 'function' && fn.name && !what.endsWith(` ${fn.name}`) ? fn.name : null
    oops(this.kernel, {
      bug: [`BUG: ${what} for ${at} raised ${describeException(e)}`],
      info: name ? [`Handler: ${name}`] : [],
      cpu,
      regs: site.regs,
      error: e,
    })
  }

  // ---------------------------------------------------------------- memory from handlers

  /**
   * A handler's load from guest memory (`*(u64 *)addr`): a real access through
   * the hit CPU's MMU and page tables, in kernel mode. Only inside a handler.
   * A fault goes to kprobe_fault_handler as a fault in a C handler would.
   */
  peek(addr: number, size: 1 | 2 | 4 | 8 = 8): number {
    return this.handlerAccess((c) => {
      switch (size) {
        case 1:
          return c.read8(addr)
        case 2:
          return c.read16(addr)
        case 4:
          return c.read32(addr) >>> 0
        default: {
          // As pt_regs values: signed high half, so kernel pointers stay exact.
          const lo = c.read64(addr)
          return c.th * 0x1_0000_0000 + (lo >>> 0)
        }
      }
    })
  }

  /** A handler's store to guest memory (`*(u64 *)addr = value`), through the MMU like peek. */
  poke(addr: number, value: number, size: 1 | 2 | 4 | 8 = 8): void {
    this.handlerAccess((c) => {
      if (size === 1) c.write8(addr, value)
      else if (size === 2) c.write16(addr, value)
      else if (size === 4) c.write32(addr, value | 0)
      else c.write64(addr, value | 0, Math.floor(value / 0x1_0000_0000) | 0)
      return 0
    })
  }

  private handlerAccess(access: (c: Cpu) => number): number {
    const cpu = this.handlerCpu
    if (cpu < 0) throw new Error('peek/poke: only from inside a probe handler')
    const c = this.kernel.machine.cpus[cpu]
    try {
      return access(c)
    } catch (e) {
      if (!(e instanceof CpuFault)) throw e
      throw this.handlerFault(c, e)
    }
  }

  /**
   * kprobe_fault_handler, HIT_ACTIVE/HIT_SSDONE (a fault inside a pre or post
   * handler): count a miss, offer the fault to the running probe's fault_handler;
   * non-zero means handled and the handler ends there. Otherwise there is no
   * exception-table fixup for handler code: the kernel oopses - logged, and the
   * machine stops with the oops as its error.
   */
  private handlerFault(c: Cpu, fault: CpuFault): HandlerFaulted {
    const trapnr = fault.vector
    if (trapnr === Vector.PF) c.cr2 = fault.address
    const kcb = this.get_kprobe_ctlblk(c.id)
    const cur = kcb.current
    const inHandler = kcb.kprobe_status === KPROBE_HIT_ACTIVE || kcb.kprobe_status === KPROBE_HIT_SSDONE
    const instance = this.kprobeInstance
    const regs = this.handlerRegs
    if (cur && inHandler && instance && regs) {
      this.incNmissed(cur)
      if (instance.fault_handler) {
        let handled: number
        try {
          handled = instance.fault_handler(instance, regs, trapnr)
        } catch (e) {
          if (e instanceof HandlerFaulted) throw e
          this.handlerOops(c.id, { kind: 'fault_handler', probe: instance, regs }, e)
          return new HandlerFaulted(trapnr, false)
        }
        if (handled !== 0) return new HandlerFaulted(trapnr, true)
      }
    }
    const where =
      instance?.addr != null
        ? `handler of the probe at ${this.kernel.kallsyms.format(instance.addr)}`
        : 'a kprobe handler'
    // The JavaScript stack here runs through the handler that faulted (peek/poke called from it).
    const trace = new Error(`#${trapnr} in a kprobe handler`)
    oops(this.kernel, { ...faultOops(fault, where), cpu: c.id, regs, error: trace })
    return new HandlerFaulted(trapnr, false)
  }
}

/** %px: 16 hex digits of the 64-bit value. */
function hex64(v: number): string {
  return BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0')
}

/** init_kprobes: a Kprobes manager for this kernel. */
export function initKprobes(kernel: Kernel, options?: KprobesOptions): Kprobes {
  return new Kprobes(kernel, options)
}
