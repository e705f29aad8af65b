// Uprobes (the utrace-based uprobes of 2010: kernel/uprobes.c, the seed's
// Documentation/uprobes.txt): breakpoints in one process's text, a utrace
// engine on each of its threads, and the original instruction
// single-stepped out of line in the process's XOL area.
//
// register_uprobe puts an int3 over the first byte of the probed
// instruction with mm.write, which copies a shared page first (as ptrace's
// access_process_vm does with FOLL_FORCE): only that process sees it. A
// hit is the SIGTRAP utrace reports as UTRACE_SIGNAL_CORE: the handlers run,
// the thread is sent to the copy in the XOL slot with UTRACE_SINGLESTEP, and
// the single-step SIGTRAP that follows is where the x86 fix-ups make it look
// as if the original had run in place. Both traps are kept from the
// program (UTRACE_SIGNAL_IGN).
//
// Before a breakpoint goes in or out every thread is stopped
// (UTRACE_INTERRUPT, then UTRACE_STOP from report_signal/report_quiesce):
// called from host code, Uprobes drives the machine until they are.
// From a uprobe handler the operation is queued (-EINPROGRESS) and run
// after the hit, in that thread's report, with the callback told the result.

import {
  BadAddress,
  copyFromUser,
  EEXIST,
  EINPROGRESS,
  EINVAL,
  EPERM,
  ESRCH,
  type Kernel,
  kernelOopsed,
  PAGE,
  PROT_EXEC,
  type PtRegsFrame,
  type RegularFile,
  readUserU64,
  SIGILL,
  SIGTRAP,
  type SigInfo,
  type Task,
  writeUserU64,
} from '@probekit/kernel'
import {
  IS_ERR,
  UTRACE_ATTACH_CREATE,
  UTRACE_DETACH,
  UTRACE_EVENT,
  UTRACE_INTERRUPT,
  UTRACE_RESUME,
  UTRACE_RESUME_MASK,
  UTRACE_SIGNAL_HANDLER,
  UTRACE_SIGNAL_IGN,
  UTRACE_SIGNAL_REPORT,
  UTRACE_SINGLESTEP,
  UTRACE_STOP,
  type Utrace,
  type UtraceEngineOps,
  utrace_signal_action,
  utraceOf,
} from '@probekit/utrace'
import {
  arch_uprobe_analyze_insn,
  arch_uprobe_post_xol,
  arch_uprobe_xol_copy,
  MAX_UINSN_BYTES,
  UPROBE_SWBP_INSN,
  X86_EFLAGS_TF,
} from './arch-x86.js'
import { callUprobeUser, type UprobeSite } from './handler-oops.js'
import { InodeUprobes } from './inode-uprobes.js'
import { cleanupAtEntry, popReturning, type ReturnInstance } from './return-instance.js'
import type { Uprobe, UprobeKimg } from './uprobe.js'
import type { UprobeConsumer } from './uprobe-consumer.js'
import { UprobeProbept } from './uprobe-probept.js'
import { UprobeProcess } from './uprobe-process.js'
import { UprobeTask } from './uprobe-task.js'
import type { Uretprobe } from './uretprobe.js'
import { XOL_AREA_NAME, XolArea } from './xol-area.js'

/** clone flags (include/uapi/linux/sched.h). */
const CLONE_VM = 0x100
const CLONE_THREAD = 0x10000

/** si_code of a signal the kernel sends for its own reasons (force_sig). */
const SI_KERNEL = 0x80

/** x86 trap numbers in a SIGTRAP's info: #DB (the single step) and #BP (int3). */
const X86_TRAP_DB = 1
const X86_TRAP_BP = 3

/**
 * What each probed thread's engine hears: QUIESCE (the stop for insertion and removal, and the
 * signal reports UTRACE_INTERRUPT makes), SIGNAL_CORE (breakpoint and step traps), clone, exec, death.
 */
export const UPROBE_ENGINE_EVENTS =
  UTRACE_EVENT.QUIESCE |
  UTRACE_EVENT.SIGNAL_CORE |
  UTRACE_EVENT.CLONE |
  UTRACE_EVENT.EXEC |
  UTRACE_EVENT.DEATH |
  UTRACE_EVENT.REAP

/** Return probes nested deeper than this in one thread are missed (Linux's MAX_URETPROBE_DEPTH). */
export const MAX_URETPROBE_DEPTH = 64

/** How the host waits for a quiesce: kernel.run in slices of this many instructions, at most this many. */
export const QUIESCE_SLICE = 10_000
export const QUIESCE_MAX_SLICES = 500

const instances = new WeakMap<Kernel, Uprobes>()

/** The kernel's Uprobes (made on first use; one per kernel, over its utrace). */
export function uprobesOf(kernel: Kernel): Uprobes {
  let u = instances.get(kernel)
  if (!u) {
    u = new Uprobes(kernel)
    instances.set(kernel, u)
  }
  return u
}

/**
 * Uprobes (the utrace-based uprobes of 2010): breakpoints in one process's
 * text, a utrace engine on each of its threads, and the original instruction
 * single-stepped out of line in the process's XOL area.
 */
export class Uprobes {
  private readonly utrace: Utrace
  /** uproc_table: the probed processes by tgid. */
  private readonly procs = new Map<number, UprobeProcess>()
  /** Each registered uprobe's kimg (Linux's u->kdata). */
  private readonly kimgs = new Map<Uprobe, UprobeKimg>()
  /** Each registered return probe's entry uprobe (Linux's rp->u). */
  private readonly uretprobes = new Map<Uretprobe, Uprobe>()
  /** The thread whose handlers run now: [un]register calls from them are delayed. */
  private handlerTask: UprobeTask | null = null
  /** Quiesces that timed out, calls refused where the kernel cannot sleep: what Linux would printk. */
  readonly warnings: string[] = []
  private readonly ops: UtraceEngineOps
  /** The inode-based API's probes (on files, in every process that maps them). */
  private readonly inode: InodeUprobes

  constructor(readonly kernel: Kernel) {
    this.utrace = utraceOf(kernel)
    this.inode = new InodeUprobes(kernel, this)
    this.ops = {
      report_quiesce: (_action, engine) => this.reportQuiesce(engine.data as UprobeTask),
      report_signal: (action, engine, regs, info) =>
        this.reportSignal(engine.data as UprobeTask, action, regs, info),
      report_clone: (_action, engine, flags, child) =>
        this.reportClone(engine.data as UprobeTask, flags, child),
      report_exec: (_action, engine, _bprm, _regs, task) => this.reportExec(engine.data as UprobeTask, task),
      report_death: (engine, groupDead, _signal, task) =>
        this.reportDeath(engine.data as UprobeTask, groupDead, task),
      report_reap: (engine, task) => {
        const utask = engine.data as UprobeTask
        if (utask.uproc.threads.get(task) === utask) utask.uproc.threads.delete(task)
      },
    }
  }

  // ================================================================ the API

  /**
   * register_uprobe: a breakpoint at u.vaddr in process u.pid; u.handler runs at each hit. 0; -EINVAL
   * (no handler, vaddr not in an executable mapping, an instruction that cannot be stepped out of
   * line, already registered); -ESRCH (no such process, or it died meanwhile); -EEXIST (an int3 not
   * ours is already there); -ENOMEM (no XOL area or slot); -EINPROGRESS from a handler (delayed; the
   * result goes to u.registration_callback); -EPERM where the caller cannot sleep (a kprobe handler:
   * the quiesce would wait for threads that need this CPU).
   */
  register_uprobe(u: Uprobe): number {
    if (!u || typeof u.handler !== 'function') return -EINVAL
    if (this.kernel.in_atomic()) return this.mightSleep('register_uprobe')
    const task = this.kernel.tasks.get(u.pid)
    if (!task || this.isDead(task)) return -ESRCH
    if (this.handlerTask) {
      this.handlerTask.deferred.push({ uprobe: u, reg: 1 })
      return -EINPROGRESS
    }
    return this.doRegister(u)
  }

  /**
   * unregister_uprobe: remove u; the int3 goes when the last uprobe at its address does. A no-op for
   * a uprobe not registered (or dropped by its process's exec or exit). From a handler: delayed.
   */
  unregister_uprobe(u: Uprobe): void {
    const kimg = this.kimgs.get(u)
    if (!kimg) return
    if (this.kernel.in_atomic()) {
      this.mightSleep('unregister_uprobe')
      return
    }
    if (this.handlerTask) {
      this.handlerTask.deferred.push({ uprobe: u, reg: 0 })
      return
    }
    this.doUnregister(kimg)
  }

  /**
   * register_uretprobe: rp.handler runs each time the function at rp.u.vaddr (its first instruction)
   * in process rp.u.pid returns. Returns what register_uprobe returns for the entry probe.
   */
  register_uretprobe(rp: Uretprobe): number {
    if (!rp?.u || typeof rp.handler !== 'function') return -EINVAL
    if (this.uretprobes.has(rp)) return -EINVAL
    rp.nmissed ??= 0
    const cb = rp.u.registration_callback
    const entry: Uprobe = {
      pid: rp.u.pid,
      vaddr: rp.u.vaddr,
      handler: (_u, regs) => this.prepareUretprobe(rp, regs),
      ...(cb
        ? { registration_callback: (_u: Uprobe, reg: number, result: number) => cb(rp.u, reg, result) }
        : {}),
    }
    this.uretprobes.set(rp, entry)
    const ret = this.register_uprobe(entry)
    if (ret !== 0 && ret !== -EINPROGRESS) this.uretprobes.delete(rp)
    return ret
  }

  /** unregister_uretprobe: no more returns hijacked; returns already pending go back without the handler. */
  unregister_uretprobe(rp: Uretprobe): void {
    const entry = this.uretprobes.get(rp)
    if (!entry) return
    if (this.kernel.in_atomic()) {
      this.mightSleep('unregister_uretprobe')
      return
    }
    if (!this.handlerTask) this.uretprobes.delete(rp)
    this.unregister_uprobe(entry)
  }

  /**
   * uprobe_register (the inode API): uc on the instruction at file offset `offset` of `file` (a guest
   * path or its inode), in every process that maps it executable, now or later. 0 or -errno (see
   * InodeUprobes.uprobe_register).
   */
  uprobe_register(file: string | RegularFile, offset: number, uc: UprobeConsumer): number {
    return this.inode.uprobe_register(file, offset, uc)
  }

  /** uprobe_unregister: uc leaves that probe; the last consumer's going takes it out of every process. */
  uprobe_unregister(file: string | RegularFile, offset: number, uc: UprobeConsumer): void {
    this.inode.uprobe_unregister(file, offset, uc)
  }

  /** Where a file offset is mapped in task's address space (null: not mapped there). */
  vaddrOf(file: RegularFile, offset: number, task: Task): number | null {
    return this.inode.vaddrOf(file, offset, task)
  }

  /** Insertions from an mmap or exec of the process itself (InodeUprobes): no quiesce. */
  private noQuiesce = 0

  withoutQuiesce(fn: () => void): void {
    this.noQuiesce++
    try {
      fn()
    } finally {
      this.noQuiesce--
    }
  }

  /** Is u registered now (not dropped by its process's exec or exit, not unregistered)? */
  isRegistered(u: Uprobe): boolean {
    return this.kimgs.has(u)
  }

  // camelCase aliases
  registerUprobe = this.register_uprobe
  unregisterUprobe = this.unregister_uprobe
  registerUretprobe = this.register_uretprobe
  unregisterUretprobe = this.unregister_uretprobe

  /** The returns thread t owes (its pending return-probe instances, innermost last): for tests and tools. */
  returnInstancesOf(t: Task): readonly ReturnInstance[] {
    return this.procs.get(t.tgid)?.threads.get(t)?.returnInstances ?? []
  }

  /** Linux's `current` for a handler: the thread that hit the probepoint (null outside handlers). */
  get current(): Task | null {
    return this.handlerTask?.task ?? null
  }

  /** The XOL area's address in process tgid, or null (for tests and tools). */
  xolAreaOf(tgid: number): number | null {
    return this.procs.get(tgid)?.xol?.vaddr ?? null
  }

  /** Is some uprobe registered (or a probepoint set) in process tgid? */
  isProbed(tgid: number): boolean {
    return this.procs.has(tgid)
  }

  // ================================================================ register / unregister

  /** might_sleep() in atomic context: refused, said once per call (Linux would BUG). */
  private mightSleep(what: string): number {
    this.warnings.push(`uprobes: ${what} called where the kernel cannot sleep (a kprobe handler): refused`)
    return -EPERM
  }

  private doRegister(u: Uprobe): number {
    const task = this.kernel.tasks.get(u.pid)
    if (!task || this.isDead(task)) return -ESRCH
    if (this.kimgs.has(u)) return -EINVAL
    const mm = task.mm
    // uprobe_validate_vaddr: an executable mapping, not the XOL area.
    const vma = mm.findVma(u.vaddr)
    if (!vma || (vma.prot & PROT_EXEC) === 0 || (vma.kind === 'anon' && vma.name === XOL_AREA_NAME))
      return -EINVAL
    let uproc = this.procs.get(task.tgid)
    const existing = uproc?.probepts.get(u.vaddr)
    if (uproc && existing) {
      this.addKimg(u, uproc, existing)
      return 0
    }
    // A new probepoint: the original instruction, other probepoints' int3s in its bytes put back.
    const len = Math.min(MAX_UINSN_BYTES, vma.end - u.vaddr)
    const bytes = copyFromUser(mm, u.vaddr, len)
    for (let i = 1; i < len; i++) {
      const other = uproc?.probepts.get(u.vaddr + i)
      if (other && bytes[i] === UPROBE_SWBP_INSN) bytes[i] = other.opcode
    }
    // A breakpoint we did not put there (a debugger's): we do not step over somebody else's trap.
    if (bytes[0] === UPROBE_SWBP_INSN) return -EEXIST
    const arch = arch_uprobe_analyze_insn(bytes, u.vaddr)
    if (typeof arch === 'number') return arch
    const created = !uproc
    if (!uproc) {
      const made = this.newUproc(task)
      if (typeof made === 'number') return made
      uproc = made
    }
    const fail = (err: number) => {
      if (created) this.maybeReleaseUproc(uproc)
      return err
    }
    if (!uproc.xol) {
      const xol = XolArea.get(mm, u.vaddr)
      if (typeof xol === 'number') return fail(xol)
      uproc.xol = xol
    }
    const xol = uproc.xol
    const slot = xol.allocSlot()
    if (slot < 0) return fail(slot)
    const copy = arch_uprobe_xol_copy(arch, u.vaddr, slot)
    if (typeof copy === 'number') {
      xol.xol_free_insn_slot(slot)
      return fail(copy)
    }
    const host = this.quiesce(uproc)
    if (uproc.finished) return -ESRCH // the process execed or exited while it was being stopped
    const raced = uproc.probepts.get(u.vaddr)
    if (raced) {
      // A handler's delayed registration set it meanwhile.
      xol.xol_free_insn_slot(slot)
      this.addKimg(u, uproc, raced)
    } else {
      const ppt = new UprobeProbept(u.vaddr, bytes[0], arch, slot)
      xol.writeSlot(slot, copy)
      mm.write(u.vaddr, Uint8Array.of(UPROBE_SWBP_INSN))
      uproc.probepts.set(u.vaddr, ppt)
      this.addKimg(u, uproc, ppt)
    }
    if (host) this.resume(uproc)
    return 0
  }

  private addKimg(u: Uprobe, uproc: UprobeProcess, ppt: UprobeProbept): void {
    const kimg: UprobeKimg = { uprobe: u, uproc, ppt }
    ppt.uprobes.push(kimg)
    this.kimgs.set(u, kimg)
  }

  private doUnregister(kimg: UprobeKimg): void {
    const { uproc, ppt } = kimg
    this.kimgs.delete(kimg.uprobe)
    ppt.uprobes.splice(ppt.uprobes.indexOf(kimg), 1)
    if (ppt.uprobes.length > 0 || uproc.finished) return
    // The last uprobe here: the original byte goes back (the page stays the process's private copy).
    const host = this.quiesce(uproc)
    if (!uproc.finished && uproc.probepts.get(ppt.vaddr) === ppt) {
      uproc.mm.write(ppt.vaddr, Uint8Array.of(ppt.opcode))
      uproc.probepts.delete(ppt.vaddr)
      ppt.state = 'UPROBE_DISABLED'
      // A thread between its hit and the end of its step still needs the slot; it frees it then.
      if (ppt.stepping === 0) uproc.xol?.xol_free_insn_slot(ppt.slot)
    }
    if (host) this.resume(uproc)
    this.maybeReleaseUproc(uproc)
  }

  /** [un]registrations a thread's handlers asked for, once its hit is over; the callbacks hear the results. */
  private runDeferred(utask: UprobeTask, pending = utask.deferred.splice(0)): void {
    for (const d of pending) {
      let result = 0
      // Into this thread's own process, which died with it: nothing to register in.
      const gone = utask.uproc.finished && this.kernel.tasks.get(d.uprobe.pid)?.tgid === utask.uproc.tgid
      if (d.reg === 1) result = gone ? -ESRCH : this.doRegister(d.uprobe)
      else {
        const kimg = this.kimgs.get(d.uprobe)
        if (kimg) this.doUnregister(kimg)
      }
      if (d.reg === 0 || result !== 0)
        for (const [rp, entry] of this.uretprobes) if (entry === d.uprobe) this.uretprobes.delete(rp)
      const mm = this.kernel.tasks.get(d.uprobe.pid)?.mm ?? utask.uproc.mm
      const site = {
        what: 'uprobe registration_callback',
        fn: d.uprobe.registration_callback,
        vaddr: d.uprobe.vaddr,
      }
      this.callUser({ ...site, mm, regs: null }, () =>
        d.uprobe.registration_callback?.(d.uprobe, d.reg, result),
      )
    }
  }

  // ================================================================ processes and threads

  /** A uprobe_process for task's thread group, with an engine on each of its live threads. */
  private newUproc(task: Task): UprobeProcess | number {
    const uproc = new UprobeProcess(task.tgid, task.mm)
    for (const t of this.kernel.tasks.values())
      if (t.tgid === task.tgid && !this.isDead(t)) this.attachThread(uproc, t)
    if (uproc.threads.size === 0) return -ESRCH
    this.procs.set(task.tgid, uproc)
    uproc.unmapHook = (start, end) => this.uprobeMunmap(uproc, start, end)
    uproc.mm.unmapHooks.push(uproc.unmapHook)
    return uproc
  }

  private attachThread(uproc: UprobeProcess, t: Task): UprobeTask | null {
    const utask = new UprobeTask(t, uproc)
    const engine = this.utrace.utrace_attach_task(t, UTRACE_ATTACH_CREATE, this.ops, utask)
    if (IS_ERR(engine)) return null
    utask.engine = engine
    if (this.utrace.utrace_set_events(t, engine, UPROBE_ENGINE_EVENTS) !== 0) {
      this.utrace.utrace_control(t, engine, UTRACE_DETACH)
      return null
    }
    uproc.threads.set(t, utask)
    return utask
  }

  /**
   * The last probepoint is gone and no thread is inside a hit, owes a return through the trampoline,
   * or has an int3's SIGTRAP still queued (its report must find our engine, which puts ip back on the
   * restored instruction): detach and forget the process. `current` is a thread whose own callback
   * asks (it answers UTRACE_DETACH itself). True if released.
   */
  private maybeReleaseUproc(uproc: UprobeProcess, current: Task | null = null): boolean {
    if (uproc.finished || uproc.probepts.size > 0) return false
    for (const utask of uproc.threads.values())
      if (
        utask.state !== 'UPTASK_RUNNING' ||
        utask.returnInstances.length > 0 ||
        utask.task.pending.get(SIGTRAP)?.trapno === X86_TRAP_BP
      )
        return false
    this.finish(uproc, current)
    return true
  }

  /**
   * Exec, exit, or the last probe gone: drop every uprobe of the process (a later unregister is a
   * no-op) and detach every engine but current's (its callback answers UTRACE_DETACH itself).
   */
  private finish(uproc: UprobeProcess, current: Task | null): void {
    if (uproc.finished) return
    uproc.finished = true
    this.dropUnmapHook(uproc)
    for (const ppt of uproc.probepts.values())
      for (const k of ppt.uprobes) {
        this.kimgs.delete(k.uprobe)
        for (const [rp, entry] of this.uretprobes) if (entry === k.uprobe) this.uretprobes.delete(rp)
      }
    uproc.probepts.clear()
    for (const utask of uproc.threads.values()) {
      utask.returnInstances.length = 0
      if (utask.task === current) continue
      this.utrace.utrace_control(utask.task, utask.engine, UTRACE_DETACH)
    }
    uproc.threads.clear()
    if (this.procs.get(uproc.tgid) === uproc) this.procs.delete(uproc.tgid)
  }

  private dropUnmapHook(uproc: UprobeProcess): void {
    const hooks = uproc.mm.unmapHooks
    if (uproc.unmapHook && hooks.includes(uproc.unmapHook)) hooks.splice(hooks.indexOf(uproc.unmapHook), 1)
    uproc.unmapHook = null
  }

  /**
   * uprobe_munmap: [start, end) of the process's address space goes (munmap, a MAP_FIXED mapping over
   * it, mremap, brk). Probepoints in it go with it - their uprobes as if unregistered, a later
   * unregister a no-op - so no saved byte is ever written into whatever is mapped there next. If the
   * XOL area itself goes, no copy can be stepped any more: every probepoint's original byte is put
   * back and all of them go.
   */
  private uprobeMunmap(uproc: UprobeProcess, start: number, end: number): void {
    if (uproc.finished) return
    const xolGone = uproc.xol !== null && uproc.xol.vaddr < end && uproc.xol.vaddr + PAGE > start
    for (const ppt of [...uproc.probepts.values()]) {
      const inRange = ppt.vaddr >= start && ppt.vaddr < end
      if (!inRange && !xolGone) continue
      if (!inRange) uproc.mm.write(ppt.vaddr, Uint8Array.of(ppt.opcode))
      for (const k of ppt.uprobes) {
        this.kimgs.delete(k.uprobe)
        for (const [rp, entry] of this.uretprobes) if (entry === k.uprobe) this.uretprobes.delete(rp)
      }
      ppt.uprobes.length = 0
      uproc.probepts.delete(ppt.vaddr)
      ppt.state = 'UPROBE_DISABLED'
      if (ppt.stepping === 0 && !xolGone) uproc.xol?.xol_free_insn_slot(ppt.slot)
    }
    if (xolGone) {
      uproc.xol = null
      uproc.trampoline = 0
    }
  }

  private isDead(t: Task): boolean {
    return t.state === 'zombie' || this.kernel.tasks.get(t.pid) !== t
  }

  // ================================================================ quiesce

  /**
   * quiesce_all_threads: every live thread stopped before the text changes. From host code (the
   * machine not running) the threads are interrupted and the machine run, in slices, until each is
   * stopped (TASK_TRACED, or a job-control stop) or dead; true then: resume() lets them go. From a
   * callback the machine is mid-run and cannot be driven: every other thread is between two
   * instructions (callbacks run whole), so the one-byte write is made as it is (as modern uprobes
   * does without stopping anyone); false then.
   */
  private quiesce(uproc: UprobeProcess): boolean {
    // Called while the machine runs (a handler, a utrace callback, a syscall's hook): it cannot be driven.
    // After an oops nothing runs any more: every thread stays where the oops left it.
    if (this.kernel.machine.current !== null || this.noQuiesce > 0 || kernelOopsed(this.kernel)) return false
    uproc.quiescing = true
    for (const utask of uproc.threads.values())
      if (!this.isQuiet(utask.task)) this.utrace.utrace_control(utask.task, utask.engine, UTRACE_INTERRUPT)
    let slices = 0
    while (!uproc.finished && !this.allQuiet(uproc) && slices++ < QUIESCE_MAX_SLICES)
      this.kernel.run(QUIESCE_SLICE)
    if (!uproc.finished && !this.allQuiet(uproc))
      this.warnings.push(
        `uprobes: process ${uproc.tgid} did not quiesce in ${QUIESCE_MAX_SLICES * QUIESCE_SLICE} instructions`,
      )
    return true
  }

  private isQuiet(t: Task): boolean {
    return t.state === 'traced' || t.state === 'stopped' || this.isDead(t)
  }

  private allQuiet(uproc: UprobeProcess): boolean {
    for (const utask of uproc.threads.values()) if (!this.isQuiet(utask.task)) return false
    return true
  }

  /** rouse_all_threads: let every stopped thread go on. */
  private resume(uproc: UprobeProcess): void {
    uproc.quiescing = false
    for (const utask of uproc.threads.values())
      if (!this.isDead(utask.task)) this.utrace.utrace_control(utask.task, utask.engine, UTRACE_RESUME)
  }

  // ================================================================ engine callbacks

  /** Stop while the process is quiescing; keep a step in progress going (it must be re-asked each pass). */
  private reportQuiesce(utask: UprobeTask): number {
    if (utask.state === 'UPTASK_SSTEP') return UTRACE_SINGLESTEP
    return utask.uproc.quiescing ? UTRACE_STOP : UTRACE_RESUME
  }

  private reportSignal(utask: UprobeTask, action: number, regs: PtRegsFrame, info: SigInfo): number {
    const signal = utrace_signal_action(action)
    // Not ours: left as the engines before us decided.
    const pass = (action & ~UTRACE_RESUME_MASK) | UTRACE_RESUME
    if (signal === UTRACE_SIGNAL_REPORT || signal === UTRACE_SIGNAL_HANDLER)
      return signal | this.reportQuiesce(utask)
    if (utask.state === 'UPTASK_SSTEP') {
      if (info.signo === SIGTRAP && info.trapno === X86_TRAP_DB) return this.postSstep(utask, regs)
      if (info.trapno !== undefined) {
        // The copy faulted: as if the original had, at its own address.
        this.abortXol(utask, regs)
        return pass
      }
      // A signal sent meanwhile: after the step (its handler must not start from the slot).
      utask.delayedSignals.push({ ...info })
      return UTRACE_SIGNAL_IGN | UTRACE_SINGLESTEP
    }
    if (info.signo !== SIGTRAP || info.trapno !== X86_TRAP_BP) return pass
    const uproc = utask.uproc
    const bp = regs.get('ip') - 1
    if (uproc.trampoline !== 0 && bp === uproc.trampoline) return this.handleTrampoline(utask, regs)
    const ppt = uproc.probepts.get(bp)
    if (ppt) return this.handleHit(utask, ppt, regs)
    // Removed between the trap and this report: the int3 is gone, run the original instruction.
    if (!uproc.finished && this.byteAt(uproc, bp) !== UPROBE_SWBP_INSN) {
      regs.set('ip', bp)
      // The last probe went meanwhile: this report was all that kept the engines.
      if (this.maybeReleaseUproc(uproc, utask.task)) return UTRACE_SIGNAL_IGN | UTRACE_DETACH
      return UTRACE_SIGNAL_IGN | this.reportQuiesce(utask)
    }
    return pass
  }

  private byteAt(uproc: UprobeProcess, addr: number): number {
    try {
      return copyFromUser(uproc.mm, addr, 1)[0]
    } catch (e) {
      if (e instanceof BadAddress) return -1
      throw e
    }
  }

  /** A breakpoint hit: the handlers, in registration order, then the step of the copy out of line. */
  private handleHit(utask: UprobeTask, ppt: UprobeProbept, regs: PtRegsFrame): number {
    regs.set('ip', ppt.vaddr)
    utask.state = 'UPTASK_BP_HIT'
    utask.activePpt = ppt
    utask.origTf = (regs.get('flags') & X86_EFLAGS_TF) !== 0
    ppt.stepping++
    const outer = this.handlerTask
    this.handlerTask = utask
    try {
      for (const kimg of [...ppt.uprobes]) {
        const site = { what: 'uprobe handler', fn: kimg.uprobe.handler, vaddr: ppt.vaddr }
        this.callUser({ ...site, mm: utask.uproc.mm, regs }, () => kimg.uprobe.handler(kimg.uprobe, regs))
      }
    } finally {
      this.handlerTask = outer
    }
    if (regs.get('ip') !== ppt.vaddr) {
      // A handler sent the thread elsewhere: the original instruction is not run.
      this.endHit(utask)
      return UTRACE_SIGNAL_IGN | this.reportQuiesce(utask)
    }
    // pre_ssout: to the slot, with TF.
    utask.state = 'UPTASK_SSTEP'
    regs.set('ip', ppt.slot)
    return UTRACE_SIGNAL_IGN | UTRACE_SINGLESTEP
  }

  /** The step of the copy is done (uprobe_post_ssout): fix up, then the delayed work of the hit. */
  private postSstep(utask: UprobeTask, regs: PtRegsFrame): number {
    const ppt = utask.activePpt!
    try {
      arch_uprobe_post_xol(ppt.arch, ppt.vaddr, ppt.slot, regs, utask.uproc.mm, utask.origTf)
    } catch (e) {
      if (!(e instanceof BadAddress)) throw e
      this.warnings.push(
        `uprobes: pid ${utask.task.pid}: stack unreachable after stepping ${ppt.arch.mnemonic}`,
      )
    }
    this.endHit(utask)
    for (const info of utask.delayedSignals.splice(0)) this.kernel.tracehooks.pushBackSignal(utask.task, info)
    return UTRACE_SIGNAL_IGN | this.reportQuiesce(utask)
  }

  /** The copy faulted: ip back at the original, the fault delivered as the original's. */
  private abortXol(utask: UprobeTask, regs: PtRegsFrame): void {
    const ppt = utask.activePpt!
    const ip = regs.get('ip')
    if (ip >= ppt.slot && ip < ppt.slot + MAX_UINSN_BYTES) regs.set('ip', ppt.vaddr + (ip - ppt.slot))
    this.endHit(utask)
  }

  private endHit(utask: UprobeTask): void {
    const ppt = utask.activePpt
    utask.activePpt = null
    utask.state = 'UPTASK_RUNNING'
    if (ppt) {
      ppt.stepping--
      if (ppt.state === 'UPROBE_DISABLED' && ppt.stepping === 0) utask.uproc.xol?.xol_free_insn_slot(ppt.slot)
    }
    this.runDeferred(utask)
    this.maybeReleaseUproc(utask.uproc)
  }

  // ================================================================ return probes

  /** The process's trampoline: an XOL slot holding int3 (made on first use); 0 if no slot is free. */
  private trampolineOf(uproc: UprobeProcess): number {
    if (uproc.trampoline !== 0 || !uproc.xol) return uproc.trampoline
    const slot = uproc.xol.allocSlot()
    if (slot < 0) return 0
    uproc.xol.writeSlot(slot, Uint8Array.of(UPROBE_SWBP_INSN))
    uproc.trampoline = slot
    return slot
  }

  /**
   * prepare_uretprobe, the entry probe's handler: the return address at sp (the function's first
   * instruction: nothing pushed yet) becomes the trampoline, and the thread owes one more return.
   */
  private prepareUretprobe(rp: Uretprobe, regs: PtRegsFrame): void {
    const utask = this.handlerTask
    if (!utask) return
    const stack = utask.returnInstances
    const sp = regs.get('sp')
    const tramp = this.trampolineOf(utask.uproc)
    const mm = utask.uproc.mm
    let ret_addr: number
    try {
      ret_addr = readUserU64(mm, sp)
    } catch (e) {
      if (!(e instanceof BadAddress)) throw e
      rp.nmissed = (rp.nmissed ?? 0) + 1
      return
    }
    const chained = tramp !== 0 && ret_addr === tramp
    cleanupAtEntry(stack, sp, chained)
    if (tramp === 0 || stack.length >= MAX_URETPROBE_DEPTH) {
      rp.nmissed = (rp.nmissed ?? 0) + 1
      return
    }
    if (chained) {
      // A tail call from a function whose return we already hold: return where that one would.
      const outer = stack[stack.length - 1]
      if (!outer || outer.sp !== sp) {
        this.warnings.push(
          `uprobes: pid ${utask.task.pid}: trampoline on the stack with no return owed there`,
        )
        return
      }
      ret_addr = outer.ret_addr
    } else {
      try {
        writeUserU64(mm, sp, tramp)
      } catch (e) {
        if (!(e instanceof BadAddress)) throw e
        rp.nmissed = (rp.nmissed ?? 0) + 1
        return
      }
    }
    stack.push({
      rp,
      ret_addr,
      sp,
      func: rp.u.vaddr,
      chained,
      onReturn: (r, ri) => {
        if (this.uretprobes.has(rp)) rp.handler(ri, r)
      },
    })
  }

  /**
   * The trampoline's int3 (handle_trampoline): the returns owed at this stack slot, innermost first,
   * each one's handler with ip already the real return address; deeper, abandoned instances dropped.
   */
  private handleTrampoline(utask: UprobeTask, regs: PtRegsFrame): number {
    const { returning } = popReturning(utask.returnInstances, regs.get('sp'))
    if (returning.length === 0) {
      // Nothing owed here: as Linux, the thread gets SIGILL rather than a jump to nowhere.
      this.warnings.push(`uprobes: pid ${utask.task.pid}: trampoline hit with no return owed: SIGILL`)
      this.kernel.tracehooks.pushBackSignal(utask.task, { signo: SIGILL, code: SI_KERNEL })
      return UTRACE_SIGNAL_IGN | this.reportQuiesce(utask)
    }
    regs.set('ip', returning[returning.length - 1].ret_addr)
    const outer = this.handlerTask
    this.handlerTask = utask
    try {
      for (const ri of returning) {
        const site = { what: 'uretprobe handler', fn: ri.rp?.handler, vaddr: ri.func }
        this.callUser({ ...site, mm: utask.uproc.mm, regs }, () => ri.onReturn(regs, ri))
      }
    } finally {
      this.handlerTask = outer
    }
    this.runDeferred(utask)
    this.maybeReleaseUproc(utask.uproc)
    return UTRACE_SIGNAL_IGN | this.reportQuiesce(utask)
  }

  // ================================================================ lifecycle

  private reportClone(utask: UprobeTask, flags: number, child: Task): number {
    const uproc = utask.uproc
    if (uproc.finished) return UTRACE_RESUME
    if ((flags & (CLONE_THREAD | CLONE_VM)) !== 0) {
      // A new thread (or a vfork child, on our text until it execs): it shares every probe.
      const c = this.attachThread(uproc, child)
      if (c && uproc.quiescing) this.utrace.utrace_control(child, c.engine, UTRACE_STOP)
      return UTRACE_RESUME
    }
    // fork: probes are not inherited. Its copy of the text loses our int3s, written through its own mm
    // (a page it shares with us is copied first), and the XOL area is not its (VM_DONTCOPY).
    for (const ppt of uproc.probepts.values()) child.mm.write(ppt.vaddr, Uint8Array.of(ppt.opcode))
    if (uproc.xol) child.mm.unmapRange(uproc.xol.vaddr, uproc.xol.vaddr + PAGE)
    // Returns the forking thread owes: the child's copy of its stack gets the real return addresses back.
    for (const ri of utask.returnInstances) writeUserU64(child.mm, ri.sp, ri.ret_addr)
    // The inode API's probes are per file, not per process: the child gets those of the files it maps.
    this.inode.uprobeDupMmap(child)
    return UTRACE_RESUME
  }

  private reportExec(utask: UprobeTask, task: Task): number {
    const uproc = utask.uproc
    // The process's image is gone, its probes with it; a vfork child just leaves our text.
    if (task.tgid === uproc.tgid) this.finish(uproc, task)
    else if (uproc.threads.get(task) === utask) uproc.threads.delete(task)
    return UTRACE_DETACH
  }

  private reportDeath(utask: UprobeTask, groupDead: boolean, task: Task): number {
    const uproc = utask.uproc
    if (utask.activePpt) {
      utask.activePpt.stepping--
      utask.activePpt = null
    }
    // A thread that exits inside probed functions owes those returns to nobody.
    utask.returnInstances.length = 0
    if (uproc.threads.get(task) === utask) uproc.threads.delete(task)
    // A vfork child (another thread group on our text) just goes.
    if (task.tgid !== uproc.tgid) return UTRACE_DETACH
    let alive = false
    for (const t of uproc.threads.keys()) if (t.tgid === uproc.tgid && !this.isDead(t)) alive = true
    const pending = utask.deferred.splice(0)
    if (groupDead || !alive) this.finish(uproc, task)
    // [Un]registrations its handlers asked for and it died before making: made (the process lives on)
    // or answered -ESRCH (it is gone); either way every registration_callback runs.
    this.runDeferred(utask, pending)
    return UTRACE_DETACH
  }

  /** A user's handler or callback: one that throws is an oops (handler-oops.ts), never a host exception. */
  private callUser(site: UprobeSite, fn: () => void): void {
    callUprobeUser(this.kernel, site, fn, undefined)
  }
}
