// /proc/PID (fs/proc/base.c tgid_base_stuff): one directory a task, with
// exe, cwd and root links made when they are looked at (exec, chdir and
// chroot change them), and files whose text is made when read. A task
// without an mm (a zombie) has no exe, cwd or root link, as on Linux.

import type { Kernel } from '../../kernel.js'
import type { Task } from '../../sched/task.js'
import { dPathDir, taskRoot } from '../fs-struct.js'
import { type Directory, type Inode, S_IFREG, Symlink } from '../vfs.js'
import { showAuxv, showCmdline, showEnviron } from './cmdline.js'
import { ProcFdDirectory } from './fd-dir.js'
import { showMaps } from './maps.js'
import { ProcDirectory } from './proc-directory.js'
import { SeqFile } from './seq-file.js'
import { showStat } from './stat.js'
import { showStatus } from './status.js'

export class PidDirectory extends ProcDirectory {
  private readonly fixed: [string, Inode][]
  private readonly links = new Map<string, Symlink>()

  constructor(
    parent: Directory,
    private readonly kernel: Kernel,
    readonly task: Task,
  ) {
    super(parent)
    const owner = S_IFREG | 0o400
    this.fixed = [
      ['auxv', new SeqFile(() => showAuxv(task), owner)],
      ['cmdline', new SeqFile(() => showCmdline(task))],
      ['comm', new SeqFile(() => `${task.comm}\n`)],
      ['environ', new SeqFile(() => showEnviron(task), owner)],
      ['fd', new ProcFdDirectory(this, kernel, task)],
      ['maps', new SeqFile(() => showMaps(kernel, task))],
      ['stat', new SeqFile(() => showStat(kernel, task))],
      ['status', new SeqFile(() => showStatus(kernel, task))],
    ]
  }

  /** A link to target, the same inode while the target stays. */
  private link(name: string, target: string): Symlink {
    let l = this.links.get(name)
    if (l?.target !== target) {
      l = new Symlink(target)
      this.links.set(name, l)
    }
    return l
  }

  protected *entries(): Iterable<[string, Inode]> {
    yield* this.fixed
    const t = this.task
    if (t.state === 'zombie') return
    // As d_path shows them to the task looking (its root: chroot): the task's working directory and root.
    const viewer = this.kernel.entry.serving
    yield ['cwd', this.link('cwd', dPathDir(this.kernel.vfs, t.cwd, viewer))]
    yield ['root', this.link('root', dPathDir(this.kernel.vfs, taskRoot(this.kernel.vfs, t), viewer))]
    const exe = t.mm.execLayout?.exe
    if (exe !== undefined) yield ['exe', this.link('exe', exe)]
  }
}
