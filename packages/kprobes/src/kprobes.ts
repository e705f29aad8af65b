// kernel/kprobes.c + the x86 int3/debug/fault notifiers: the Kprobes manager
// bound to one Kernel. One die notifier sees every exception the guest takes;
// DIE_INT3 at a probe address runs the pre_handler and single-steps the copy
// out of line with TF, DIE_DEBUG after that step fixes up and runs the
// post_handler, DIE_GPF/DIE_PAGE_FAULT during the step go to fault_handler.

import type { Kernel } from '@probekit/kernel'
import type { Cpu } from '@probekit/x86-emu'
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
import { EEXIST, EILSEQ, EINVAL, ENOENT } from './errno.js'
import { InsnSlotCache } from './insn-slot.js'
import {
  KPROBE_FLAG_DISABLED,
  KPROBE_HIT_ACTIVE,
  KPROBE_HIT_SS,
  KPROBE_HIT_SSDONE,
  KPROBE_REENTER,
  type Kprobe,
  type KprobeCtlblk,
  kprobeDisabled,
  MAX_INSN_SIZE,
  type PtRegs,
  type RegisteredKprobe,
} from './kprobe.js'

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
  /** Where the insn slot pages go (default MODULES_VADDR). */
  slotBase?: number
}

export class Kprobes {
  /** kprobe_table: probes by address. A list per address leaves room for aggregate probes. */
  private readonly table = new Map<number, RegisteredKprobe[]>()
  private readonly ctlblks = new Map<number, KprobeCtlblk>()
  /** Ranges [start, end) nobody may probe: NOKPROBE_SYMBOL functions, .entry.text, .kprobes.text. */
  private readonly blacklist: [number, number][] = []
  readonly slots: InsnSlotCache
  /** The CPU whose handler is running (smp_processor_id() for handlers). */
  private handlerCpu = -1
  /** A dummy probe installed as current_kprobe by kprobe_busy_begin. */
  private readonly busyKprobe: RegisteredKprobe

  constructor(
    readonly kernel: Kernel,
    options: KprobesOptions = {},
  ) {
    this.slots = new InsnSlotCache(kernel, options.slotBase)
    this.busyKprobe = {
      addr: 0,
      flags: 0,
      nmissed: 0,
      opcode: 0,
      ainsn: { insn: 0, length: 0, copy: new Uint8Array(0), ifModifier: false, boostable: -1 },
    }
    this.populateBlacklist()
    kernel.registerDieNotifier(
      (val, regs, trapnr, cpu, err) => this.exceptionsNotify(val, regs, trapnr, cpu, err),
      KPROBES_NOTIFIER_PRIORITY,
    )
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
    // Several probes at one address need an aggregate probe (not implemented yet).
    if (this.table.has(addr)) return -EEXIST
    const prepared = this.prepareKprobe(p, addr)
    if (prepared !== 0) return prepared
    const rp = p as RegisteredKprobe
    this.table.set(addr, [rp])
    if (!kprobeDisabled(rp)) archArmKprobe(this.kernel, rp)
    this.tryOptimize(rp)
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
    const gone: RegisteredKprobe[] = []
    for (let i = 0; i < num; i++) {
      const p = kps[i]
      // __unregister_kprobe_top: an invalid probe gets addr = NULL and is skipped.
      if (!this.isRegistered(p)) {
        p.addr = null
        continue
      }
      const rp = p as RegisteredKprobe
      if (!kprobeDisabled(rp)) archDisarmKprobe(this.kernel, rp)
      this.table.delete(rp.addr)
      gone.push(rp)
    }
    if (gone.length === 0) return
    // A CPU may still be in a handler or stepping a copy: wait for a grace period.
    this.kernel.services.synchronizeSched()
    for (const rp of gone) this.slots.free(rp.ainsn.insn)
  }

  /** disable_kprobe: disarm but keep it registered. */
  disable_kprobe(p: Kprobe): number {
    if (!this.isRegistered(p)) return -EINVAL
    const rp = p as RegisteredKprobe
    if (kprobeDisabled(rp)) return 0
    archDisarmKprobe(this.kernel, rp)
    rp.flags |= KPROBE_FLAG_DISABLED
    return 0
  }

  enable_kprobe(p: Kprobe): number {
    if (!this.isRegistered(p)) return -EINVAL
    const rp = p as RegisteredKprobe
    if (!kprobeDisabled(rp)) return 0
    rp.flags &= ~KPROBE_FLAG_DISABLED
    archArmKprobe(this.kernel, rp)
    return 0
  }

  /** get_kprobe: the probe registered at addr. */
  get_kprobe(addr: number): RegisteredKprobe | undefined {
    return this.table.get(addr)?.[0]
  }

  /** Every registered probe, in address order. */
  probes(): RegisteredKprobe[] {
    return [...this.table.keys()].sort((a, b) => a - b).flatMap((a) => this.table.get(a) ?? [])
  }

  /** Jump optimization hook (optprobes plugs in here); nothing is optimized yet. */
  tryOptimize(_p: RegisteredKprobe): void {}

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
    return this.table.get(p.addr)?.includes(p as RegisteredKprobe) ?? false
  }

  /** _kprobe_addr: addr, or symbol_name + offset through kallsyms. */
  private kprobeAddr(p: Kprobe): { addr: number } | { err: number } {
    const hasAddr = p.addr !== undefined && p.addr !== null
    const hasSym = p.symbol_name !== undefined && p.symbol_name !== null
    if (hasAddr === hasSym) return { err: -EINVAL }
    if (hasSym) {
      const base = this.kernel.kallsyms.lookupName(p.symbol_name as string)
      if (base === undefined) return { err: -ENOENT }
      p.addr = base + (p.offset ?? 0)
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
    if (!canProbe(this.kernel, addr, probeAt)) return -EILSEQ
    const slot = this.slots.get()
    const ainsn = archCopyKprobe(this.kernel, addr, slot, probeAt)
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
      return false
    }
    if (kcb.current) {
      // reenter_kprobe: a probe hit while this CPU handles another — count it, step it, no handlers.
      if (kcb.kprobe_status === KPROBE_REENTER) {
        this.kernel.printk.log(this.kernel.jiffies, 'Unrecoverable kprobe detected.')
        throw new Error(`Unrecoverable kprobe detected at ${this.kernel.kallsyms.format(addr)}`)
      }
      p.nmissed++
      this.setupSingleStep(p, regs, kcb, true)
      return true
    }
    this.setCurrentKprobe(p, regs, kcb)
    kcb.kprobe_status = KPROBE_HIT_ACTIVE
    if (p.pre_handler && this.callHandler(cpu, () => p.pre_handler?.(p, regs) ?? 0) !== 0) {
      // The handler redirected execution: no single-step, no post_handler.
      kcb.current = null
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
      this.callHandler(cpu, () => {
        cur.post_handler?.(cur, regs, 0)
        return 0
      })
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
      this.callHandler(cpu, () => cur.fault_handler?.(cur, regs, trapnr) ?? 0) !== 0
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

  private callHandler(cpu: number, fn: () => number): number {
    const outer = this.handlerCpu
    this.handlerCpu = cpu
    try {
      return fn()
    } finally {
      this.handlerCpu = outer
    }
  }
}

/** init_kprobes: a Kprobes manager for this kernel. */
export function initKprobes(kernel: Kernel, options?: KprobesOptions): Kprobes {
  return new Kprobes(kernel, options)
}
