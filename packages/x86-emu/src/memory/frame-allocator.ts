// Physical frame allocator with reference counts.
//
// Reference counts let the system above share a frame between address
// spaces (a page cache, a copy-on-write fork) and free it with the last user.

import { PAGE_SIZE, type PhysicalMemory } from './physical-memory.js'

export class OutOfMemory extends Error {
  constructor() {
    super('out of physical memory frames')
    this.name = 'OutOfMemory'
  }
}

export class FrameAllocator {
  private readonly refs: Uint32Array
  private readonly free: number[] = []
  private next: number

  /** Frames below firstFrame (default 1: frame 0 stays unused, like a null page) are never handed out. */
  constructor(
    readonly memory: PhysicalMemory,
    firstFrame = 1,
  ) {
    this.refs = new Uint32Array(memory.frameCount)
    this.next = firstFrame
  }

  /** A zeroed frame with reference count 1. */
  alloc(): number {
    const frame = this.free.length > 0 ? this.free.pop()! : this.next < this.refs.length ? this.next++ : -1
    if (frame < 0) throw new OutOfMemory()
    this.refs[frame] = 1
    // Writing zeros would make the host page resident although the guest may never touch it.
    if (!this.memory.isZero(frame * PAGE_SIZE, PAGE_SIZE)) this.memory.fill(frame * PAGE_SIZE, PAGE_SIZE, 0)
    return frame
  }

  /** n physically contiguous zeroed frames (kernel stacks); returns the first. */
  allocContiguous(n: number): number {
    if (this.next + n > this.refs.length) throw new OutOfMemory()
    const first = this.next
    this.next += n
    for (let f = first; f < first + n; f++) this.refs[f] = 1
    if (!this.memory.isZero(first * PAGE_SIZE, n * PAGE_SIZE))
      this.memory.fill(first * PAGE_SIZE, n * PAGE_SIZE, 0)
    return first
  }

  /** Reserve a specific frame (for images loaded at fixed physical addresses). */
  reserve(frame: number): void {
    if (this.refs[frame] !== 0) throw new Error(`frame ${frame} already in use`)
    if (frame >= this.next) {
      for (let f = this.next; f < frame; f++) this.free.push(f)
      this.next = frame + 1
    } else {
      const i = this.free.indexOf(frame)
      if (i < 0) throw new Error(`frame ${frame} is not free`)
      this.free.splice(i, 1)
    }
    this.refs[frame] = 1
  }

  get(frame: number): void {
    if (this.refs[frame] === 0) throw new Error(`frame ${frame} is not allocated`)
    this.refs[frame]++
  }

  /** Drop one reference; the frame is freed with the last. Returns the remaining count. */
  put(frame: number): number {
    if (this.refs[frame] === 0) throw new Error(`frame ${frame} is not allocated`)
    const left = --this.refs[frame]
    if (left === 0) this.free.push(frame)
    return left
  }

  refCount(frame: number): number {
    return this.refs[frame]
  }

  get used(): number {
    let n = 0
    for (let f = 0; f < this.refs.length; f++) if (this.refs[f] !== 0) n++
    return n
  }
}
