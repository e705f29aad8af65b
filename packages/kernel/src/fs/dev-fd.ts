// /dev/fd: the calling process's open files by descriptor number, with
// /dev/stdin, /dev/stdout and /dev/stderr linking to fd/0, fd/1 and fd/2
// (as on Linux, where they lead to /proc/self/fd). Looking up fd/N finds
// the inode open on descriptor N, so stat sees the pipe or file and open
// opens it again. Unlike Linux's magic links, the entries are not
// symlinks themselves (lstat and readlink see the file, not a link), and a
// listing (getdents64) shows the descriptors as of the last lookup.

import type { FdTable } from './files.js'
import { Directory, type Inode, Symlink } from './vfs.js'

export class FdDirectory extends Directory {
  /** files(): the descriptor table of the task whose call is being served. */
  constructor(
    parent: Directory,
    private readonly files: () => FdTable | undefined,
  ) {
    super(parent)
    this.perm = 0o500
  }

  override child(name: string): Inode | undefined {
    this.children.clear()
    const table = this.files()
    table?.fds.forEach((e, fd) => {
      if (e) this.children.set(String(fd), e.file.inode)
    })
    return /^(0|[1-9][0-9]*)$/.test(name) ? this.children.get(name) : undefined
  }
}

/** Make /dev/fd and the /dev/std* links in dev. */
export function makeDevFd(dev: Directory, files: () => FdTable | undefined): void {
  dev.children.set('fd', new FdDirectory(dev, files))
  for (const [i, name] of ['stdin', 'stdout', 'stderr'].entries())
    dev.children.set(name, new Symlink(`fd/${i}`))
}
