// /proc/PID/fd: a symbolic link for each open descriptor (proc_fd_link),
// whose target is the file's path, or "pipe:[ino]" / "socket:[ino]" for a
// file with no name (pipefs and sockfs name them so). Like Linux's magic
// links, following one reaches the open file itself: a path target is
// checked to lead to the same inode (d_path), and a "pipe:[ino]" target,
// relative, is looked up in this directory, which answers it with the
// pipe (the name is not listed). Both ends of one pipe share its number.

import type { Kernel } from '../../kernel.js'
import type { Task } from '../../sched/task.js'
import { O_ACCMODE, O_RDONLY, O_WRONLY, type OpenFile } from '../files.js'
import { Directory, type Inode, PipeEnd, S_IFLNK, S_IFMT, Symlink } from '../vfs.js'
import { dPath } from './d-path.js'
import { ProcDirectory } from './proc-directory.js'

const S_IFSOCK = 0o140000

/** The name a descriptor's file goes by (what readlink of fd/N says). */
export function fileName(kernel: Kernel, task: Task, f: OpenFile): string {
  const inode = f.inode
  // pipefs's and sockfs's names: one number a pipe (for both its ends), one a socket.
  if (inode instanceof PipeEnd) return `pipe:[${kernel.vfs.inoOf(inode.pipe)}]`
  if ((inode.mode & S_IFMT) === S_IFSOCK) return `socket:[${kernel.vfs.inoOf(inode)}]`
  if (inode instanceof Directory) return kernel.vfs.pathOf(inode)
  return dPath(kernel.vfs, task.cwd, f.path, inode)
}

/** A descriptor's link: its rights are the file's open mode (lr-x------ read, l-wx------ write), as proc_fd_link's. */
class FdLink extends Symlink {
  override readonly mode: number
  constructor(
    target: string,
    readonly flags: number,
  ) {
    super(target)
    const mode = flags & O_ACCMODE
    this.mode = S_IFLNK | (mode !== O_WRONLY ? 0o500 : 0) | (mode !== O_RDONLY ? 0o300 : 0)
  }
}

export class ProcFdDirectory extends ProcDirectory {
  /** The link made for each descriptor, kept while it names the same thing (stable inode numbers). */
  private readonly links = new Map<number, FdLink>()

  constructor(
    parent: Directory,
    private readonly kernel: Kernel,
    private readonly task: Task,
  ) {
    super(parent, 0o500)
  }

  protected *entries(): Iterable<[string, Inode]> {
    const fds = this.task.state === 'zombie' ? [] : this.task.files.fds
    for (let fd = 0; fd < fds.length; fd++) {
      const e = fds[fd]
      if (!e) {
        this.links.delete(fd)
        continue
      }
      const target = fileName(this.kernel, this.task, e.file)
      let link = this.links.get(fd)
      if (link?.target !== target || link.flags !== e.file.flags) {
        link = new FdLink(target, e.file.flags)
        this.links.set(fd, link)
      }
      yield [String(fd), link]
    }
  }

  override child(name: string): Inode | undefined {
    if (/^(pipe|socket):\[\d+\]$/.test(name)) {
      for (const e of this.task.files.fds)
        if (e && fileName(this.kernel, this.task, e.file) === name) return e.file.inode
      return undefined
    }
    return super.child(name)
  }
}
