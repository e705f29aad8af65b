// The /proc root (fs/proc/root.c): the system-wide files, /proc/self, and
// a directory for each process (proc_pid_readdir lists thread group
// leaders; a thread's own id can still be looked up, as on Linux). "self"
// links to the thread group of whichever task is asking: the one whose
// system call the kernel is serving.

import type { Kernel } from '../../kernel.js'
import type { Task } from '../../sched/task.js'
import type { Directory, Inode } from '../vfs.js'
import { Symlink } from '../vfs.js'
import { showCpuinfo } from './cpuinfo.js'
import { showFilesystems } from './filesystems.js'
import { showKallsyms } from './kallsyms.js'
import { showMeminfo } from './meminfo.js'
import { showMounts } from './mounts.js'
import { PidDirectory } from './pid-dir.js'
import { ProcDirectory } from './proc-directory.js'
import { SeqFile } from './seq-file.js'
import { ProcSysDirectory } from './sys-dir.js'

export class ProcRoot extends ProcDirectory {
  private readonly fixed: [string, Inode][]
  private readonly pidDirs = new WeakMap<Task, PidDirectory>()
  private readonly selfLinks = new Map<number, Symlink>()

  constructor(
    parent: Directory,
    private readonly kernel: Kernel,
  ) {
    super(parent)
    this.fixed = [
      ['cpuinfo', new SeqFile(() => showCpuinfo(kernel.machine.cpus))],
      ['filesystems', new SeqFile(showFilesystems)],
      ['kallsyms', new SeqFile(() => showKallsyms(kernel.kallsyms))],
      ['meminfo', new SeqFile(() => showMeminfo(kernel.machine))],
      ['mounts', new SeqFile(showMounts)],
      ['sys', new ProcSysDirectory(this, kernel, '')],
    ]
  }

  private pidDir(t: Task): PidDirectory {
    let d = this.pidDirs.get(t)
    if (!d) {
      d = new PidDirectory(this, this.kernel, t)
      this.pidDirs.set(t, d)
    }
    return d
  }

  /** /proc/self for the asking task (none when the host itself looks). */
  private self(): Symlink | undefined {
    const t = this.kernel.entry.serving
    if (!t) return undefined
    let l = this.selfLinks.get(t.tgid)
    if (!l) {
      l = new Symlink(String(t.tgid))
      this.selfLinks.set(t.tgid, l)
    }
    return l
  }

  protected *entries(): Iterable<[string, Inode]> {
    yield* this.fixed
    const self = this.self()
    if (self) yield ['self', self]
    for (const t of this.kernel.tasks.values())
      if (t.isThreadGroupLeader) yield [String(t.pid), this.pidDir(t)]
  }

  override child(name: string): Inode | undefined {
    if (/^[1-9][0-9]*$/.test(name)) {
      const t = this.kernel.tasks.get(Number(name))
      return t ? this.pidDir(t) : undefined
    }
    return super.child(name)
  }
}

/** Mount /proc. */
export function mountProc(kernel: Kernel): void {
  kernel.vfs.root.children.set('proc', new ProcRoot(kernel.vfs.root, kernel))
}
