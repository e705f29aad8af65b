// Guest physical memory: one ArrayBuffer, addressed by physical address.
//
// Host code (loaders, text_poke, page-table builders) reads and writes it
// here; guest code reaches it through each CPU's MMU. Either way, a write to
// a frame that holds decoded code tells the code cache first, so no CPU runs
// stale instructions (probes are self-modifying code).

export const PAGE_SIZE = 4096
export const PAGE_SHIFT = 12

export type CodeWriteListener = (frame: number) => void

export class PhysicalMemory {
  readonly size: number
  readonly bytes: Uint8Array
  readonly view: DataView
  /** The same bytes as 32-bit words (for isZero). */
  private readonly words: Int32Array
  /** Per frame: non-zero while the code cache holds instructions decoded from it. */
  readonly codeFrames: Uint8Array
  private codeWriteListener: CodeWriteListener | null = null

  constructor(size: number) {
    if (size % PAGE_SIZE !== 0 || size <= 0)
      throw new RangeError(`memory size must be a positive multiple of ${PAGE_SIZE}`)
    if (size > 0x8000_0000) throw new RangeError('physical memory is limited to 2 GiB')
    this.size = size
    this.bytes = new Uint8Array(size)
    this.view = new DataView(this.bytes.buffer)
    this.words = new Int32Array(this.bytes.buffer)
    this.codeFrames = new Uint8Array(size / PAGE_SIZE)
  }

  get frameCount(): number {
    return this.codeFrames.length
  }

  setCodeWriteListener(listener: CodeWriteListener | null): void {
    this.codeWriteListener = listener
  }

  /** Called before any write that may touch [phys, phys+len). */
  noteWrite(phys: number, len: number): void {
    const first = phys >>> PAGE_SHIFT
    const last = (phys + len - 1) >>> PAGE_SHIFT
    for (let f = first; f <= last; f++) {
      if (this.codeFrames[f] !== 0) this.codeWriteListener?.(f)
    }
  }

  check(phys: number, len: number): void {
    if (phys < 0 || phys + len > this.size || !Number.isInteger(phys)) {
      throw new RangeError(`physical access 0x${phys.toString(16)}+${len} outside memory`)
    }
  }

  read8(phys: number): number {
    return this.bytes[phys]
  }
  read16(phys: number): number {
    return this.view.getUint16(phys, true)
  }
  read32(phys: number): number {
    return this.view.getInt32(phys, true)
  }
  /** 64-bit read as a bigint (host convenience; the CPU uses halves). */
  read64(phys: number): bigint {
    return this.view.getBigUint64(phys, true)
  }
  /** Read a 64-bit value whose result must be exact as a linear number (e.g. a canonical pointer). */
  readLinear(phys: number): number {
    return this.view.getInt32(phys + 4, true) * 0x1_0000_0000 + this.view.getUint32(phys, true)
  }

  write8(phys: number, v: number): void {
    this.noteWrite(phys, 1)
    this.bytes[phys] = v
  }
  write16(phys: number, v: number): void {
    this.noteWrite(phys, 2)
    this.view.setUint16(phys, v, true)
  }
  write32(phys: number, v: number): void {
    this.noteWrite(phys, 4)
    this.view.setInt32(phys, v, true)
  }
  write64(phys: number, v: bigint): void {
    this.noteWrite(phys, 8)
    this.view.setBigUint64(phys, BigInt.asUintN(64, v), true)
  }

  readBytes(phys: number, len: number): Uint8Array {
    this.check(phys, len)
    return this.bytes.slice(phys, phys + len)
  }
  writeBytes(phys: number, data: ArrayLike<number>): void {
    this.check(phys, data.length)
    this.noteWrite(phys, data.length)
    this.bytes.set(data, phys)
  }
  /** True when [phys, phys+len) holds only zeros (reading never-written host pages keeps them out of the resident set). */
  isZero(phys: number, len: number): boolean {
    this.check(phys, len)
    const words = this.words
    for (let i = phys >>> 2, end = (phys + len) >>> 2; i < end; i++) if (words[i] !== 0) return false
    return true
  }

  fill(phys: number, len: number, value = 0): void {
    this.check(phys, len)
    this.noteWrite(phys, len)
    this.bytes.fill(value, phys, phys + len)
  }
}
