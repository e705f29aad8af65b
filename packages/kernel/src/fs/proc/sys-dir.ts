// /proc/sys (fs/proc/proc_sysctl.c): a directory per level of the
// registered sysctl names, and a file per setting: reading gives its value,
// writing sets it (the whole value in one write, as proc_dointvec takes it),
// a bad value is EINVAL. Only root may write (mode 0644).

import { ENOENT } from '../../errno.js'
import type { Kernel } from '../../kernel.js'
import { utf8Decode } from '../../utf8.js'
import type { OpenFile } from '../files.js'
import { type Directory, type Inode, S_IFREG } from '../vfs.js'
import { ProcDirectory } from './proc-directory.js'
import { SeqFile } from './seq-file.js'

/** A setting's file: a seq_file for reading, the setting's write for writing. */
class SysctlFile extends SeqFile {
  constructor(
    private readonly kernel: Kernel,
    private readonly path: string,
  ) {
    super(() => kernel.sysctls.get(path)?.read() ?? '', S_IFREG | 0o644)
  }

  override write(f: OpenFile, data: Uint8Array): number {
    const e = this.kernel.sysctls.get(this.path)
    if (!e) return -ENOENT
    const r = e.write(utf8Decode(data))
    if (r < 0) return r
    f.pos += data.length
    return data.length
  }
}

export class ProcSysDirectory extends ProcDirectory {
  private readonly nodes = new Map<string, Inode>()

  constructor(
    parent: Directory,
    private readonly kernel: Kernel,
    /** This directory's path under /proc/sys ('' for /proc/sys itself). */
    private readonly prefix: string,
  ) {
    super(parent)
  }

  protected *entries(): Iterable<[string, Inode]> {
    const base = this.prefix === '' ? '' : `${this.prefix}/`
    const seen = new Set<string>()
    for (const path of this.kernel.sysctls.paths()) {
      if (!path.startsWith(base)) continue
      const rest = path.slice(base.length)
      const name = rest.split('/')[0]
      if (seen.has(name)) continue
      seen.add(name)
      const full = base + name
      let node = this.nodes.get(full)
      if (!node) {
        node = rest.includes('/')
          ? new ProcSysDirectory(this, this.kernel, full)
          : new SysctlFile(this.kernel, full)
        this.nodes.set(full, node)
      }
      yield [name, node]
    }
  }
}
