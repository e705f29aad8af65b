// The inode-based API (Linux 3.5 on: uprobe_register(inode, offset, uc)):
// a probe names a file and an offset in it, not a process and an address.
// Every process that maps that offset of the file executable gets the
// breakpoint: those mapping it at registration, and each later mmap of it
// (uprobe_mmap: exec mapping a program's text, ld.so mapping a library, a
// fork child's copy). Consumers share one probe per (inode, offset); their
// filters choose the address spaces.
//
// Built on the per-process machinery: in each process the probe is one
// entry uprobe (running the consumers' handlers) and, while some consumer
// has a ret_handler, one return probe (running those).

import {
  EINVAL,
  ENOENT,
  EPERM,
  type Kernel,
  type Mm,
  PROT_EXEC,
  type PtRegsFrame,
  RegularFile,
  type Task,
  type Vma,
} from '@probekit/kernel'
import { arch_uprobe_analyze_insn, MAX_UINSN_BYTES } from './arch-x86.js'
import { callUprobeUser } from './handler-oops.js'
import type { Uprobe } from './uprobe.js'
import {
  UPROBE_FILTER_MMAP,
  UPROBE_FILTER_REGISTER,
  UPROBE_FILTER_UNREGISTER,
  UPROBE_HANDLER_REMOVE,
  type UprobeConsumer,
} from './uprobe-consumer.js'
import type { Uretprobe } from './uretprobe.js'

/** What the per-process layer offers this one (Uprobes). */
export interface ProcessUprobes {
  register_uprobe(u: Uprobe): number
  unregister_uprobe(u: Uprobe): void
  register_uretprobe(rp: Uretprobe): number
  unregister_uretprobe(rp: Uretprobe): void
  isRegistered(u: Uprobe): boolean
  /** Run fn with insertions made as they are, no quiesce (the mapping process is where the caller is). */
  withoutQuiesce(fn: () => void): void
}

/** The probe in one process at one address. */
interface Installed {
  mm: Mm
  vaddr: number
  entry: Uprobe
  ret: Uretprobe | null
}

/** struct uprobe of the inode API: one (inode, offset), its consumers, where it is installed. */
interface InodeUprobe {
  inode: RegularFile
  offset: number
  consumers: UprobeConsumer[]
  /** By tgid, then by address (a file may be mapped twice). */
  installed: Map<number, Map<number, Installed>>
}

export class InodeUprobes {
  private readonly probes = new Map<RegularFile, Map<number, InodeUprobe>>()

  constructor(
    private readonly kernel: Kernel,
    private readonly procs: ProcessUprobes,
  ) {
    kernel.mmapHooks.push((task, vma) => this.uprobeMmap(task, vma))
  }

  /**
   * uprobe_register: uc on the instruction at `offset` of the file (a path in the guest's filesystem,
   * or its inode). 0; -ENOENT no such file; -EINVAL not a regular file, offset past its end, an
   * instruction that cannot be probed, uc already there; -EPERM where the caller cannot sleep; or what
   * inserting it into a process that maps the file returned (then nothing is left registered).
   */
  uprobe_register(file: string | RegularFile, offset: number, uc: UprobeConsumer): number {
    if (this.kernel.in_atomic()) return -EPERM
    const inode = this.inodeOf(file)
    if (typeof inode === 'number') return inode
    if (!uc || (!uc.handler && !uc.ret_handler)) return -EINVAL
    if (!Number.isInteger(offset) || offset < 0 || offset >= inode.size()) return -EINVAL
    // The instruction as the file has it: refused now rather than at some later mmap.
    const arch = arch_uprobe_analyze_insn(inode.readAt(offset, MAX_UINSN_BYTES), offset)
    if (typeof arch === 'number') return arch
    let byOffset = this.probes.get(inode)
    if (!byOffset) {
      byOffset = new Map()
      this.probes.set(inode, byOffset)
    }
    let probe = byOffset.get(offset)
    if (!probe) {
      probe = { inode, offset, consumers: [], installed: new Map() }
      byOffset.set(offset, probe)
    }
    if (probe.consumers.includes(uc)) return -EINVAL
    probe.consumers.push(uc)
    for (const task of this.threadGroups()) {
      for (const vma of task.mm.vmas) {
        const vaddr = vaddrIn(vma, probe)
        if (vaddr === null) continue
        const err = this.install(probe, task, vaddr, UPROBE_FILTER_REGISTER)
        if (err !== 0) {
          this.uprobe_unregister(inode, offset, uc)
          return err
        }
      }
    }
    return 0
  }

  /** uprobe_unregister: uc goes; the breakpoints go from every process when the last consumer does. */
  uprobe_unregister(file: string | RegularFile, offset: number, uc: UprobeConsumer): void {
    const inode = this.inodeOf(file)
    if (typeof inode === 'number') return
    const probe = this.probes.get(inode)?.get(offset)
    if (!probe?.consumers.includes(uc)) return
    probe.consumers.splice(probe.consumers.indexOf(uc), 1)
    for (const [tgid, byVaddr] of probe.installed)
      for (const [vaddr, inst] of byVaddr) {
        if (!this.procs.isRegistered(inst.entry)) {
          byVaddr.delete(vaddr)
          continue
        }
        if (!this.wanted(probe, inst.mm, vaddr, UPROBE_FILTER_UNREGISTER)) this.uninstall(probe, tgid, inst)
        else if (inst.ret && !probe.consumers.some((c) => c.ret_handler)) {
          this.procs.unregister_uretprobe(inst.ret)
          inst.ret = null
        }
      }
    if (probe.consumers.length === 0) this.probes.get(inode)?.delete(offset)
  }

  /** dup_mmap: a fork child maps what its parent maps; the file probes go into its copy too. */
  uprobeDupMmap(child: Task): void {
    for (const vma of [...child.mm.vmas]) this.uprobeMmap(child, vma)
  }

  /** Where (inode, offset) is mapped in task's address space, or null: for @+OFFSET fetches. */
  vaddrOf(file: RegularFile, offset: number, task: Task): number | null {
    for (const vma of task.mm.vmas) {
      if (vma.file !== file || vma.pgoff === undefined) continue
      if (offset >= vma.pgoff && offset < vma.pgoff + (vma.end - vma.start))
        return vma.start + offset - vma.pgoff
    }
    return null
  }

  private inodeOf(file: string | RegularFile): RegularFile | number {
    if (file instanceof RegularFile) return file
    const node = this.kernel.vfs.lookup(file)
    if (typeof node === 'number') return node === -ENOENT ? -ENOENT : node
    return node instanceof RegularFile ? node : -EINVAL
  }

  /** One live task per thread group (the breakpoint goes in its mm once). */
  private threadGroups(): Task[] {
    const seen = new Set<number>()
    const out: Task[] = []
    for (const t of this.kernel.tasks.values()) {
      if (t.state === 'zombie' || seen.has(t.tgid)) continue
      seen.add(t.tgid)
      out.push(t)
    }
    return out
  }

  /** filter_chain: does some consumer want this address space (probed at vaddr)? (no filter: every one) */
  private wanted(probe: InodeUprobe, mm: Mm, vaddr: number, ctx: number): boolean {
    const site = { what: 'uprobe consumer filter', vaddr, mm, regs: null }
    return probe.consumers.some(
      (c) =>
        !c.filter ||
        callUprobeUser(this.kernel, { ...site, fn: c.filter }, () => c.filter?.(c, ctx, mm) ?? true, false),
    )
  }

  /** uprobe_mmap: an executable mapping of a probed file was just made in task's mm. */
  private uprobeMmap(task: Task, vma: Vma): void {
    const byOffset = vma.file ? this.probes.get(vma.file) : undefined
    if (!byOffset) return
    // Like Linux's uprobe_mmap, no other thread is stopped: the int3 is one byte, written whole.
    this.procs.withoutQuiesce(() => {
      for (const probe of byOffset.values()) {
        const vaddr = vaddrIn(vma, probe)
        if (vaddr !== null) this.install(probe, task, vaddr, UPROBE_FILTER_MMAP)
      }
    })
  }

  /** Put the probe (entry, and return probe if wanted) in task's process at vaddr; 0 or -errno. */
  private install(probe: InodeUprobe, task: Task, vaddr: number, ctx: number): number {
    let byVaddr = probe.installed.get(task.tgid)
    if (!byVaddr) {
      byVaddr = new Map()
      probe.installed.set(task.tgid, byVaddr)
    }
    let inst = byVaddr.get(vaddr)
    // One dropped by the process's exec or exit (a new image may reuse the tgid and the address).
    if (inst && (inst.mm !== task.mm || !this.procs.isRegistered(inst.entry))) {
      byVaddr.delete(vaddr)
      inst = undefined
    }
    if (!this.wanted(probe, task.mm, vaddr, ctx)) return 0
    if (!inst) {
      const mm = task.mm
      const entry: Uprobe = {
        pid: task.pid,
        vaddr,
        handler: (_u, regs) => this.handlerChain(probe, task.tgid, mm, vaddr, regs),
      }
      const ret = this.procs.register_uprobe(entry)
      if (ret !== 0) return ret
      inst = { mm, vaddr, entry, ret: null }
      byVaddr.set(vaddr, inst)
    }
    if (!inst.ret && probe.consumers.some((c) => c.ret_handler)) {
      const rp: Uretprobe = {
        u: { pid: task.pid, vaddr },
        handler: (ri, regs) => {
          const site = { what: 'uprobe consumer ret_handler', vaddr: ri.func, mm: task.mm, regs }
          for (const c of [...probe.consumers])
            if (c.ret_handler)
              callUprobeUser(
                this.kernel,
                { ...site, fn: c.ret_handler },
                () => c.ret_handler?.(c, ri.func, regs),
                0,
              )
        },
      }
      const ret = this.procs.register_uretprobe(rp)
      if (ret !== 0) return ret
      inst.ret = rp
    }
    return 0
  }

  private uninstall(probe: InodeUprobe, tgid: number, inst: Installed): void {
    if (inst.ret) this.procs.unregister_uretprobe(inst.ret)
    this.procs.unregister_uprobe(inst.entry)
    probe.installed.get(tgid)?.delete(inst.vaddr)
  }

  /**
   * handler_chain: every consumer's handler in registration order. If each asked UPROBE_HANDLER_REMOVE,
   * the breakpoint leaves this address space (after this hit; unapply_uprobe).
   */
  private handlerChain(probe: InodeUprobe, tgid: number, mm: Mm, vaddr: number, regs: PtRegsFrame): void {
    let remove = true
    const site = { what: 'uprobe consumer handler', vaddr, mm, regs }
    for (const c of [...probe.consumers]) {
      // A consumer without an entry handler (a return probe's) needs the breakpoint.
      const rc = c.handler
        ? callUprobeUser(this.kernel, { ...site, fn: c.handler }, () => c.handler?.(c, regs) ?? 0, 0)
        : 0
      if (rc !== UPROBE_HANDLER_REMOVE) remove = false
    }
    if (!remove) return
    const inst = [...(probe.installed.get(tgid)?.values() ?? [])].find((i) => i.mm === mm)
    if (inst) this.uninstall(probe, tgid, inst)
  }
}

/** The address of probe's offset in an executable mapping of its file, or null. */
function vaddrIn(vma: Vma, probe: InodeUprobe): number | null {
  if (vma.file !== probe.inode || vma.pgoff === undefined || (vma.prot & PROT_EXEC) === 0) return null
  const at = vma.start + probe.offset - vma.pgoff
  return at >= vma.start && at < vma.end ? at : null
}
