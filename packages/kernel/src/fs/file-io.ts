// The file layer's host leaves (fs/file.c, fs/read_write.c, fs/open.c):
// fdget/fput for the guest's struct file, and the reads, writes and opens
// that vfs_read / vfs_write / do_filp_open end in for what is not a guest
// pipe. A leaf that must wait answers -EWOULDSLEEP; the guest sleeps and
// calls again.

import { type Cpu, OutOfMemory } from '@probekit/x86-emu'
import { FDPUT_FPUT, HC_FDGET, HC_FILE_OPEN, HC_FILE_READ, HC_FILE_WRITE, HC_FPUT } from '../abi.js'
import { hcArg as arg, hcRet as ret } from '../arch/hypercall.js'
import { EBADF, EPIPE } from '../errno.js'
import type { Kernel } from '../kernel.js'
import type { Task } from '../sched/task.js'
import { SIGPIPE } from '../signal/signals.js'
import { wallSeconds } from '../time/clock.js'
import { O_APPEND, type OpenFile, type WouldBlock } from './files.js'
import { fmodeWrite, writeCheckLimits } from './read-write.js'
import { hostOpen } from './syscalls.js'
import { RegularFile } from './vfs.js'

export class FileIo {
  constructor(private readonly kernel: Kernel) {
    this.registerHypercalls()
  }

  /**
   * The host side of every write (write through HC_FILE_WRITE, writev, sendfile): a regular file's
   * modification time moves; a pipe nobody reads gives -EPIPE and, as pipe_write sends it, SIGPIPE.
   */
  fileWrite(c: Cpu, task: Task, f: OpenFile, data: Uint8Array): number | WouldBlock {
    // generic_write_checks: a regular file's write stops at RLIMIT_FSIZE (after the mode's EBADF).
    if (f.inode instanceof RegularFile && fmodeWrite(f) && data.length > 0) {
      const pos = (f.flags & O_APPEND) !== 0 ? f.inode.size() : f.pos
      const room = writeCheckLimits(this.kernel, c, task, pos, data.length)
      if (room < 0) return room
      data = data.subarray(0, room)
    }
    const r = f.write(data)
    if (r === -EPIPE) this.kernel.signals.sendSignal(c, task, { signo: SIGPIPE, code: 0, pid: task.tgid })
    else if (typeof r === 'number' && r > 0 && f.inode instanceof RegularFile)
      f.inode.mtime = wallSeconds(this.kernel, c.id)
    return r
  }

  /**
   * f's struct file for the guest, made on first use; 0 when no memory is left for it even after
   * the page cache gave back what it could (the guest's fdget then fails, as with no file).
   */
  private guestFace(f: OpenFile): number {
    const k = this.kernel
    try {
      return k.guestFiles.face(f)
    } catch (e) {
      if (!(e instanceof OutOfMemory)) throw e
      if (k.pageCache.shrink() === 0) return 0
      try {
        return k.guestFiles.face(f)
      } catch (again) {
        if (again instanceof OutOfMemory) return 0
        throw again
      }
    }
  }

  private registerHypercalls(): void {
    const k = this.kernel
    const m = k.machine
    m.registerHypercall(HC_FDGET, (c) => {
      const task = k.current(c)
      const f = task.files.get(arg(c, 0) | 0)
      if (!f) return ret(c, 0)
      const face = this.guestFace(f)
      if (face === 0) return ret(c, 0)
      // A table other tasks share: hold a reference while the guest uses the file (fdput drops it).
      if (task.files.users > 1) {
        f.refs++
        return ret(c, face + FDPUT_FPUT)
      }
      ret(c, face)
    })
    m.registerHypercall(HC_FPUT, (c) => {
      k.guestFiles.byAddress(arg(c, 0))?.release()
      ret(c, 0)
    })
    m.registerHypercall(HC_FILE_WRITE, (c) => {
      const task = k.current(c)
      const f = k.guestFiles.byHostId(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = this.fileWrite(c, task, f, k.readKernel(arg(c, 1), arg(c, 2)))
      k.sched.noteWakeups(c)
      ret(c, typeof r === 'number' ? r : k.wait.sleepOn(task, r))
    })
    m.registerHypercall(HC_FILE_READ, (c) => {
      const task = k.current(c)
      const f = k.guestFiles.byHostId(arg(c, 0))
      if (!f) return ret(c, -EBADF)
      const r = f.read(arg(c, 2))
      if (typeof r === 'number') return ret(c, r)
      if (r instanceof Uint8Array) {
        k.writeKernel(arg(c, 1), r)
        k.sched.noteWakeups(c) // a writer waiting for room
        return ret(c, r.length)
      }
      ret(c, k.wait.sleepOn(task, r))
    })
    m.registerHypercall(HC_FILE_OPEN, (c) => {
      const path = k.readKernelString(arg(c, 0))
      ret(
        c,
        k.entry.withContext(c, 0, (ctx) => hostOpen(ctx, path, arg(c, 1) | 0, arg(c, 2), arg(c, 3) | 0)),
      )
    })
  }
}
