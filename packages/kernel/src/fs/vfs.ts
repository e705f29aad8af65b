// An in-memory file system: directories, regular files, character devices
// and pipes, plus read-only host mounts through the HostDirectory interface
// (the command line supplies one backed by the real file system; this
// package itself uses no Node API).

import {
  EBUSY,
  EEXIST,
  EFBIG,
  EINVAL,
  EISDIR,
  ELOOP,
  ENAMETOOLONG,
  ENOENT,
  ENOSPC,
  ENOTDIR,
  ENOTEMPTY,
  EPIPE,
  EROFS,
} from '../errno.js'
import { utf8Encode } from '../utf8.js'
import type { OpenFile, WouldBlock } from './files.js'
import { SHMEM_PAGE, type ShmemOrphan, ShmemPages, ShmemSb } from './shmem.js'

export { ShmemSb } from './shmem.js'

export const S_IFMT = 0o170000
export const S_IFREG = 0o100000
export const S_IFDIR = 0o040000
export const S_IFCHR = 0o020000
export const S_IFIFO = 0o010000
export const S_IFLNK = 0o120000

/** The kernel's default files (writeDefaultFile) that a host entry of the same name replaces. */
const hostReplaces = new WeakSet<Inode>()

export interface Inode {
  readonly mode: number
  readonly seekable: boolean
  size(): number
  read(f: OpenFile, count: number): Uint8Array | number | WouldBlock
  write(f: OpenFile, data: Uint8Array): number | WouldBlock
  open?(f: OpenFile): void
  close?(f: OpenFile): void
  /** For directories. */
  children?: Map<string, Inode>
  /** On a read-only mount (EROFS for writes, chmod, W_OK). */
  readonly readOnly?: boolean
  /** Device ioctl (TCGETS on the console). */
  ioctl?(request: number): number
  /** Ready events (POLLIN, POLLOUT, POLLERR, POLLHUP) for poll; without it, always readable and writable. */
  poll?(f: OpenFile): number
  nlink: number
  mtime: number
  /** Owner and group (st_uid, st_gid); 0, root's, when absent. */
  uid?: number
  gid?: number
  /** st_blocks in 512-byte units; without it, as tmpfs counts them (see inodeBlocks). */
  blocks?(): number
}

/** st_blocks: what the inode says (a host file's: the host's), else tmpfs's count: whole pages of a regular file's data. */
export function inodeBlocks(node: Inode): number {
  if (node.blocks) return node.blocks()
  return (node.mode & S_IFMT) === S_IFREG ? Math.ceil(node.size() / 4096) * 8 : 0
}

/** The largest file offset a number holds exactly (tmpfs's s_maxbytes is 2^63 - 1). */
const MAX_FILE_SIZE = Number.MAX_SAFE_INTEGER

/**
 * A regular file of the in-memory file system (tmpfs): its bytes are pages
 * charged to the file system's size limit (ShmemSb), given back when the
 * file is truncated or its last name and last open file are gone.
 */
export class RegularFile implements Inode, ShmemOrphan {
  readonly seekable = true
  nlink = 1
  mtime = 0
  uid = 0
  gid = 0
  protected length = 0
  protected readonly pages: ShmemPages
  /** Bumped by every change of the bytes: the page cache's pages of an older version are stale. */
  version = 0
  /** Without a name yet may get one (I_LINKABLE: an O_TMPFILE file opened without O_EXCL). */
  linkable = false
  /** Open files on it and directory entries naming it (nlink may also count a host file's other names). */
  private opens = 0
  private entries = 1
  private freed = false
  constructor(
    initial: Uint8Array = new Uint8Array(0),
    public mode = S_IFREG | 0o644,
    sb: ShmemSb = new ShmemSb(),
  ) {
    this.pages = new ShmemPages(sb)
    // What the kernel lays in itself is charged but always fits.
    this.length = this.pages.write(0, initial, true)
  }
  get sb(): ShmemSb {
    return this.pages.sb
  }
  size(): number {
    return this.length
  }
  /** st_blocks: the pages it holds (a hole holds none), as tmpfs counts them. */
  blocks(): number {
    return this.pages.count * 8
  }
  /** The whole file (exec, ELF parsing): never more than one read may return (the guest's RAM). */
  contents(): Uint8Array {
    return this.readAt(0, this.size())
  }
  read(f: OpenFile, count: number): Uint8Array {
    const out = this.readAt(f.pos, count)
    f.pos += out.length
    return out
  }
  readAt(pos: number, count: number): Uint8Array {
    const n = Math.max(0, Math.min(this.length - pos, count, this.sb.maxRead))
    const out = new Uint8Array(n)
    if (n > 0) this.pages.readInto(pos, out)
    return out
  }
  write(f: OpenFile, data: Uint8Array): number {
    if ((f.flags & 0o2000) !== 0) f.pos = this.size() // O_APPEND
    const n = this.writeAt(f.pos, data)
    if (n > 0) f.pos += n
    return n
  }
  /** What fits: a short count when the file system fills part way, ENOSPC when nothing did. */
  writeAt(pos: number, data: Uint8Array): number {
    if (pos + data.length > MAX_FILE_SIZE) return -EFBIG
    if (data.length === 0) return 0
    const n = this.pages.write(pos, data)
    if (n === 0) return -ENOSPC
    this.version++
    this.length = Math.max(this.length, pos + n)
    return n
  }
  /** SEEK_DATA (data) or SEEK_HOLE from start, within the size: the offset, or -ENXIO. */
  seekHoleData(start: bigint, data: boolean): bigint | number {
    return this.pages.seekHoleData(start, BigInt(this.size()), data)
  }
  /** Growing makes a hole (no space taken); shrinking gives the pages past the end back. 0 or -errno. */
  truncate(len: number): number {
    if (!(len >= 0) || len >= 2 ** 63) return -EINVAL // loff_t: a negative length
    if (len > MAX_FILE_SIZE) return -EFBIG
    this.version++
    if (len < this.length) this.pages.truncate(len)
    this.length = len
    return 0
  }
  /**
   * fallocate: mode 0 reserves the pages of [offset, offset + len) and grows the file to cover them;
   * FALLOC_FL_KEEP_SIZE (1) leaves the size; FALLOC_FL_PUNCH_HOLE (2, with KEEP_SIZE) frees them.
   * All of the space or ENOSPC, as shmem_fallocate. 0 or -errno.
   */
  fallocate(mode: number, offset: number, len: number): number {
    if ((mode & 2) !== 0) {
      this.version++
      if (offset < this.length) this.pages.punch(offset, Math.min(len, this.length - offset))
      return 0
    }
    if (offset + len > MAX_FILE_SIZE) return -EFBIG
    this.version++
    if (!this.pages.allocate(Math.floor(offset / SHMEM_PAGE), Math.ceil((offset + len) / SHMEM_PAGE)))
      return -ENOSPC
    if ((mode & 1) === 0) this.length = Math.max(this.length, offset + len)
    return 0
  }
  open(): void {
    this.opens++
  }
  close(): void {
    this.opens--
    this.release()
  }
  /** A directory entry now names it (link). */
  linked(): void {
    this.entries++
  }
  /** A directory entry naming it is gone (unlink, rename over it). */
  unlinked(): void {
    this.entries--
    this.release()
  }
  /** With no name and no open file left, the pages go back (once no mapping holds them either). */
  private release(): void {
    if (this.entries > 0 || this.opens > 0 || this.freed) return
    if (!this.reclaim()) this.sb.orphan(this)
  }
  reclaim(): boolean {
    if (this.freed || this.entries > 0 || this.opens > 0) return true
    if (this.sb.mapped(this)) return false
    this.freed = true
    this.pages.clear()
    this.version++
    for (const hook of this.sb.evictHooks) hook(this)
    return true
  }
}

/**
 * A directory's own entries as tmpfs keeps them (fs/libfs.c's simple_offset):
 * in d_children order, newest (made or moved in last) first, and each with
 * its directory offset, handed out in turn from 3 (readdir's positions).
 */
export class Dentries extends Map<string, Inode> {
  private static moved = 0
  private readonly order = new Map<string, number>()
  private readonly offsets = new Map<string, number>()
  private nextOffset = DIR_OFFSET_MIN
  override set(name: string, node: Inode): this {
    if (!super.has(name)) {
      this.order.set(name, ++Dentries.moved)
      this.offsets.set(name, this.nextOffset)
      this.nextOffset = this.nextOffset >= DIR_OFFSET_MAX ? DIR_OFFSET_MIN : this.nextOffset + 1
    }
    return super.set(name, node)
  }
  override delete(name: string): boolean {
    this.order.delete(name)
    this.offsets.delete(name)
    return super.delete(name)
  }
  override clear(): void {
    this.order.clear()
    this.offsets.clear()
    super.clear()
  }
  /** The name's place in d_children (a larger number: nearer the head) and its offset. */
  placeOf(name: string): { order: number; offset: number } {
    return { order: this.order.get(name) ?? 0, offset: this.offsets.get(name) ?? 0 }
  }
  /** The dentry under name moved to the head (d_move); it keeps offset when given (a rename over a name). */
  moved(name: string, offset?: number): void {
    if (!super.has(name)) return
    this.order.set(name, ++Dentries.moved)
    if (offset) this.offsets.set(name, offset)
  }
}

/** simple_offset's range: offsets 0 and 1 are the dots, 2 the first entry, S32_MAX the end. */
export const DIR_OFFSET_FIRST = 2
export const DIR_OFFSET_EOD = 0x7fffffff
const DIR_OFFSET_MIN = 3
const DIR_OFFSET_MAX = DIR_OFFSET_EOD - 1

export class Directory implements Inode {
  perm = 0o755
  get mode(): number {
    return S_IFDIR | this.perm
  }
  readonly seekable = true
  nlink = 2
  mtime = 0
  uid = 0
  gid = 0
  /** A host directory's st_size and st_blocks (a guest directory's are 4096 and 0). */
  hostSize?: number
  hostBlocks?: number
  /** In a read-only mount: creating, removing or renaming entries is EROFS. */
  readOnly = false
  /** Removed (S_DEAD): nothing is looked up or created in it any more, though it may still be open or a cwd. */
  dead = false
  private readonly own = new Dentries()
  /** Entries not read yet: a host directory's, read on first use (one level at a time). */
  private pending: ((into: Map<string, Inode>) => void)[] = []
  constructor(public parent: Directory | null = null) {}
  get children(): Map<string, Inode> {
    if (this.pending.length > 0) {
      const fills = this.pending
      this.pending = []
      for (const fill of fills) fill(this.own)
    }
    return this.own
  }
  /** Forget every entry (a mount covers the directory). */
  reset(): void {
    this.pending = []
    this.own.clear()
  }
  /** Lay more entries under this directory's own, read when first needed; a name it has already wins. */
  underlay(fill: (into: Map<string, Inode>) => void): void {
    this.pending.push(fill)
  }
  /** The entry a path walk finds under name (a directory whose entries are computed overrides it). */
  child(name: string): Inode | undefined {
    return this.children.get(name)
  }
  size(): number {
    return this.hostSize ?? 4096
  }
  blocks(): number {
    return this.hostBlocks ?? 0
  }
  read(): number {
    return -EISDIR
  }
  write(): number {
    return -EISDIR
  }
}

/** A symbolic link: its target path, resolved when a walk passes through it. */
export class Symlink implements Inode {
  readonly mode = S_IFLNK | 0o777
  readonly seekable = false
  nlink = 1
  mtime = 0
  uid = 0
  gid = 0
  /** A host symlink's st_blocks (a long target takes a block on ext4). */
  hostBlocks?: number
  constructor(readonly target: string) {}
  size(): number {
    return utf8Encode(this.target).length
  }
  blocks(): number {
    return this.hostBlocks ?? 0
  }
  read(): number {
    return -EINVAL
  }
  write(): number {
    return -EINVAL
  }
}

/** A character device: the console, /dev/null, /dev/zero. */
export class CharDevice implements Inode {
  mode = S_IFCHR | 0o666
  readonly seekable = false
  nlink = 1
  mtime = 0
  constructor(
    private readonly onRead: (count: number) => Uint8Array | WouldBlock,
    private readonly onWrite: (data: Uint8Array) => number,
    private readonly tty: boolean | (() => boolean) = false,
  ) {}
  size(): number {
    return 0
  }
  read(_f: OpenFile, count: number): Uint8Array | WouldBlock {
    return this.onRead(count)
  }
  write(_f: OpenFile, data: Uint8Array): number {
    return this.onWrite(data)
  }
  /** TCGETS succeeds on a terminal (so libc line-buffers it); ENOTTY elsewhere. */
  ioctl(request: number): number {
    const tty = typeof this.tty === 'function' ? this.tty() : this.tty
    if (request === 0x5401 || request === 0x5413) return tty ? 0 : -25
    return -25
  }
}

/** One end's view of a pipe buffer. */
export class Pipe {
  readonly buffer: number[] = []
  readers = 0
  writers = 0
  static readonly CAPACITY = 65536
  /** Bytes it holds before writers wait (F_GETPIPE_SZ / F_SETPIPE_SZ). */
  capacity = Pipe.CAPACITY

  /** pipe_set_size: a power-of-two number of pages, never below what the pipe holds now. */
  resize(size: number): number {
    if (size <= 0 || size > 0x8000_0000) return -EINVAL
    let n = 4096
    while (n < size) n *= 2
    if (n < this.buffer.length) return -EBUSY
    this.capacity = n
    return n
  }
}

export class PipeEnd implements Inode {
  mode = S_IFIFO | 0o600
  readonly seekable = false
  nlink = 1
  mtime = 0
  constructor(
    readonly pipe: Pipe,
    readonly isWriter: boolean,
  ) {}
  size(): number {
    return this.pipe.buffer.length
  }
  open(): void {
    if (this.isWriter) this.pipe.writers++
    else this.pipe.readers++
  }
  close(): void {
    if (this.isWriter) this.pipe.writers--
    else this.pipe.readers--
  }
  read(_f: OpenFile, count: number): Uint8Array | WouldBlock {
    const p = this.pipe
    if (p.buffer.length === 0) {
      if (p.writers === 0) return new Uint8Array(0)
      return { wouldBlock: true, ready: () => p.buffer.length > 0 || p.writers === 0 }
    }
    return Uint8Array.from(p.buffer.splice(0, count))
  }
  /** pipe_poll: data or no writer left (HUP) for a reader; room, or no reader left (ERR), for a writer. */
  poll(): number {
    const p = this.pipe
    if (!this.isWriter) return (p.buffer.length > 0 ? 0x1 : 0) | (p.writers === 0 ? 0x10 : 0)
    return (p.buffer.length < p.capacity ? 0x4 : 0) | (p.readers === 0 ? 0x8 : 0)
  }
  write(_f: OpenFile, data: Uint8Array): number | WouldBlock {
    const p = this.pipe
    if (p.readers === 0) return -EPIPE
    const room = p.capacity - p.buffer.length
    if (room <= 0) return { wouldBlock: true, ready: () => p.buffer.length < p.capacity || p.readers === 0 }
    const n = Math.min(room, data.length)
    for (let i = 0; i < n; i++) p.buffer.push(data[i])
    return n
  }
}

/** A host directory tree the guest may see (the CLI's adapter reads the host's file system). */
export interface HostDirectory {
  /** Entry names of a directory, relative to the tree's root ('' is the root), or null. */
  list(path: string): string[] | null
  /** lstat: what the entry itself is (a symlink is not followed), or null. */
  stat(path: string): HostStat | null
  /**
   * pread: at most length bytes of a file from offset (fewer at its end), or null. Files are read
   * range by range as the guest touches them, never whole, so a huge or sparse one stays cheap.
   */
  read(path: string, offset: number, length: number): Uint8Array | null
}

export interface HostStat {
  type: 'file' | 'dir' | 'symlink'
  /** st_size: a file's length, a symlink's target's, a directory's as the host's file system reports it. */
  size: number
  /** Permission bits (0o7777); the type bits are implied by type. Default 0o755 / 0o644. */
  perm?: number
  /** Modification time, seconds since the epoch. */
  mtime?: number
  /** A symlink's target, as the host's readlink gives it. */
  target?: string
  /** Owner and group (st_uid, st_gid). Default 0 (root). */
  uid?: number
  gid?: number
  /** st_nlink. Default 1, 2 for a directory. */
  nlink?: number
  /** st_blocks, in 512-byte units. Default: tmpfs's count (whole pages of a file's data; 0 for the rest). */
  blocks?: number
}

export interface MountOptions {
  /** Writes are refused with EROFS (default). Otherwise they change an in-memory copy only: the host is never written. */
  readOnly?: boolean
  /** Guest directories whose own entries hide the host's entirely (/dev, /proc: the kernel's). */
  hide?: readonly string[]
}

/** nd->last_type: what a path's last component is. */
export const LAST_NORM = 0
export const LAST_ROOT = 1
export const LAST_DOT = 2
export const LAST_DOTDOT = 3

/** Lookup flags (include/linux/namei.h): follow a trailing symlink; the result must be a directory. */
export const LOOKUP_FOLLOW = 0x1
export const LOOKUP_DIRECTORY = 0x2

/** walk_component's flags: the path's own last component; more components follow. */
const WALK_TRAILING = 1
const WALK_MORE = 2

/** MAXSYMLINKS: symlinks one lookup may follow in all. */
const MAXSYMLINKS = 40

/** struct nameidata, as far as a walk over this file system needs it. */
export interface Nameidata {
  /** Where the walk stands: after link_path_walk the directory holding the last component, after a full lookup what the path names. */
  inode: Inode
  /** The last component, and its type (LAST_*). */
  last: string
  type: number
  /** A slash followed the last component (nd->last.name[nd->last.len] != 0). */
  trailing: boolean
  /** LOOKUP_FOLLOW, LOOKUP_DIRECTORY. */
  flags: number
  /** Symlinks followed so far (nd->total_link_count). */
  links: number
  /** nd->root: where an absolute path or symlink starts and ".." stops (the task's root: chroot). */
  root: Directory
}

const skipSlashes = (s: string): string => {
  let k = 0
  while (s.charCodeAt(k) === 47) k++
  return k === 0 ? s : s.slice(k)
}

/** NAME_MAX: a path component of more than 255 bytes. */
const nameTooLong = (name: string): boolean =>
  name.length > 255 || (name.length > 85 && utf8Encode(name).length > 255)

/** The file system tree and path walking. */
export class Vfs {
  readonly root = new Directory()
  /** tmpfs's size limit and accounting (the kernel sets it: half of RAM by default). */
  readonly shmem = new ShmemSb()
  /**
   * st_ino: numbered by this kernel's file system in the order programs first see the inodes (the
   * root is 1), so a run's numbers never depend on other kernels made in the same process.
   */
  private readonly inos = new WeakMap<object, number>()
  private nextIno = 1

  constructor() {
    this.root.parent = this.root
    this.inoOf(this.root)
  }

  /** The inode number of an inode (or of a pipe, for pipefs's names), given when it is first asked for. */
  inoOf(node: object): number {
    let ino = this.inos.get(node)
    if (ino === undefined) {
      ino = this.nextIno++
      this.inos.set(node, ino)
    }
    return ino
  }

  /** Resolve an absolute or cwd-relative path (symlinks followed, the last one too unless nofollow). */
  lookup(path: string, cwd: Directory = this.root, nofollow = false, root = this.root): Inode | number {
    if (path === '') return -ENOENT
    const nd = this.nameidata(cwd, path, nofollow ? 0 : LOOKUP_FOLLOW, root)
    const r = this.pathLookupat(nd, path)
    return r < 0 ? r : nd.inode
  }

  /** path_init's state for a walk from start (root, the task's, for an absolute path). */
  nameidata(start: Inode, path: string, flags = 0, root = this.root): Nameidata {
    return {
      root,
      inode: path.startsWith('/') ? root : start,
      last: '',
      type: LAST_ROOT,
      trailing: false,
      flags,
      links: 0,
    }
  }

  /**
   * link_path_walk: every component but the last, symlinks on the way
   * followed (a nested one's last component too); each component walked
   * through must be a directory (ENOTDIR). 0 or -errno; nd holds the last
   * component and the directory it is in.
   */
  linkPathWalk(nd: Nameidata, path: string): number {
    const stack: string[] = []
    let name = skipSlashes(path)
    if (name === '') return 0
    for (;;) {
      const slash = name.indexOf('/')
      const comp = slash < 0 ? name : name.slice(0, slash)
      nd.last = comp
      nd.type = comp === '..' ? LAST_DOTDOT : comp === '.' ? LAST_DOT : LAST_NORM
      const rest = slash < 0 ? '' : skipSlashes(name.slice(slash))
      let link: string | number | null
      if (rest === '') {
        // The path's last component: done. A followed symlink's: walked, then the path goes on.
        if (stack.length === 0) {
          nd.trailing = slash >= 0
          return 0
        }
        name = stack.pop() as string
        link = this.walkComponent(nd, 0)
      } else {
        name = rest
        link = this.walkComponent(nd, WALK_MORE)
      }
      if (typeof link === 'number') return link
      if (link !== null) {
        stack.push(name)
        name = link
        continue
      }
      if (!(nd.inode instanceof Directory)) return -ENOTDIR
    }
  }

  /**
   * walk_component: step into nd.last. "." stays, ".." goes up (the root is
   * its own parent); a symlink to follow gives its body to walk next (null:
   * nothing more to walk), else nd.inode is what the name holds.
   */
  private walkComponent(nd: Nameidata, flags: number): string | number | null {
    if (nd.type !== LAST_NORM) {
      // follow_dotdot: not above the task's root (nor the file system's, its own parent).
      if (nd.type === LAST_DOTDOT && nd.inode !== nd.root)
        nd.inode = (nd.inode as Directory).parent ?? this.root
      return null
    }
    const dir = nd.inode as Directory
    // A removed directory looks nothing up (__lookup_slow: IS_DEADDIR).
    if (dir.dead) return -ENOENT
    const child = dir.child(nd.last)
    // A name no directory can hold is the file system's lookup's ENAMETOOLONG (simple_lookup).
    if (!child) return nameTooLong(nd.last) ? -ENAMETOOLONG : -ENOENT
    const follow =
      child instanceof Symlink && !((flags & WALK_TRAILING) !== 0 && (nd.flags & LOOKUP_FOLLOW) === 0)
    if (!follow) {
      nd.inode = child
      return null
    }
    // pick_link: MAXSYMLINKS in all; an absolute body starts again from the root.
    if (nd.links++ >= MAXSYMLINKS) return -ELOOP
    let body = (child as Symlink).target
    if (body.startsWith('/')) {
      nd.inode = nd.root
      body = skipSlashes(body)
    }
    return body === '' ? null : body
  }

  /** finish_lookup: step into the last component (a symlink there only with LOOKUP_FOLLOW); as walkComponent. */
  walkLast(nd: Nameidata): string | number | null {
    return this.walkComponent(nd, WALK_TRAILING)
  }

  /**
   * path_lookupat: the whole path. A trailing slash after a name asks for a
   * directory and follows a symlink there (lookup_last). 0 or -errno; nd.inode
   * is what the path names.
   */
  pathLookupat(nd: Nameidata, path: string): number {
    let s = path
    for (;;) {
      const err = this.linkPathWalk(nd, s)
      if (err) return err
      if (nd.type === LAST_NORM && nd.trailing) nd.flags |= LOOKUP_FOLLOW | LOOKUP_DIRECTORY
      const link = this.walkLast(nd)
      if (typeof link === 'number') return link
      if (link === null) break
      s = link
    }
    if ((nd.flags & LOOKUP_DIRECTORY) !== 0 && !(nd.inode instanceof Directory)) return -ENOTDIR
    return 0
  }

  /** The last component of a walk ended by linkPathWalk, looked up without following it (lookup_one_qstr_excl). */
  lookupLast(nd: Nameidata): Inode | undefined | number {
    const dir = nd.inode as Directory
    if (dir.dead) return -ENOENT
    const child = dir.child(nd.last)
    if (!child && nameTooLong(nd.last)) return -ENAMETOOLONG
    return child
  }

  /** The absolute path of a directory (for getcwd). */
  pathOf(dir: Directory): string {
    const parts: string[] = []
    let d = dir
    while (d !== this.root && d.parent) {
      const parent: Directory = d.parent
      const name = [...parent.children.entries()].find(([, n]) => n === d)?.[0]
      if (name === undefined) break
      parts.unshift(name)
      d = parent
    }
    return `/${parts.join('/')}`
  }

  mkdirp(path: string): Directory {
    let dir = this.root
    for (const part of path.split('/').filter((p) => p !== '')) {
      let next = dir.children.get(part)
      if (!next) {
        next = new Directory(dir)
        dir.children.set(part, next)
      }
      if (!(next instanceof Directory)) throw new Error(`${path}: not a directory`)
      dir = next
    }
    return dir
  }

  /** Create (or replace) a regular file with contents; parents are created. */
  writeFile(path: string, data: Uint8Array, mode = 0o755): RegularFile {
    const i = path.lastIndexOf('/')
    const dir = this.mkdirp(path.slice(0, i))
    const f = new RegularFile(data, S_IFREG | mode, this.shmem)
    const old = dir.children.get(path.slice(i + 1))
    dir.children.set(path.slice(i + 1), f)
    if (old instanceof RegularFile) old.unlinked()
    return f
  }

  /**
   * A file the kernel provides until a host tree laid under its directory
   * brings one of the same name, which then replaces it (the kernel's
   * root-only /etc/passwd gives way to the host's).
   */
  writeDefaultFile(path: string, data: Uint8Array, mode = 0o644): RegularFile {
    const f = this.writeFile(path, data, mode)
    hostReplaces.add(f)
    return f
  }

  /**
   * Lay a host directory under the guest directory at path: its entries
   * appear when first looked at, one directory at a time, below what the
   * guest directory already holds (the guest's own entries win; a guest
   * directory of the same name shows the host's entries under its own).
   * Read-only by default; otherwise writes change in-memory copies only.
   */
  mountHost(path: string, host: HostDirectory, options: MountOptions = {}): void {
    // On a directory that is there (symlinks followed, as mount does), it covers what was there.
    const there = this.lookup(path)
    if (typeof there !== 'number' && !(there instanceof Directory))
      throw new Error(`${path}: not a directory`)
    const dir = there instanceof Directory ? there : this.mkdirp(path)
    if (there instanceof Directory && dir !== this.root) dir.reset()
    const readOnly = options.readOnly ?? true
    const hidden = new Set((options.hide ?? []).map((h) => h.replace(/\/+$/, '')))
    dir.readOnly = readOnly
    // The mount point shows the host directory's own attributes, as a mount's root does.
    const top = host.stat('')
    if (top?.type === 'dir') adoptHostStat(dir, top)
    dir.underlay(
      hostEntries(dir, host, '', readOnly, this.shmem, (rel) =>
        hidden.has(`${path.replace(/\/+$/, '')}/${rel}`),
      ),
    )
  }

  unlink(dir: Directory, name: string): number {
    const node = dir.children.get(name)
    if (!node) return -ENOENT
    if (dir.readOnly) return -EROFS
    if (node instanceof Directory) return -EISDIR
    dir.children.delete(name)
    node.nlink--
    if (node instanceof RegularFile) node.unlinked()
    return 0
  }

  rmdir(dir: Directory, name: string): number {
    const node = dir.children.get(name)
    if (!node) return -ENOENT
    if (!(node instanceof Directory)) return -ENOTDIR
    if (dir.readOnly) return -EROFS
    if (node.children.size > 0) return -ENOTEMPTY
    dir.children.delete(name)
    return 0
  }

  mkdir(dir: Directory, name: string, mode = 0o755): number {
    if (dir.children.has(name)) return -EEXIST
    if (dir.readOnly) return -EROFS
    const d = new Directory(dir)
    d.perm = mode & 0o7777
    dir.children.set(name, d)
    return 0
  }
}

/** The filler for a host directory's entries (rel: its path in the host tree). */
function hostEntries(
  dir: Directory,
  host: HostDirectory,
  rel: string,
  readOnly: boolean,
  sb: ShmemSb,
  hidden: (rel: string) => boolean,
): (into: Map<string, Inode>) => void {
  return (into) => {
    for (const name of host.list(rel) ?? []) {
      const p = rel === '' ? name : `${rel}/${name}`
      const st = host.stat(p)
      if (!st) continue
      const mine = into.get(name)
      if (mine && !hostReplaces.has(mine)) {
        // The guest's own directory of that name shows the host's entries under its own, and the
        // host directory's attributes (owner, mode, size, ...): the kernel made it only to hold its own.
        if (mine instanceof Directory && st.type === 'dir' && !hidden(p)) {
          adoptHostStat(mine, st)
          mine.underlay(hostEntries(mine, host, p, readOnly, sb, hidden))
        }
        continue
      }
      into.set(name, hostInode(dir, host, p, st, readOnly, sb, hidden))
      // A kernel default the host's file replaced gives its pages back.
      if (mine instanceof RegularFile) mine.unlinked()
    }
  }
}

function hostInode(
  parent: Directory,
  host: HostDirectory,
  p: string,
  st: HostStat,
  readOnly: boolean,
  sb: ShmemSb,
  hidden: (rel: string) => boolean,
): Inode {
  let node: Directory | Symlink | HostFile
  if (st.type === 'dir') {
    const sub = new Directory(parent)
    sub.readOnly = readOnly
    sub.underlay(hostEntries(sub, host, p, readOnly, sb, hidden))
    node = sub
  } else if (st.type === 'symlink') node = new Symlink(st.target ?? '')
  else node = new HostFile(host, p, st.size, S_IFREG | (st.perm ?? 0o644), readOnly, sb)
  adoptHostStat(node, st)
  return node
}

/**
 * What the host's lstat says, on the inode that shows the entry: owner,
 * link count, size and blocks as the host has them (the inode number stays
 * the kernel's). A copy-up keeps them, as overlayfs keeps the owner.
 */
function adoptHostStat(node: Directory | Symlink | HostFile, st: HostStat): void {
  node.mtime = st.mtime ?? 0
  node.uid = st.uid ?? 0
  node.gid = st.gid ?? 0
  if (st.nlink !== undefined) node.nlink = st.nlink
  node.hostBlocks = st.blocks
  if (node instanceof Directory) {
    node.perm = st.perm ?? 0o755
    node.hostSize = st.size
  }
}

/**
 * A host file: read from the host range by range (pread), never loaded
 * whole, so a huge or sparse host file costs only what the guest reads. In
 * a read-only mount writes are EROFS; otherwise the first write or truncate
 * copies it up into tmpfs pages (charged: ENOSPC when it does not fit) and
 * changes that copy only, never the host's file.
 */
class HostFile extends RegularFile {
  /** Written (copied up): the bytes are the in-memory copy's from then on. */
  private copiedUp = false
  /** The host's st_blocks (none: counted as tmpfs counts them). */
  hostBlocks?: number
  constructor(
    private readonly host: HostDirectory,
    private readonly hostPath: string,
    private readonly hostSize: number,
    mode: number,
    readonly readOnly: boolean,
    sb: ShmemSb,
  ) {
    super(new Uint8Array(0), mode, sb)
  }
  override size(): number {
    return this.copiedUp ? super.size() : this.hostSize
  }
  override blocks(): number {
    if (this.copiedUp) return super.blocks()
    return this.hostBlocks ?? Math.ceil(this.hostSize / SHMEM_PAGE) * 8
  }
  /** Not copied up: the host's bytes are all data. */
  override seekHoleData(start: bigint, data: boolean): bigint | number {
    if (this.copiedUp) return super.seekHoleData(start, data)
    const end = BigInt(this.hostSize)
    if (start >= end) return -6 // ENXIO
    return data ? start : end
  }
  override readAt(pos: number, count: number): Uint8Array {
    if (this.copiedUp) return super.readAt(pos, count)
    return this.hostRead(pos, Math.min(count, this.sb.maxRead))
  }
  override writeAt(pos: number, data: Uint8Array): number {
    const r = this.copyUp(this.hostSize)
    return r < 0 ? r : super.writeAt(pos, data)
  }
  override fallocate(mode: number, offset: number, len: number): number {
    const r = this.copyUp(this.hostSize)
    return r < 0 ? r : super.fallocate(mode, offset, len)
  }
  override truncate(len: number): number {
    // Only what the new length keeps is copied (O_TRUNC of a huge host file copies nothing).
    const r = this.copyUp(Math.max(0, Math.min(len, this.hostSize)))
    return r < 0 ? r : super.truncate(len)
  }
  /** At most count bytes from pos of the host's file (never trusting a longer answer). */
  private hostRead(pos: number, count: number): Uint8Array {
    const n = Math.max(0, Math.min(this.hostSize - pos, count))
    if (n === 0) return new Uint8Array(0)
    const got = this.host.read(this.hostPath, pos, n) ?? new Uint8Array(0)
    return got.length > n ? got.subarray(0, n) : got
  }
  /** Copy the host's first `keep` bytes into tmpfs pages, its holes (zero pages) left holes. 0 or -errno. */
  private copyUp(keep: number): number {
    if (this.readOnly) return -EROFS
    if (this.copiedUp) return 0
    // Refuse before reading anything when it cannot fit.
    if (Math.ceil(keep / SHMEM_PAGE) > this.sb.freeBlocks) {
      this.sb.reclaim()
      if (Math.ceil(keep / SHMEM_PAGE) > this.sb.freeBlocks) return -ENOSPC
    }
    const CHUNK = 256 * SHMEM_PAGE
    let at = 0
    while (at < keep) {
      const want = Math.min(CHUNK, keep - at)
      const got = this.hostRead(at, want)
      for (let o = 0; o < got.length; o += SHMEM_PAGE)
        if (!this.pages.storePage((at + o) / SHMEM_PAGE, got.subarray(o, o + SHMEM_PAGE))) {
          this.pages.clear()
          return -ENOSPC
        }
      at += got.length
      if (got.length < want) break // the host's file is shorter now
    }
    this.copiedUp = true
    this.length = at
    return 0
  }
}
