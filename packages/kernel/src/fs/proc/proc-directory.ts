// A /proc directory whose entries are computed when they are looked at
// (proc_readdir and proc_lookup over live tasks and open files), not kept:
// a path walk asks child(), getdents64 and getcwd read `children`, and both
// see the entries as they are at that moment (ls /proc/self/fd lists the
// descriptor ls itself opened the directory on, as on Linux).

import { Directory, type Inode } from '../vfs.js'

export abstract class ProcDirectory extends Directory {
  private readonly live: Map<string, Inode> = new LiveEntries(() => this.entries())

  override get children(): Map<string, Inode> {
    return this.live
  }

  constructor(parent: Directory, perm = 0o555) {
    super(parent)
    this.perm = perm
  }

  /** The entries as they are now. */
  protected abstract entries(): Iterable<[string, Inode]>

  override child(name: string): Inode | undefined {
    return this.children.get(name)
  }
}

/** A map that is made anew from compute() each time it is read. */
class LiveEntries extends Map<string, Inode> {
  constructor(private readonly compute: () => Iterable<[string, Inode]>) {
    super()
  }

  private refresh(): this {
    super.clear()
    for (const [name, inode] of this.compute()) super.set(name, inode)
    return this
  }

  override get(name: string): Inode | undefined {
    return this.refresh() && super.get(name)
  }
  override has(name: string): boolean {
    return this.refresh() && super.has(name)
  }
  override get size(): number {
    return this.refresh() && super.size
  }
  override entries(): MapIterator<[string, Inode]> {
    return this.refresh() && super.entries()
  }
  override keys(): MapIterator<string> {
    return this.refresh() && super.keys()
  }
  override values(): MapIterator<Inode> {
    return this.refresh() && super.values()
  }
  override [Symbol.iterator](): MapIterator<[string, Inode]> {
    return this.entries()
  }
  override forEach(fn: (inode: Inode, name: string, map: Map<string, Inode>) => void): void {
    this.refresh()
    super.forEach(fn)
  }
  /** Entries are made, not added or removed: a name created here does not stay. */
  override set(): this {
    return this
  }
  override delete(): boolean {
    return false
  }
  override clear(): void {}
}
