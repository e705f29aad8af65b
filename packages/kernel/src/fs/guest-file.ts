// The guest's face of an open file: a struct file in guest memory (f_op,
// f_flags, f_kind, f_host as abi.h lays it out), made the first time the
// guest's fdget asks for a descriptor's file and freed with the open file's
// last reference. f_host is a number the host never reuses, so a guest
// pointer that outlived its file finds nothing rather than another file.

import type { Machine } from '@probekit/x86-emu'
import {
  FILE_F_FLAGS,
  FILE_F_HOST,
  FILE_F_KIND,
  FILE_KIND_HOST,
  FILE_KIND_PIPE,
  FILE_STRUCT_SIZE,
  PAGE_OFFSET,
} from '../abi.js'
import { directMap } from '../guest-image.js'
import type { OpenFile } from './files.js'
import { PipeEnd } from './vfs.js'

export class GuestFiles {
  private readonly byId = new Map<number, OpenFile>()
  private readonly free: number[] = []
  private slab = { frame: -1, used: 4096 }
  private nextId = 1

  constructor(private readonly machine: Machine) {}

  /** The guest struct file of f (made now if it has none). */
  face(f: OpenFile): number {
    if (f.guestFile !== 0) return f.guestFile
    const phys = this.alloc()
    const memory = this.machine.memory
    memory.fill(phys, FILE_STRUCT_SIZE, 0)
    memory.write32(phys + FILE_F_FLAGS, f.flags)
    memory.write32(phys + FILE_F_KIND, f.inode instanceof PipeEnd ? FILE_KIND_PIPE : FILE_KIND_HOST)
    const id = this.nextId++
    memory.write32(phys + FILE_F_HOST, id)
    f.guestFile = directMap(phys)
    this.byId.set(id, f)
    f.onLastRelease = () => {
      this.byId.delete(id)
      this.free.push(phys)
      f.guestFile = 0
    }
    return f.guestFile
  }

  /** The open file behind a struct file's f_host (undefined: it has been closed for good). */
  byHostId(id: number): OpenFile | undefined {
    return this.byId.get(id)
  }

  /** The open file behind a guest struct file pointer. */
  byAddress(addr: number): OpenFile | undefined {
    return this.byId.get(this.machine.memory.read32(addr - PAGE_OFFSET + FILE_F_HOST))
  }

  private alloc(): number {
    const reused = this.free.pop()
    if (reused !== undefined) return reused
    if (this.slab.used + FILE_STRUCT_SIZE > 4096) this.slab = { frame: this.machine.frames.alloc(), used: 0 }
    const phys = this.slab.frame * 4096 + this.slab.used
    this.slab.used += FILE_STRUCT_SIZE
    return phys
  }
}
