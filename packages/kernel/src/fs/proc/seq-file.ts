// seq_file: a /proc file whose text is made by its show function when it is
// read. As seq_read does, the text is made on the first read and made anew
// whenever a read starts at offset 0 (a reader that seeks back sees fresh
// values, as top and free rely on), and one reading in parts reads one
// snapshot. stat reports size 0, as for Linux's /proc files.

import { EINVAL } from '../../errno.js'
import { utf8Encode } from '../../utf8.js'
import type { OpenFile } from '../files.js'
import { type Inode, S_IFREG } from '../vfs.js'

export class SeqFile implements Inode {
  readonly seekable = true
  nlink = 1
  mtime = 0
  /** What each open file of it read last (its snapshot). */
  private readonly snapshots = new WeakMap<OpenFile, Uint8Array>()

  constructor(
    private readonly show: () => string | Uint8Array,
    readonly mode = S_IFREG | 0o444,
  ) {}

  size(): number {
    return 0
  }

  read(f: OpenFile, count: number): Uint8Array {
    let text = this.snapshots.get(f)
    if (!text || f.pos === 0) {
      const s = this.show()
      text = typeof s === 'string' ? utf8Encode(s) : s
      this.snapshots.set(f, text)
    }
    const out = text.slice(f.pos, f.pos + count)
    f.pos += out.length
    return out
  }

  /** No write operation: vfs_write's EINVAL. */
  write(_f: OpenFile, _data: Uint8Array): number {
    return -EINVAL
  }
}
