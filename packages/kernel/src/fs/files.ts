// Open files and file-descriptor tables. An open file is an inode plus a
// position; reads and writes that must wait say so (WouldBlock): the guest
// then sleeps until ready() holds and asks again.

import { EAGAIN, EBADF, EMFILE, ESPIPE } from '../errno.js'
import type { Inode } from './vfs.js'

/** A call that cannot proceed yet: the task sleeps in the guest until `ready()`, then calls again. */
export interface WouldBlock {
  wouldBlock: true
  ready: () => boolean
  /** What a signal that ends the sleep makes the call return (default ERESTARTSYS, 512). */
  restartCode?: number
  /** Undo what the call queued, when a signal ends the sleep. */
  cancel?: () => void
}

export const O_RDONLY = 0
export const O_WRONLY = 1
export const O_RDWR = 2
export const O_ACCMODE = 3
export const O_CREAT = 0o100
export const O_EXCL = 0o200
export const O_NOCTTY = 0o400
export const O_TRUNC = 0o1000
export const O_APPEND = 0o2000
export const O_NONBLOCK = 0o4000
/** O_DIRECT: on a pipe, packet mode (pipe2). */
export const O_DIRECT = 0o40000
export const O_DIRECTORY = 0o200000
export const O_NOFOLLOW = 0o400000
/** O_PATH: a descriptor that only names the file (*at() base, fstat, fchdir); no reads or writes. */
export const O_PATH = 0o10000000
export const O_CLOEXEC = 0o2000000

export class OpenFile {
  private position = 0
  /** f_pos when it is past 2^53 (an lseek to near 2^63), exactly; null when position is exact. */
  private bigPosition: bigint | null = null
  get pos(): number {
    return this.position
  }
  set pos(v: number) {
    this.position = v
    this.bigPosition = null
  }
  /** f_pos exactly (vfs_setpos). */
  get exactPos(): bigint {
    return this.bigPosition ?? BigInt(this.position)
  }
  set exactPos(v: bigint) {
    this.position = Number(v)
    this.bigPosition = Number.isSafeInteger(this.position) ? null : v
  }
  /** The open made the file (FMODE_CREATED: F_CREATED_QUERY). */
  created = false
  refs = 1
  /** Its guest struct file (0: none made yet), and what frees it with the last reference. */
  guestFile = 0
  onLastRelease: (() => void) | null = null
  constructor(
    readonly inode: Inode,
    public flags: number,
    /** The path it was opened by (for /proc-like listings and messages). */
    readonly path: string,
  ) {
    inode.open?.(this)
  }

  read(count: number): Uint8Array | number | WouldBlock {
    if ((this.flags & O_ACCMODE) === O_WRONLY || (this.flags & O_PATH) !== 0) return -EBADF
    const r = this.inode.read(this, count)
    // O_NONBLOCK: a call that would sleep fails with EAGAIN instead.
    return typeof r === 'object' && 'wouldBlock' in r && (this.flags & O_NONBLOCK) !== 0 ? -EAGAIN : r
  }

  write(data: Uint8Array): number | WouldBlock {
    if ((this.flags & O_ACCMODE) === O_RDONLY || (this.flags & O_PATH) !== 0) return -EBADF
    const r = this.inode.write(this, data)
    return typeof r === 'object' && (this.flags & O_NONBLOCK) !== 0 ? -EAGAIN : r
  }

  seek(offset: number, whence: number): number {
    if (!this.inode.seekable) return -ESPIPE
    const size = this.inode.size()
    const base = whence === 0 ? 0 : whence === 1 ? this.pos : whence === 2 ? size : Number.NaN
    const pos = base + offset
    if (!Number.isFinite(pos) || pos < 0) return -22
    this.pos = pos
    return pos
  }

  release(): void {
    if (--this.refs !== 0) return
    this.inode.close?.(this)
    this.onLastRelease?.()
    this.onLastRelease = null
  }
}

export interface FdEntry {
  file: OpenFile
  cloexec: boolean
}

export class FdTable {
  readonly fds: (FdEntry | undefined)[] = []
  /** Tasks sharing this table (threads, CLONE_FILES): it is closed with the last one. */
  users = 1
  static readonly MAX = 1024

  get(fd: number): OpenFile | undefined {
    return Number.isInteger(fd) && fd >= 0 ? this.fds[fd]?.file : undefined
  }

  /** A descriptor is free (get_unused_fd_flags would not say EMFILE). */
  hasFree(): boolean {
    for (let fd = 0; fd < FdTable.MAX; fd++) if (this.fds[fd] === undefined) return true
    return false
  }

  /** Lowest free descriptor >= min. */
  install(file: OpenFile, cloexec = false, min = 0): number {
    for (let fd = min; fd < FdTable.MAX; fd++) {
      if (this.fds[fd] === undefined) {
        this.fds[fd] = { file, cloexec }
        return fd
      }
    }
    file.release()
    return -EMFILE
  }

  installAt(fd: number, file: OpenFile, cloexec = false): void {
    this.close(fd)
    this.fds[fd] = { file, cloexec }
  }

  close(fd: number): number {
    const e = this.fds[fd]
    if (!e) return -EBADF
    this.fds[fd] = undefined
    e.file.release()
    return 0
  }

  /** fork: the same open files, shared. */
  clone(): FdTable {
    const t = new FdTable()
    this.fds.forEach((e, fd) => {
      if (!e) return
      e.file.refs++
      t.fds[fd] = { ...e }
    })
    return t
  }

  /** execve: close-on-exec descriptors go. */
  closeOnExec(): void {
    this.fds.forEach((e, fd) => {
      if (e?.cloexec) this.close(fd)
    })
  }

  /** A task stops using the table (exit): close everything when it was the last user. */
  release(): void {
    if (--this.users === 0) this.closeAll()
  }

  closeAll(): void {
    this.fds.forEach((_e, fd) => {
      this.close(fd)
    })
  }
}

/** A descriptor argument is a C int: the register's upper half is not part of it (mov $-100, %edi leaves it zero). */
export function fileOf(t: { files: FdTable }, fd: number): OpenFile | number {
  return t.files.get(fd | 0) ?? -EBADF
}
